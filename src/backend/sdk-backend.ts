/**
 * The SDK backend: runs one delegated prompt on a dsh SDK runtime process
 * (spawn, `initialize`, `session/prompt`), observes the runtime's
 * notifications through the same `FrameTap` and `SdkTracker` the proxy uses,
 * and returns the `SubagentResult`, the `subagent/end` payload and the
 * foreground tool result of the run. Spawning, the scrubbed environment and
 * bounded teardown belong to `child-process.ts`.
 *
 * Behaves as upstream's SDK backend (`subagent-dsh-sdk`, docs/decisions
 * 0010 and 0011): the run is the tracker's prompt run (inbox receipt to
 * `session.status idle`), its stop reason upstream's SDK rule; the protocol
 * has no cancel, so an abort settles the result at once as `aborted` with
 * the output folded so far and then disposes the runtime (`shutdown`, stdin
 * EOF, SIGTERM, SIGKILL). After `initialize` succeeded no result carries a
 * diagnostic, as upstream's backend sets none; a runtime that cannot start
 * (where upstream's `start` rejects) gives `error` with the reason as
 * diagnostic.
 *
 * Never rejects: a child that fails to start, crashes, hangs or is cancelled
 * resolves with stop reason `error` or `aborted` and the output folded so far.
 *
 * @module subagent-otel/backend/sdk-backend
 */
import type { ContentBlock } from '../wire/content.js';
import type { JsonRpcFrame } from '../wire/jsonrpc.js';
import { SDK_REQUESTS } from '../wire/sdk-protocol.js';
import type { Direction, FrameObserver } from '../observe/frame-observer.js';
import { FrameTap } from '../observe/frame-tap.js';
import type { RunListener, RunRecord, RunStart } from '../observe/run-record.js';
import { SdkTracker } from '../observe/sdk-tracker.js';
import { spawnChild, type ChildHandle } from './child-process.js';
import { outcomeOf, type SubagentOutcome } from './outcome.js';

/** Options of `runSdkSubagent`. */
export interface SdkSubagentOptions {
  /** The runtime command and its arguments. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the child's scrubbed environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** `initialize` params: the runtime's provider and model (required by the protocol). */
  readonly provider: string;
  readonly model: string;
  readonly maxTokens?: number;
  /** The prompt: text or content blocks. */
  readonly prompt: string | readonly ContentBlock[];
  /** Session id to prompt; default a fresh one. */
  readonly sessionId?: string;
  /** Cancels the run: the result settles as `aborted` with the partial output, then the runtime is disposed. */
  readonly signal?: AbortSignal;
  /** Receives every run observed (the prompt turn and in-runtime subagents), e.g. telemetry. */
  readonly listener?: RunListener;
  /** `gen_ai.agent.name` of the runs. */
  readonly agentName?: string;
  /** W3C trace context parenting the run. */
  readonly traceparent?: string;
  /** Bound on waiting for `initialize`, in ms. Default 10000. */
  readonly initializeTimeoutMs?: number;
  /** Sees every validated frame in both directions, after the tracker (progress display, tests). Must not throw. */
  readonly onFrame?: (direction: Direction, frame: JsonRpcFrame) => void;
  /** Handed each chunk of the runtime's stderr; default: discarded. */
  readonly onStderr?: (chunk: Buffer) => void;
}

let sessionCounter = 0;

/** A minimal JSON-RPC client over the child's stdin, fed responses by the tap. */
class RpcClient {
  #nextId = 1;
  readonly #pending = new Map<number, (frame: JsonRpcFrame & { kind: 'response' }) => void>();
  constructor(
    private readonly child: ChildHandle,
    private readonly tap: FrameTap,
  ) {}

