/**
 * Coding agents' transcripts read on several cores: a pool of worker
 * threads, each reading whole sessions (a session's files stay together, so
 * subagents still nest under their parent), and the main thread passing
 * each session's outcome on in the order a one-thread read would have
 * (`readTranscripts`): runs, problems, progress and results are the same
 * whatever the number of threads; only when they happen differs.
 *
 * Memory: at most {@link SESSIONS_PER_WORKER} session per worker and a window
 * of {@link WINDOW_PER_WORKER} `x size` sessions between the one being passed on and the
 * last one sent, so a slow exporter (backpressure) or one long session holds
 * a bounded number of finished sessions, whatever the history's size.
 *
 * Failures: a worker that dies (an uncaught error, out of memory) has the
 * session it was reading reported as `transcript-failed`, its other queued
 * sessions sent again, and is replaced. A worker that dies before it is
 * ready (its module cannot load) sends the pool back to reading in this
 * thread: no session is lost for want of a worker.
 *
 * @module subagent-otel/replay/transcript-pool
 */
import { Worker } from 'node:worker_threads';
import type { TranscriptFile, TranscriptFileResult, TranscriptReadContext } from '../transcripts/format.js';
import { failedTranscriptFiles, transcriptJobs } from '../transcripts/transcript-jobs.js';
import { readTranscripts, withCost } from '../transcripts/transcripts.js';
import { passOnSessionEvents, readSessionJob, type SessionJobOutcome, type SessionJobRequest } from './session-job.js';

/**
 * Sessions sent to one worker before it answers. One: a session goes to the
 * first worker that is free, so a long session does not hold a short one
 * behind it while the other worker idles (with 2, 150 MB on 2 cores took
 * 1.72-1.83 s; with 1 and a wider window 1.45-1.47 s; decision 0131).
 */
export const SESSIONS_PER_WORKER = 1;

/** Sessions read ahead of the one being passed on, per worker: finished sessions held in memory at most. */
export const WINDOW_PER_WORKER = 4;

/**
 * Each worker's young generation, MiB. V8's default (tens of MiB per
 * isolate, sized for a main thread) made two workers add about 110 MiB to
 * the peak RSS of a 300 MB replay; at 4 the workers' heaps stay near their
 * live size (peak 249 -> 196 MiB, user CPU within 3%: decision 0131).
 */
export const WORKER_YOUNG_GENERATION_MB = 4;

/** Options of {@link readTranscriptsInParallel}. */
export interface TranscriptPoolOptions {
  /** Worker threads at most (fewer when there are fewer sessions; under 2 of either: read in this thread). */
  readonly threads: number;
  /** The worker's module. Default: `replay-worker.js` beside this module (tsc and bundle layouts alike). */
  readonly workerUrl?: URL;
}

/** A session's outcome, or why its worker could not give one. */
type Answer = SessionJobOutcome | { readonly index: number; readonly crash: string };

/**
 * {@link readTranscripts} on worker threads: same runs (priced by `withCost`
 * here), problems, progress and results, in the same order.
 *
 * @returns one result per file, in the order a one-thread read gives them.
 *   Never rejects.
 */
export async function readTranscriptsInParallel(
  files: readonly TranscriptFile[],
  context: TranscriptReadContext,
  options: TranscriptPoolOptions,
): Promise<TranscriptFileResult[]> {
  const jobs = transcriptJobs(files);
  const sessions = jobs.filter((job) => job.kind === 'session').length;
  // One session gains nothing from a worker (and starting one costs a module load).
  if (Math.min(options.threads, sessions) < 2) return readTranscripts(files, context);
  const priced: TranscriptReadContext = { ...context, listener: withCost(context.listener) };
  const pool = new SessionPool(
    Math.min(options.threads, sessions),
    options.workerUrl ?? new URL('./replay-worker.js', import.meta.url),
  );
  const window = WINDOW_PER_WORKER * pool.size;
  const results: TranscriptFileResult[] = [];
  let sent = 0;
  try {
    for (const [index, job] of jobs.entries()) {
      for (; sent < jobs.length && sent <= index + window; sent += 1) {
        const next = jobs[sent];
        if (next?.kind !== 'session') continue;
        pool.submit({
          index: sent,
          format: next.format.name,
          session: next.session,
          ...(context.agentName !== undefined ? { agentName: context.agentName } : {}),
        });
      }
      if (job.kind === 'failed') {
        results.push(...failedTranscriptFiles(job.format.name, job.files, job.error, context.onProblem));
        continue;
      }
      const answer = await pool.answer(index);
      if ('crash' in answer)
        results.push(...failedTranscriptFiles(job.format.name, job.session.files, answer.crash, context.onProblem));
      else results.push(...(await passOnSessionEvents(answer, priced)));
    }
  } finally {
    await pool.close();
  }
  return results;
}

