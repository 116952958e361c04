/**
 * The ACP backend: delegates one prompt turn to an Agent Client Protocol
 * agent process and returns what the parent receives. Spawns the agent with
 * `spawnChild`, drives it with the official SDK's client connection over its
 * stdio (`initialize` with `PROTOCOL_VERSION`, `session/new`,
 * `session/prompt`), answers its permission requests by policy, and observes
 * the same bytes through a `FrameTap` into an `AcpTracker`: output selection,
 * stop reason (including truncation recognised from the agent's error), usage,
 * the agent's failure, tool calls and the permission answers this client
 * gives come from the one tracker the stdio proxy uses, never from a second
 * reading of the SDK's objects.
 *
 * Owns the turn's lifecycle (cancellation, the agent dying, teardown) and the
 * shaping of the result; not the protocol (the SDK), not the rule
 * (`output/`), not telemetry (a `RunListener` passed in receives the run).
 *
 * @module subagent-otel/backend/acp-backend
 */
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type AnyMessage,
  type ContentBlock as AcpPromptBlock,
  type RequestPermissionOutcome,
  type RequestPermissionRequest,
} from '@agentclientprotocol/sdk';
import { randomUUID } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';
import { ACP_AGENT_METHODS, ACP_CLIENT_METHODS, parseAcpNewSessionResult } from '../wire/acp-protocol.js';
import type { SubagentStopReason } from '../output/stop-reason.js';
import { ACP_DEFAULT_AGENT_NAME, ACP_ORIGIN, AcpTracker } from '../observe/acp-tracker.js';
import { FrameTap } from '../observe/frame-tap.js';
import { RunBuilder } from '../observe/run-builder.js';
import type { RunListener, RunRecord, RunStart } from '../observe/run-record.js';
import {
  spawnChild,
  type ChildHandle,
  type DisposeOptions,
  type ExitInfo,
  type SpawnChildOptions,
} from './child-process.js';
import { outcomeOf, type SubagentOutcome } from './outcome.js';
import { errorMessage } from '../wire/error-text.js';

/** `clientInfo` sent in `initialize`. */
export const ACP_CLIENT_INFO = { name: 'subagent-otel', version: '0.1.0' } as const;

/**
 * How the agent's `session/request_permission` requests are answered:
 * `deny` selects a reject option (`reject_once`, else `reject_always`),
 * `allow` an allow option (`allow_once`, else `allow_always`); when no such
 * option is offered the outcome is `cancelled`. A function decides itself;
 * if it throws or rejects, the request is denied. After cancellation every
 * request is answered `cancelled`, as the protocol requires.
 */
export type PermissionPolicy =
  | 'deny'
  | 'allow'
  | ((request: RequestPermissionRequest) => RequestPermissionOutcome | Promise<RequestPermissionOutcome>);

/** Options of {@link runAcpSubagent}. */
export interface AcpSubagentOptions {
  /** The agent program and its arguments. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the agent's scrubbed environment (see `spawnChild`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Working directory of the agent process and of the ACP session (made absolute). Default: the parent's. */
  readonly cwd?: string;
  /** The prompt: a string becomes one text block. */
  readonly prompt: string | readonly AcpPromptBlock[];
  /** Aborting sends `session/cancel`, waits up to `cancelGraceMs` for the turn to end, then tears down. */
  readonly signal?: AbortSignal;
  /** Default `deny`. */
  readonly permissionPolicy?: PermissionPolicy;
  /** Receives the run (start, end, malformed frames). Its exceptions are contained, never propagated. */
  readonly listener?: RunListener;
  /** Label of the run; default the agent's `agentInfo.name`, else `acp`. */
  readonly agentName?: string;
  /** W3C `traceparent` sent as `_meta.traceparent` of `session/prompt`; parents the run. */
  readonly traceparent?: string;
  /** How long a cancelled turn may take to answer. Default 2000 ms. */
  readonly cancelGraceMs?: number;
  /** The agent's stderr; default discarded. */
  readonly stderr?: SpawnChildOptions['stderr'];
  /** Bounds of the teardown steps (stdin EOF, SIGTERM, SIGKILL); see `DisposeOptions`. */
  readonly teardown?: Pick<DisposeOptions, 'eofMs' | 'termMs' | 'killMs'>;
}

/** What one delegated ACP turn produced (the same shape as every backend's). */
export type AcpSubagentOutcome = SubagentOutcome;