  /** Sends a request; the promise resolves with its response, or `undefined` if `until` settles first. */
  request(
    method: string,
    params: unknown,
    until: Promise<unknown>,
  ): Promise<(JsonRpcFrame & { kind: 'response' }) | undefined> {
    const id = this.#nextId++;
    const answered = new Promise<JsonRpcFrame & { kind: 'response' }>((resolve) => this.#pending.set(id, resolve));
    this.#send({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
    return Promise.race([answered, until.then(() => undefined)]).finally(() => this.#pending.delete(id));
  }

  /** Routes a response frame to its pending request. */
  onResponse(frame: JsonRpcFrame): void {
    if (frame.kind !== 'response' || typeof frame.id !== 'number') return;
    this.#pending.get(frame.id)?.(frame as JsonRpcFrame & { kind: 'response' });
  }

  #send(message: object): void {
    const bytes = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
    this.tap.push('client->agent', bytes);
    this.child.stdin.write(bytes);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Runs one prompt on an SDK runtime process and observes it.
 *
 * @returns the outcome of the prompted turn. Stop reason: the runtime's turn
 *   end mapped (`completed`, `max-tokens`, `aborted`, else `error`); `aborted`
 *   when `signal` fired, even if the runtime had to be killed; `error` with a
 *   diagnostic when the runtime could not start, exited or stopped answering
 *   mid-run. Output: the one rule over what was observed. Never rejects; the
 *   child process is always reaped before the promise resolves.
 */
export async function runSdkSubagent(options: SdkSubagentOptions): Promise<SubagentOutcome> {
  sessionCounter += 1;
  const sessionId = options.sessionId ?? `subagent-${process.pid}-${sessionCounter}`;
  const observed = new PromptedRunObserver(sessionId, options);
  const { tap, tracker } = observed;

  const child = spawnChild({
    command: options.command,
    args: options.args ?? [],
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    stderr: options.onStderr ?? 'ignore',
  });
  const rpc = new RpcClient(child, tap);
  observed.rpc = rpc;
  child.stdout.on('data', (chunk: Buffer) => tap.push('agent->client', chunk));
  const stdoutEnded = new Promise<void>((resolve) => {
    child.stdout.once('end', resolve);
    child.stdout.once('close', resolve);
  });

  const exited = child.exited;
  const aborted = new Promise<void>((resolve) => {
    if (options.signal === undefined) return;
    if (options.signal.aborted) resolve();
    else options.signal.addEventListener('abort', () => resolve(), { once: true });
  });

  const startFailure = await initializeRuntime(observed, child, options, Promise.race([exited, aborted]));
  if (startFailure === undefined) await promptRuntime(observed, sessionId, options.prompt, exited, aborted);

  const exit = await child.dispose({
    graceful: async () => {
      if (child.exitInfo !== undefined) return;
      await rpc.request(SDK_REQUESTS.shutdown, undefined, Promise.race([exited, delay(1000)]));
    },
  });
  await Promise.race([stdoutEnded, delay(500)]);
  tap.end('agent->client');
  tracker.close(Date.now());

  let run = observed.record;
  if (run === undefined) {
    // No run was ever opened (the runtime never started or never got the prompt): still report one.
    const why =
      startFailure ??
      (exit.error !== undefined ? `runtime failed: ${exit.error}` : 'the runtime never started the run');
    const empty = emptyRecord(sessionId, options, observed.cancelled ? 'aborted' : 'error', why);
    observed.listener.onRunStart(empty);
    observed.listener.onRunEnd(empty);
    run = observed.record ?? empty;
  }
  return outcomeOf(run, { provider: run.provider ?? options.provider, id: sessionId });
}

/**
 * The observation of one {@link runSdkSubagent} call: the `SdkTracker` fed
 * by a `FrameTap` (which also routes the runtime's responses to `rpc` and
 * every frame to `options.onFrame`), and a listener that forwards every run
 * to `options.listener` while keeping the prompted run (`sessionId`, source
 * `sdk`) as {@link record}, made `aborted` once {@link cancelled} is set.
 */
class PromptedRunObserver {
  /** Set when the parent cancelled: the prompted run is `aborted` whatever the tracker saw. */
  cancelled = false;
  /** The prompted run, once it ended. */
  record: RunRecord | undefined;
  /** Resolves when {@link record} is set. */
  readonly recorded: Promise<void>;
  readonly listener: RunListener;
  readonly tracker: SdkTracker;
  readonly tap: FrameTap;
  /** The client the runtime's responses go to, once the runtime is spawned. */
  rpc: RpcClient | undefined;

  constructor(sessionId: string, options: SdkSubagentOptions) {
    let onRecord: () => void = () => undefined;
    this.recorded = new Promise<void>((resolve) => (onRecord = resolve));
    const userListener = options.listener;
    // Intercept the prompted run: once cancellation settled locally, the run is `aborted` whatever the observer saw.
    this.listener = {
      onRunStart: (start: RunStart) => userListener?.onRunStart(start),
      onRunEnd: (r: RunRecord) => {
        let final = r;
        if (r.sessionId === sessionId && r.source === 'sdk' && this.record === undefined) {
          if (this.cancelled) final = { ...r, stopReason: 'aborted' };
          this.record = final;
          onRecord();
        }
        userListener?.onRunEnd(final);
      },
      onMalformed: (origin, error) => userListener?.onMalformed?.(origin, error),
    };
    const tracker = new SdkTracker(this.listener, {
      ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
      ...(options.traceparent !== undefined ? { traceparent: options.traceparent } : {}),
    });
    this.tracker = tracker;
    const observer: FrameObserver = {
      observeFrame: (direction: Direction, frame: JsonRpcFrame, time: number) => {
        tracker.observeFrame(direction, frame, time);
        if (direction === 'agent->client') this.rpc?.onResponse(frame);
        options.onFrame?.(direction, frame);
      },
      close: (time, diagnostic) => tracker.close(time, diagnostic),
    };
    this.tap = new FrameTap(observer, {
      onRejected: (direction, kind, message) =>
        this.listener.onMalformed?.(`sdk ${direction}`, { code: kind, message }),
    });
  }
}

/**
 * Sends `initialize` and waits for its answer until `stop` (the runtime's
 * exit or the parent's abort) or `options.initializeTimeoutMs`.
 *
 * @returns why the run cannot start (upstream's `start` rejects with it;
 *   here it becomes the result's diagnostic): cancelled before the prompt
 *   (then `observed.cancelled` is set), no answer, or an error answer;
 *   `undefined` when the runtime is ready for the prompt.
 */
async function initializeRuntime(
  observed: PromptedRunObserver,
  child: ChildHandle,
  options: SdkSubagentOptions,
  stop: Promise<unknown>,
): Promise<string | undefined> {
  const init = await observed.rpc?.request(
    SDK_REQUESTS.initialize,
    {
      cwd: options.cwd ?? process.cwd(),
      provider: options.provider,
      model: options.model,
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    },
    Promise.race([stop, delay(options.initializeTimeoutMs ?? 10_000)]),
  );
  if (options.signal?.aborted === true) {
    observed.cancelled = true;
    return 'cancelled by the parent before the prompt was sent';
  }
  if (init === undefined)
    return child.exitInfo !== undefined
      ? 'the runtime exited before answering initialize'
      : 'the runtime did not answer initialize';
  if (init.error !== undefined) return `initialize failed: ${init.error.message}`;
  return undefined;
}

/**
 * Sends the prompt and waits until the prompted run is recorded, the parent
 * aborts or the runtime exits. On an abort before the run ended, settles it
 * locally as `aborted` with the output so far (the protocol has no cancel).
 */
async function promptRuntime(
  observed: PromptedRunObserver,
  sessionId: string,
  prompt: SdkSubagentOptions['prompt'],
  exited: Promise<unknown>,
  aborted: Promise<void>,
): Promise<void> {
  const blocks: readonly ContentBlock[] = typeof prompt === 'string' ? [{ type: 'text', text: prompt }] : prompt;
  // The answer only acknowledges queueing; the run ends when the tracker closes it (idle), the runtime exits, or the parent aborts.
  void observed.rpc?.request(SDK_REQUESTS.prompt, { sessionId, contentBlocks: blocks }, exited);
  const first = await Promise.race([
    observed.recorded.then(() => 'recorded' as const),
    aborted.then(() => 'aborted' as const),
    exited.then(() => 'exited' as const),
  ]);
  if (first === 'aborted' && observed.record === undefined) {
    // No wire-level cancel exists: settle locally with the output so far, then dispose the runtime.
    observed.cancelled = true;
    observed.tracker.close(Date.now());
  }
}

function emptyRecord(
  sessionId: string,
  options: SdkSubagentOptions,
  stopReason: string,
  diagnostic: string,
): RunRecord {
  const now = Date.now();
  return {
    runId: `${sessionId}-unstarted`,
    source: 'sdk',
    agentName: options.agentName ?? options.provider,
    provider: options.provider,
    model: options.model,
    sessionId,
    startTime: now,
    endTime: now,
    stopReason,
    diagnostic,
    output: undefined,
    outputSource: 'none',
    emptyMessages: 0,
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      reported: false,
    },
    steps: [],
    toolCalls: [],
  };
}
