/**
 * What `view` reads, from the paths it is given: OTLP JSON traces files
 * (a file, or a directory holding `traces.jsonl`), and agents' transcript
 * folders (any other directory), which are replayed in process, through
 * the same replay and telemetry pipeline as `replay --out`, into a
 * temporary directory whose `traces.jsonl` is then read like any other.
 * Owns telling the paths apart and the in-process replay; nothing is
 * written anywhere but that temporary directory, removed by `dispose`.
 *
 * @module subagent-otel/view/sources
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { replayPaths, type ReplayProblem, type ReplayProgress } from '../replay/replay.js';
import { createTelemetry } from '../telemetry/setup.js';
import { TRACES_FILE_NAME } from '../telemetry/otlp-json-file-exporter.js';
import { exportBackpressure } from '../cli/telemetry-options.js';
import { UsageError } from '../cli/errors.js';

/** The paths sorted by kind. */
export interface ViewSources {
  /** OTLP JSON traces files, absolute. */
  readonly otlpFiles: readonly string[];
  /** Directories of transcripts to replay, absolute. */
  readonly transcriptDirs: readonly string[];
}

/**
 * Sorts `paths` (default: `defaultDir`) into OTLP files and transcript folders.
 * @throws UsageError naming a path that does not exist, or the default
 *   directory without a traces file (saying how to make one).
 */
export async function resolveSources(paths: readonly string[], defaultDir: string): Promise<ViewSources> {
  const otlpFiles: string[] = [];
  const transcriptDirs: string[] = [];
  if (paths.length === 0) {
    const file = join(resolve(defaultDir), TRACES_FILE_NAME);
    if (!(await isFile(file))) {
      throw new UsageError(
        `no runs to show: ${file} does not exist; run 'subagent-otel demo' (or replay, proxy, watch) first, or give files or agents' folders, e.g. subagent-otel view ~/.claude/projects`,
      );
    }
    return { otlpFiles: [file], transcriptDirs };
  }
  for (const path of paths) {
    const absolute = resolve(path);
    let info;
    try {
      info = await stat(absolute);
    } catch {
      throw new UsageError(`${path} does not exist`);
    }
    if (info.isFile()) otlpFiles.push(absolute);
    else if (info.isDirectory()) {
      const traces = join(absolute, TRACES_FILE_NAME);
      if (await isFile(traces)) otlpFiles.push(traces);
      else transcriptDirs.push(absolute);
    } else throw new UsageError(`${path} is neither a file nor a directory`);
  }
  return { otlpFiles, transcriptDirs };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** A temporary directory for the replayed telemetry; `dispose` removes it (at any time, also during a replay). */
export interface ReplayDirectory {
  readonly dir: string;
  /** The traces file a replay into it writes. */
  readonly tracesFile: string;
  dispose(): Promise<void>;
}

export async function makeReplayDirectory(): Promise<ReplayDirectory> {
  const dir = await mkdtemp(join(tmpdir(), 'subagent-otel-view-'));
  return { dir, tracesFile: join(dir, TRACES_FILE_NAME), dispose: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Replays `dirs` in process into `into` with the content policy of `env`
 * (only the OpenTelemetry content settings are read from it: no exporter,
 * endpoint or file setting applies here).
 * @returns the runs replayed and the problems reported.
 */
export async function replayTranscripts(
  dirs: readonly string[],
  into: ReplayDirectory,
  env: NodeJS.ProcessEnv,
  onProgress: (progress: ReplayProgress) => void,
  onProblem: (problem: ReplayProblem) => void,
): Promise<{ runs: number; problems: number }> {
  const content: NodeJS.ProcessEnv = {};
  for (const key of ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT']) {
    if (env[key] !== undefined) content[key] = env[key];
  }
  const telemetry = createTelemetry({ env: content, out: into.dir });
  const summary = await replayPaths(dirs, telemetry.runs, {
    onProgress,
    onProblem,
    backpressure: exportBackpressure(telemetry.tracerProvider),
  });
  await telemetry.shutdown(60_000);
  return { runs: summary.runs, problems: summary.problems };
}