/** How long to wait for the rest of the agent's output once it exited. */
const DRAIN_AFTER_EXIT_MS = 1000;

/**
 * Runs one prompt turn on a freshly spawned ACP agent.
 *
 * @returns the outcome, on every path: the agent's stop reason mapped
 *   (`completed`, `max-tokens`, `refusal`, `aborted`, `error`), `aborted`
 *   with the text streamed so far when `signal` fired (also when the agent
 *   did not answer the cancel in time), `error` with a diagnostic when the
 *   agent could not be started, failed `initialize`/`session/new`, answered
 *   the prompt with an error, or exited mid-turn. The agent process is
 *   reaped before it resolves. Never rejects.
 */
export async function runAcpSubagent(options: AcpSubagentOptions): Promise<AcpSubagentOutcome> {
  const run = new AcpRun(options);
  try {
    return await run.drive();
  } catch (error) {
    // Only a defect in this module lands here; the parent still gets a result, and the child is reaped.
    await run.child?.dispose(options.teardown);
    return run.outcome(`internal error in the ACP backend: ${errorMessage(error)}`);
  }
}

/** One delegation: its child, tracker and the record that comes out. */
class AcpRun {
  readonly #options: AcpSubagentOptions;
  readonly #listener: RunListener;
  readonly #tracker: AcpTracker;
  readonly #startTime = Date.now();
  child: ChildHandle | undefined;
  #record: RunRecord | undefined;
  #agentName: string | undefined;
  #sessionId: string | undefined;

