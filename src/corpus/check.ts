/**
 * One corpus check: runs the built `subagent-otel replay` over the folders
 * as a separate process (`--json --out <tmp>`), reads back its summary and
 * the spans it wrote, reads the same files with the check's own readers,
 * and evaluates the invariants. The CLI is the shipped bundle, so what is
 * checked is what users run.
 *
 * @module subagent-otel/corpus/check
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeCodeExpectations } from './claude-code.js';
import { codexExpectations } from './codex.js';
import type { ExpectedRun, SniffedFile } from './facts.js';
import { geminiCliExpectations } from './gemini-cli.js';
import { evaluate, type CorpusReport, type ReplayFileSummary } from './invariants.js';
import { arr, listFiles, obj, readTranscriptFile, str, type ReadFile } from './records.js';
import { sniff } from './sniff.js';
import { readSpans } from './spans.js';

/** The built CLI next to this module in `dist/`. */
export const DEFAULT_CLI = fileURLToPath(new URL('../cli/subagent-otel.js', import.meta.url));

/** Environment variables that would send replay's telemetry elsewhere, cap or drop its content. */
const CLEARED_ENV =
  /^(OTEL_EXPORTER_OTLP_|OTEL_TRACES_EXPORTER$|OTEL_METRICS_EXPORTER$|OTEL_LOGS_EXPORTER$|OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT$|OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT$|OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT$|SUBAGENT_OTEL_)/;

export interface CheckOptions {
  /** The CLI to run (default {@link DEFAULT_CLI}). */
  readonly cli?: string;
}

export interface CheckResult extends CorpusReport {
  readonly paths: readonly string[];
  readonly files: number;
  readonly runs: number;
  /** Replay's own exit code (1 when it reported problems, which are not violations by themselves). */
  readonly replayExitCode: number;
}

/** Raised when replay itself could not run or wrote no summary: the check cannot say anything. */
export class CheckError extends Error {}

function runReplay(
  cli: string,
  paths: readonly string[],
  outDir: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!CLEARED_ENV.test(k)) env[k] = v;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cli, 'replay', '--json', '--no-progress', '--out', outDir, ...paths], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', fail);
    child.once('close', (code) =>
      done({
        code: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

/** Replays `paths` and checks the invariants. @throws CheckError when replay cannot run or its summary is unreadable. */
export async function checkCorpus(paths: readonly string[], options: CheckOptions = {}): Promise<CheckResult> {
  const absolute = paths.map((p) => resolve(p));
  const outDir = mkdtempSync(join(tmpdir(), 'subagent-otel-corpus-'));
  try {
    const replay = await runReplay(options.cli ?? DEFAULT_CLI, absolute, outDir);
    if (replay.code !== 0 && replay.code !== 1)
      throw new CheckError(`replay exited with ${replay.code}:\n${replay.stderr.trim()}`);
    let summary: unknown;
    try {
      summary = JSON.parse(replay.stdout);
    } catch (error) {
      throw new CheckError(
        `replay's --json summary is not JSON (${error instanceof Error ? error.message : String(error)}); stderr:\n${replay.stderr.trim()}`,
      );
    }
    const replayFiles: ReplayFileSummary[] = arr(obj(summary)?.['files']).flatMap((f) => {
      const o = obj(f);
      const path = str(o?.['path']);
      return path === undefined || o === undefined
        ? []
        : [
            {
              path,
              isSkipped: o['isSkipped'] === true,
              ...(str(o['format']) !== undefined ? { format: str(o['format']) as string } : {}),
            },
          ];
    });
    const spans = readSpans(join(outDir, 'traces.jsonl'));
    const files: ReadFile[] = listFiles(absolute, [outDir]).map(readTranscriptFile);
    const sniffed: SniffedFile[] = files.map(sniff);
    const of = (format: string): ReadFile[] => files.filter((_, i) => sniffed[i]?.format === format);
    const expected: ExpectedRun[] = [
      ...claudeCodeExpectations(of('claude-code')),
      ...codexExpectations(of('codex')),
      ...geminiCliExpectations(of('gemini-cli')),
    ];
    return {
      paths: absolute,
      files: files.length,
      runs: spans.runs.length,
      replayExitCode: replay.code,
      ...evaluate(sniffed, expected, replayFiles, spans),
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
