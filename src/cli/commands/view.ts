/**
 * `subagent-otel view`: sorts its paths into OTLP traces files and
 * transcript folders (`view/sources`), refuses a file that is not OTLP
 * before listening, listens (127.0.0.1 and a free port unless told),
 * prints the URL, then loads: replays the transcript folders in process
 * (progress on stderr and on the page) and indexes every traces file once
 * (`view/run-index`). Serves until the signal aborts. Owns presentation,
 * the order of those steps and the exit code.
 *
 * @module subagent-otel/cli/commands/view
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ViewCommand } from './view-command.js';
import { ExitError } from '../errors.js';
import { SETTINGS } from '../../telemetry/config.js';
import { RunIndex } from '../../view/run-index.js';
import { checkTracesFile, NotOtlpTracesError, readTracesFile } from '../../view/otlp-lines.js';
import { makeReplayDirectory, replayTranscripts, resolveSources, type ReplayDirectory } from '../../view/sources.js';
import { isLoopback, listen, ListenError, viewHandler, type PageAssets, type ViewState } from '../../view/server.js';
import type { ReplayProgress } from '../../replay/replay.js';
import { formatProblem } from '../summary.js';
import { errorMessage } from '../../wire/error-text.js';

export type { ViewCommand };

export interface ViewIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: NodeJS.ProcessEnv;
  /** Stops the server when aborted. */
  readonly signal: AbortSignal;
}

/** The page's bundle, built by `npm run build` into `dist/view/page/` (same relative path from this module's tsc output and from a CLI chunk). */
const ASSET_DIR = new URL('../../view/page/', import.meta.url);

async function loadAssets(): Promise<PageAssets> {
  try {
    const [script, style] = await Promise.all([
      readFile(new URL('page.js', ASSET_DIR)),
      readFile(new URL('page.css', ASSET_DIR)),
    ]);
    return { script, style };
  } catch (error) {
    throw new ExitError(
      `the page's files are missing from ${fileURLToPath(ASSET_DIR)} (${errorMessage(error)}); run 'npm run build'`,
      70,
    );
  }
}

function progressText(progress: ReplayProgress): string {
  const share = progress.bytesTotal > 0 ? Math.floor((100 * progress.bytesDone) / progress.bytesTotal) : 100;
  return `replaying transcripts: ${progress.filesDone}/${progress.filesTotal} files, ${share}%`;
}

/**
 * Runs the command until `io.signal` aborts.
 * @returns 0 after a stop by signal. Throws UsageError (exit 2) for a
 *   missing path, a file that is not OTLP JSON traces, or an address that
 *   cannot be listened on.
 */
export async function runView(cmd: ViewCommand, io: ViewIo): Promise<number> {
  const defaultDir = io.env[SETTINGS.out.env]?.trim() || SETTINGS.out.default;
  const sources = await resolveSources(cmd.paths, defaultDir);
  try {
    for (const file of sources.otlpFiles) await checkTracesFile(file);
  } catch (error) {
    if (error instanceof NotOtlpTracesError) throw new ExitError(`view: ${error.message}`, 2);
    throw error;
  }
  const assets = await loadAssets();
  const host = cmd.host ?? '127.0.0.1';
  const index = new RunIndex();
  const state: ViewState = {
    index,
    summary: {
      state: 'loading',
      progress: 'starting',
      sources: [...sources.otlpFiles, ...sources.transcriptDirs],
      skippedLines: 0,
    },
  };
  let served;
  try {
    served = await listen(viewHandler(state, assets, isLoopback(host)), host, cmd.port ?? 0);
  } catch (error) {
    if (error instanceof ListenError) throw new ExitError(`view: ${error.message}`, 2);
    throw error;
  }
  const { server, url } = served;
  io.stdout.write(`subagent-otel view: ${url}\n`);
  if (!isLoopback(host))
    io.stderr.write(
      `subagent-otel view: listening on ${host}: anyone who can reach this address can read these runs\n`,
    );

  let replayDir: ReplayDirectory | undefined;
  const stopped = new Promise<void>((resolve) => {
    if (io.signal.aborted) resolve();
    else io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const load = async (): Promise<void> => {
    const files = [...sources.otlpFiles];
    if (sources.transcriptDirs.length > 0) {
      let lastPrinted = -1;
      replayDir = await makeReplayDirectory();
      const replayed = await replayTranscripts(
        sources.transcriptDirs,
        replayDir,
        io.env,
        (progress) => {
          state.summary = { ...state.summary, progress: progressText(progress) };
          const tenth = progress.bytesTotal > 0 ? Math.floor((10 * progress.bytesDone) / progress.bytesTotal) : 10;
          if (tenth !== lastPrinted) {
            lastPrinted = tenth;
            io.stderr.write(`subagent-otel view: ${progressText(progress)}\n`);
          }
        },
        (problem) => io.stderr.write(`subagent-otel view: ${formatProblem(problem)}\n`),
      );
      io.stderr.write(`subagent-otel view: replayed ${replayed.runs} runs from ${sources.transcriptDirs.join(', ')}\n`);
      files.push(replayDir.tracesFile);
    }
    let skipped = 0;
    for (const [i, path] of files.entries()) {
      state.summary = { ...state.summary, progress: `indexing ${i + 1}/${files.length}: ${path}` };
      const file = index.addFile(path);
      let report;
      try {
        report = await readTracesFile(path, (line) => index.addLine(file, line));
      } catch (error) {
        // The temporary traces file of an empty replay does not exist: nothing to index.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' && path === replayDir?.tracesFile) continue;
        throw error;
      }
      skipped += report.skipped;
      if (report.skipped > 0)
        io.stderr.write(
          `subagent-otel view: ${path}: ${report.skipped} line(s) skipped, not OTLP JSON traces (first: ${report.firstProblem ?? '?'})\n`,
        );
    }
    const { progress: _done, ...rest } = state.summary;
    state.summary = { ...rest, state: 'ready', skippedLines: skipped };
    io.stderr.write(`subagent-otel view: ${index.runCount} runs ready\n`);
  };
  const loaded = load().catch((error: unknown) => {
    const message = errorMessage(error);
    state.summary = { ...state.summary, state: 'failed', error: message };
    io.stderr.write(`subagent-otel view: loading failed: ${message}\n`);
  });
  await stopped;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  // A stop while loading does not wait for the replay: its temporary directory goes with the process.
  if (state.summary.state !== 'loading') await loaded;
  await replayDir?.dispose();
  return 0;
}