/** One worker and the sessions sent to it, oldest (the one being read) first. */
interface PoolWorker {
  readonly worker: Worker;
  readonly queue: SessionJobRequest[];
  isReady: boolean;
  error?: unknown;
}

/** The worker threads, the sessions waiting for one, and the answers not yet taken. */
class SessionPool {
  readonly size: number;
  readonly #url: URL;
  readonly #workers: PoolWorker[] = [];
  readonly #waiting: SessionJobRequest[] = [];
  readonly #answers = new Map<number, Answer>();
  readonly #takers = new Map<number, (answer: Answer) => void>();
  #inProcess = false;
  #isClosing = false;

  constructor(size: number, url: URL) {
    this.size = size;
    this.#url = url;
  }

  /** Queues a session; it is sent to a worker as soon as one has room. */
  submit(request: SessionJobRequest): void {
    this.#waiting.push(request);
    this.#pump();
  }

  /** The answer for session `index` (submitted before), when it comes. Never rejects. */
  answer(index: number): Promise<Answer> {
    const ready = this.#answers.get(index);
    if (ready !== undefined) {
      this.#answers.delete(index);
      return Promise.resolve(ready);
    }
    return new Promise((resolve) => this.#takers.set(index, resolve));
  }

  /** Ends every worker. Never rejects. */
  async close(): Promise<void> {
    this.#isClosing = true;
    await Promise.all(this.#workers.map((entry) => entry.worker.terminate().catch(() => 0)));
  }

  #settle(answer: Answer): void {
    const taker = this.#takers.get(answer.index);
    if (taker === undefined) this.#answers.set(answer.index, answer);
    else {
      this.#takers.delete(answer.index);
      taker(answer);
    }
  }

  /** Sends waiting sessions to the least busy workers with room, starting workers up to `size`. */
  #pump(): void {
    while (this.#waiting.length > 0) {
      if (this.#inProcess) {
        const request = this.#waiting.shift() as SessionJobRequest;
        void readSessionJob(request).then((outcome) => this.#settle(outcome));
        continue;
      }
      if (this.#workers.length < this.size) this.#workers.push(this.#start());
      const target = this.#workers.reduce((best, entry) => (entry.queue.length < best.queue.length ? entry : best));
      if (target.queue.length >= SESSIONS_PER_WORKER) return;
      const request = this.#waiting.shift() as SessionJobRequest;
      target.queue.push(request);
      target.worker.postMessage(request);
    }
  }

  #start(): PoolWorker {
    const worker = new Worker(this.#url, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    const entry: PoolWorker = { worker, queue: [], isReady: false };
    worker.on('message', (message: SessionJobOutcome | { readonly ready: true }) => {
      if ('ready' in message) {
        entry.isReady = true;
        return;
      }
      entry.queue.shift();
      this.#settle(message);
      this.#pump();
    });
    worker.on('error', (error) => {
      entry.error = error;
    });
    worker.on('exit', (code) => this.#onExit(entry, code));
    return entry;
  }

  /**
   * A worker ended while the pool is open: the session it was reading fails
   * (unless it never became ready: then the pool reads in this thread from
   * now on), the others it held go back to the front of the queue.
   */
  #onExit(entry: PoolWorker, code: number): void {
    if (this.#isClosing) return;
    this.#workers.splice(this.#workers.indexOf(entry), 1);
    const [reading, ...rest] = entry.queue;
    this.#waiting.unshift(...rest);
    if (!entry.isReady) {
      this.#inProcess = true;
      if (reading !== undefined) this.#waiting.unshift(reading);
    } else if (reading !== undefined) {
      const why = entry.error !== undefined ? String(entry.error) : `its worker thread exited with code ${code}`;
      this.#settle({ index: reading.index, crash: why });
    }
    this.#pump();
  }
}