  constructor(options: AcpSubagentOptions) {
    this.#options = options;
    const user = options.listener;
    this.#listener = {
      onRunStart: (start) => contain(() => user?.onRunStart(start)),
      onRunEnd: (record) => {
        this.#record ??= record;
        contain(() => user?.onRunEnd(record));
      },
      onMalformed: (origin, error) => contain(() => user?.onMalformed?.(origin, error)),
    };
    this.#agentName = options.agentName;
    this.#tracker = new AcpTracker(this.#listener, {
      ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
      ...(options.traceparent !== undefined ? { traceparent: options.traceparent } : {}),
    });
  }

  async drive(): Promise<AcpSubagentOutcome> {
    const { signal } = this.#options;
    if (signal?.aborted === true) return this.outcome('cancelled before the agent was started', 'aborted');

    const child = spawnChild({
      command: this.#options.command,
      ...(this.#options.args !== undefined ? { args: this.#options.args } : {}),
      ...(this.#options.env !== undefined ? { env: this.#options.env } : {}),
      ...(this.#options.cwd !== undefined ? { cwd: this.#options.cwd } : {}),
      stderr: this.#options.stderr ?? 'ignore',
    });
    this.child = child;
    const tap = new FrameTap(this.#tracker, {
      onRejected: (_direction, kind, message) => this.#listener.onMalformed?.(ACP_ORIGIN, { code: kind, message }),
    });
    const connection = client({ name: ACP_CLIENT_INFO.name })
      .onRequest(methods.client.session.requestPermission, async ({ params }) => ({
        outcome: await decidePermission(
          signal?.aborted === true ? 'cancelled' : (this.#options.permissionPolicy ?? 'deny'),
          params,
        ),
      }))
      .connect(tappedStream(child, tap));
    const agent = connection.agent;

    // An object, not a `let`: the turn below advances it while this function awaits.
    const progress: { phase: 'initialize' | 'session/new' | 'session/prompt' } = { phase: 'initialize' };
    const turn = (async () => {
      const init = await agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { ...ACP_CLIENT_INFO },
      });
      this.#agentName ??= typeof init.agentInfo?.name === 'string' ? init.agentInfo.name : undefined;
      if (init.protocolVersion !== PROTOCOL_VERSION) {
        throw new Error(
          `the agent speaks ACP protocol version ${String(init.protocolVersion)}; this client speaks ${PROTOCOL_VERSION}`,
        );
      }
      progress.phase = 'session/new';
      const created = parseAcpNewSessionResult(
        await agent.request(methods.agent.session.new, { cwd: sessionCwd(this.#options.cwd), mcpServers: [] }),
      );
      if (!created.ok) throw new Error(`malformed session/new response: ${created.error.message}`);
      this.#sessionId = created.value.sessionId;
      if (signal?.aborted === true) throw new Error('cancelled before the prompt was sent');
      progress.phase = 'session/prompt';
      const traceparent = this.#options.traceparent;
      return agent.request(methods.agent.session.prompt, {
        sessionId: created.value.sessionId,
        prompt: promptBlocks(this.#options.prompt),
        ...(traceparent !== undefined ? { _meta: { traceparent } } : {}),
      });
    })();
    const turnEnd = turn.then(
      () => ({ kind: 'answered' as const }),
      (error: unknown) => ({ kind: 'failed' as const, message: errorMessage(error) }),
    );
    const abort = abortPromise(signal);
    const exit = child.exited.then((info) => ({ kind: 'exited' as const, info }));

    let diagnostic: string | undefined;
    let unstartedReason: SubagentStopReason = 'error';
    const first = await Promise.race([turnEnd, abort.promise, exit]);
    if (first.kind === 'aborted') {
      unstartedReason = 'aborted';
      if (progress.phase === 'session/prompt' && this.#sessionId !== undefined) {
        agent.notify(ACP_AGENT_METHODS.sessionCancel, { sessionId: this.#sessionId }).catch(() => undefined); // the connection closed: the exit path below reports it
        const grace = this.#options.cancelGraceMs ?? 2000;
        const settled = await raceWithin([turnEnd, exit.then(() => drainThen(turnEnd))], grace);
        if (settled === undefined) {
          this.#tracker.endOpenRuns('aborted', `the agent did not answer session/cancel within ${grace} ms`);
        } else if (this.#tracker.openRuns > 0) {
          // It exited or broke the connection instead of answering: still the parent's cancellation.
          this.#tracker.endOpenRuns('aborted', await exitDiagnostic(child));
        }
      } else {
        diagnostic = `cancelled during ${progress.phase}`;
      }
    } else if (first.kind === 'exited') {
      await drainThen(turnEnd);
      diagnostic = describeExit(first.info);
    } else if (first.kind === 'failed') {
      diagnostic =
        child.exitInfo !== undefined || connection.signal.aborted
          ? await exitDiagnostic(child)
          : `${progress.phase} failed: ${first.message}`;
    }
    abort.dispose();

    connection.close();
    const exitInfo = await child.dispose(this.#options.teardown);
    if (this.#tracker.openRuns > 0) this.#tracker.close(Date.now(), diagnostic ?? describeExit(exitInfo));
    this.#tracker.close(Date.now());
    return this.outcome(diagnostic ?? describeExit(exitInfo), unstartedReason);
  }

  /**
   * Shapes the outcome from the run's record. When no run was opened (the
   * agent failed before `session/prompt`), records one now through the same
   * builder, with no output and `stopReason`.
   */
  outcome(diagnostic: string, stopReason: SubagentStopReason = 'error'): AcpSubagentOutcome {
    const record = this.#record ?? this.#unstartedRecord(stopReason, diagnostic);
    return outcomeOf(record, { provider: record.agentName, id: record.sessionId ?? '' });
  }

  #unstartedRecord(stopReason: SubagentStopReason, diagnostic: string): RunRecord {
    const traceparent = this.#options.traceparent;
    const start: RunStart = {
      runId: randomUUID(),
      source: 'acp',
      agentName: this.#agentName ?? ACP_DEFAULT_AGENT_NAME,
      ...(this.#sessionId !== undefined ? { sessionId: this.#sessionId } : {}),
      ...(traceparent !== undefined ? { traceparent } : {}),
      startTime: this.#startTime,
    };
    this.#listener.onRunStart(start);
    const record = new RunBuilder(start).finish({ endTime: Date.now(), stopReason, diagnostic });
    this.#listener.onRunEnd(record);
    return record;
  }
}

/**
 * The SDK's message stream over the child's stdio, with both directions'
 * bytes handed to `tap` as they pass (agent output before the SDK sees it,
 * so the tracker has a frame before any SDK promise settles on it).
 * `session/update` notifications are observed but not passed to the SDK
 * connection: nothing in this client consumes them (the tracker does), and
 * the v1 SDK rejects kinds it does not know, such as draft-v2 `state_update`.
 */
function tappedStream(
  child: ChildHandle,
  tap: FrameTap,
): { readable: ReadableStream<AnyMessage>; writable: WritableStream<AnyMessage> } {
  let ended = false;
  const fromAgent = new ReadableStream<Uint8Array>({
    start(controller) {
      const end = (): void => {
        if (ended) return;
        ended = true;
        tap.end('agent->client');
        controller.close();
      };
      child.stdout.on('data', (chunk: Buffer) => {
        if (ended) return;
        tap.push('agent->client', chunk);
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
      child.stdout.on('end', end);
      child.stdout.on('close', end);
    },
    cancel() {
      // The SDK connection closed and stopped reading: no more frames will be observed.
      ended = true;
      child.stdout.destroy();
    },
  });
  const toAgent = new WritableStream<Uint8Array>({
    write(chunk) {
      tap.push('client->agent', chunk);
      return new Promise<void>((resolve) => {
        if (!child.stdin.writable) return resolve();
        // The callback also runs (with an error) when the agent is gone; the exit path reports that.
        child.stdin.write(chunk, () => resolve());
      });
    },
    close() {
      tap.end('client->agent');
      child.stdin.end();
    },
  });
  const stream = ndJsonStream(toAgent, fromAgent);
  const withoutUpdates = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      if ('method' in message && !('id' in message) && message.method === ACP_CLIENT_METHODS.sessionUpdate) return;
      controller.enqueue(message);
    },
  });
  return { readable: stream.readable.pipeThrough(withoutUpdates), writable: stream.writable };
}

/** Answers one permission request by policy. Never rejects. */
async function decidePermission(
  policy: PermissionPolicy | 'cancelled',
  request: RequestPermissionRequest,
): Promise<RequestPermissionOutcome> {
  const pick = (kinds: readonly string[]): RequestPermissionOutcome => {
    for (const kind of kinds) {
      const option = request.options.find((o) => o.kind === kind);
      if (option !== undefined) return { outcome: 'selected', optionId: option.optionId };
    }
    return { outcome: 'cancelled' };
  };
  const deny = (): RequestPermissionOutcome => pick(['reject_once', 'reject_always']);
  if (policy === 'cancelled') return { outcome: 'cancelled' };
  if (policy === 'deny') return deny();
  if (policy === 'allow') return pick(['allow_once', 'allow_always']);
  try {
    return await policy(request);
  } catch {
    // A throwing policy is the caller's bug; the safe answer is the default, deny.
    return deny();
  }
}

function promptBlocks(prompt: string | readonly AcpPromptBlock[]): AcpPromptBlock[] {
  return typeof prompt === 'string' ? [{ type: 'text', text: prompt }] : [...prompt];
}

/** ACP wants an absolute session directory. */
function sessionCwd(cwd: string | undefined): string {
  return resolvePath(cwd ?? process.cwd());
}

/** Calls `fn`, swallowing what it throws: a listener's bug must not break the run or reject the result. */
function contain(fn: () => void): void {
  try {
    fn();
  } catch {
    // Any error from a caller-supplied listener; the run's own result is unaffected by design.
  }
}

function abortPromise(signal: AbortSignal | undefined): { promise: Promise<{ kind: 'aborted' }>; dispose: () => void } {
  if (signal === undefined) return { promise: new Promise(() => undefined), dispose: () => undefined };
  let onAbort: () => void = () => undefined;
  const promise = new Promise<{ kind: 'aborted' }>((resolve) => {
    onAbort = () => resolve({ kind: 'aborted' });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** Settles with the first of `promises`, or `undefined` after `ms`. */
async function raceWithin<T>(promises: readonly Promise<T>[], ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([...promises, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Once the agent exited, its remaining output still flows through the tap; the turn settles when the stream ends. Bounded. */
async function drainThen<T>(turnEnd: Promise<T>): Promise<T | undefined> {
  return raceWithin([turnEnd], DRAIN_AFTER_EXIT_MS);
}

async function exitDiagnostic(child: ChildHandle): Promise<string> {
  const info = child.exitInfo ?? (await raceWithin([child.exited], DRAIN_AFTER_EXIT_MS));
  return info === undefined ? 'the agent closed the connection before the prompt turn finished' : describeExit(info);
}

/** One sentence about how the agent process ended. */
function describeExit(info: ExitInfo): string {
  if (info.error !== undefined)
    return info.code === null && info.signal === null ? `the agent could not be run: ${info.error}` : info.error;
  if (info.signal !== null) return `the agent was ended by ${info.signal} before the prompt turn finished`;
  return `the agent exited with code ${String(info.code)} before the prompt turn finished`;
}
