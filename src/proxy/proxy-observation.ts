/**
 * The observing half of `subagent-otel proxy`: the diagnostics log, the
 * content-policy warnings, the configuration check, telemetry, the protocol
 * tracker, the frame tap and the optional capture file, built together and
 * torn down in order. Loaded (one dynamic `import()`) after the child was
 * spawned, so the agent never waits for the telemetry libraries to load
 * (decision 0039). The ACP tracker (and the ACP
 * vocabulary's schemas) load only once a conversation turns out to be ACP
 * (decision 0033): the proxy of a dsh runtime never compiles them.
 *
 * @module subagent-otel/proxy/proxy-observation
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { diag } from '@opentelemetry/api';
import { randomBytes } from 'node:crypto';
import { captureHeaderLine, captureRecordLine } from '../wire/capture.js';
import type { Direction, FrameObserver } from '../observe/frame-observer.js';
import { FrameTap } from '../observe/frame-tap.js';
import { ProtocolSniffer } from '../observe/protocol-sniffer.js';
import type { RunListener } from '../observe/run-record.js';
import type { JsonRpcFrame } from '../wire/jsonrpc.js';
import { SdkTracker } from '../observe/sdk-tracker.js';
import { configurationProblems } from '../telemetry/config-problems.js';
import { resolveContentPolicyWithWarnings } from '../telemetry/content-policy.js';
import { createTelemetryFromPlan, planTelemetry, type TelemetryShutdownReport } from '../telemetry/setup.js';
import type { Protocol, TelemetryFlags } from '../cli/options.js';
import type { AgentTelemetry } from './agent-telemetry.js';
import { flushBoundMs, installDiagnostics, telemetryOptions } from '../cli/telemetry-options.js';
import { errorMessage } from '../wire/error-text.js';

/**
 * What `subagent-otel proxy` was asked to run and how to observe it: the
 * options its entry of the command table (`cli/commands/proxy-command`)
 * parses. Declared here, by the machinery that takes them, so that the
 * command imports the proxy and never the other way round.
 */
export interface ProxyCommand extends TelemetryFlags {
  readonly name: 'proxy';
  /** `--protocol`: spoken on stdio; `auto` decides from the first frames. */
  readonly protocol: Protocol;
  /** `--capture <file>`: also record the observed lines as NDJSON. */
  readonly capture?: string;
  /** `--agent-telemetry`: receive the agent's own OpenTelemetry (docs/AGENTS.md); absent: the agent's environment is untouched. */
  readonly agentTelemetry?: true;
  /** The agent's command (after `--`), and its arguments verbatim. */
  readonly command: string;
  readonly args: readonly string[];
}

/** Bytes the capture file may have waiting to be written before lines are left out of it. */
export const CAPTURE_BACKLOG_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Bound on flushing telemetry after the child exited, in ms
 * (`SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS`). The parent sees the proxy exit only
 * after this flush, and the OTLP exporter retries an unreachable collector
 * until its bound, so it is kept short: a healthy collector answers in
 * milliseconds; what a dead one would have received is counted as dropped.
 */
export const DEFAULT_PROXY_FLUSH_MS = 2000;

/**
 * A tracker whose module is still loading: frames and a `close` that arrive
 * meanwhile are held, in order, and handed over once it is there. `settled`
 * resolves when that happened (or the load failed, which is reported through
 * diag; frames are then not observed). Never throws, never rejects.
 */
class LoadingObserver implements FrameObserver {
  #target: FrameObserver | undefined;
  #held: Array<[Direction, JsonRpcFrame, number]> = [];
  #closed: { time: number; diagnostic?: string } | undefined;
  readonly settled: Promise<void>;

  constructor(load: Promise<FrameObserver>) {
    this.settled = load
      .then((target) => {
        this.#target = target;
        const held = this.#held;
        this.#held = [];
        for (const [direction, frame, time] of held) target.observeFrame(direction, frame, time);
        if (this.#closed !== undefined) target.close(this.#closed.time, this.#closed.diagnostic);
      })
      .catch((err: unknown) => {
        this.#held = [];
        diag.error(
          `subagent-otel: the protocol tracker failed to load or to take its first frames: ${errorMessage(err)}`,
        );
      });
  }

  observeFrame(direction: Direction, frame: JsonRpcFrame, time: number): void {
    if (this.#target !== undefined) return this.#target.observeFrame(direction, frame, time);
    this.#held.push([direction, frame, time]);
  }

  close(time: number, diagnostic?: string): void {
    if (this.#target !== undefined) return this.#target.close(time, diagnostic);
    this.#closed ??= { time, ...(diagnostic !== undefined ? { diagnostic } : {}) };
  }
}

/** A protocol observer and a promise that resolves once every tracker it chose has loaded and taken its frames. */
export interface ProtocolObservation {
  readonly observer: FrameObserver;
  /** Resolves once no tracker module is loading any more; await it after `close` and before flushing telemetry. Never rejects. */
  settled(): Promise<void>;
}

/**
 * Builds the tracker for a protocol choice; `auto` decides from the first
 * frames. The SDK tracker is built at once; the ACP tracker's module is
 * imported when ACP is chosen, its frames held meanwhile (`settled`).
 */
export function protocolObserver(
  protocol: ProxyCommand['protocol'],
  listener: RunListener,
  options: { agentName?: string; traceparent?: string; tracestate?: string },
): ProtocolObservation {
  const base = {
    ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
    ...(options.traceparent !== undefined ? { traceparent: options.traceparent } : {}),
  };
  const loading: Array<Promise<void>> = [];
  const factories = {
    sdk: (): FrameObserver =>
      new SdkTracker(listener, {
        ...base,
        ...(options.tracestate !== undefined ? { tracestate: options.tracestate } : {}),
      }),
    acp: (): FrameObserver => {
      const observer = new LoadingObserver(
        import('../observe/acp-tracker.js').then(({ AcpTracker }) => new AcpTracker(listener, base)),
      );
      loading.push(observer.settled);
      return observer;
    },
  };
  return {
    observer: protocol === 'auto' ? new ProtocolSniffer(factories) : factories[protocol](),
    settled: async () => {
      // A tracker may be chosen while an earlier one settles (a close chooses the fallback): wait until none is left.
      for (let done = 0; done < loading.length; done += 1) await loading[done];
    },
  };
}

/** A running observation: feed it the forwarded chunks, then `finish` it once. */
export interface ProxyObservation {
  push(direction: Direction, chunk: Uint8Array, time?: number): void;
  /**
   * A direction ended. The end of the client's side (the agent's input) is
   * the end of the conversation coming: with `--agent-telemetry` no run
   * waits more than `END_OF_INPUT_WAIT_MS` from then, and what ended is
   * exported now (`flush`).
   */
  end(direction: Direction): void;
  /**
   * The proxy was signalled: every run that ended is passed on now with
   * what is known (no wait for the agent's records any more), and exported
   * (`flush`). Runs still open are closed by `finish`. Idempotent; never
   * throws.
   */
  hurry(): void;
  /** Exports what telemetry holds now, within the proxy's flush bound, without ending anything. Never rejects. */
  flush(): Promise<void>;
  /** Writes a line to the proxy's diagnostics log (`SUBAGENT_OTEL_LOG_FILE`; nowhere when unset). */
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /**
   * The problems of the telemetry configuration (`configurationProblems`),
   * checked beside the running agent; empty when there are none or the check
   * itself failed (that is logged). Never rejects.
   */
  readonly configurationProblems: Promise<readonly string[]>;
  /**
   * Ends both directions, closes open runs with `diagnostic`, lets the
   * agent's last records in (`--agent-telemetry`, bounded) and passes every
   * held run on, ends the capture, flushes telemetry within its bound. @returns the flush report, and the capture file's
   * failure when it had one. Never rejects.
   */
  finish(diagnostic: string): Promise<{ readonly telemetry: TelemetryShutdownReport; readonly captureError?: string }>;
}

/** Options of `observeConversation`. */
export interface ConversationOptions {
  readonly protocol: ProxyCommand['protocol'];
  readonly agentName?: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
  /** Receives every observed line (capture). */
  readonly onLine?: (direction: Direction, line: Uint8Array, time: number) => void;
}

/**
 * The observing pipeline of one stdio conversation: a protocol tracker
 * reporting to `listener`, behind a `FrameTap` whose rejected lines are
 * reported to the same listener. Shared by the proxy command and the demo.
 */
export function observeConversation(
  listener: RunListener,
  options: ConversationOptions,
): { tap: FrameTap; observer: FrameObserver; settled: () => Promise<void> } {
  const { observer, settled } = protocolObserver(options.protocol, listener, {
    ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
    ...(options.traceparent !== undefined && options.traceparent !== '' ? { traceparent: options.traceparent } : {}),
    ...(options.tracestate !== undefined && options.tracestate !== '' ? { tracestate: options.tracestate } : {}),
  });
  const tap = new FrameTap(observer, {
    onRejected: (direction: Direction, kind, message) =>
      listener.onMalformed?.(`proxy ${direction}`, { code: kind, message }),
    ...(options.onLine !== undefined ? { onLine: options.onLine } : {}),
  });
  return { tap, observer, settled };
}

/**
 * Starts the observation of a proxy command: routes the diagnostics to the
 * log file, writes one line on `io.stderr` per privacy setting that was not
 * understood, starts the configuration check, builds telemetry and the
 * tracker. Never throws for exporter problems (they are reported through diag).
 */
export function startProxyObservation(
  cmd: ProxyCommand,
  io: { env: NodeJS.ProcessEnv; stderr: NodeJS.WritableStream },
  agentTelemetry?: AgentTelemetry,
): ProxyObservation {
  const { env } = io;
  installDiagnostics('proxy', env);
  const options = telemetryOptions(cmd, env);
  // Privacy settings fail closed; the proxy's diag logger goes only to its log file, so say it where a user looks.
  for (const warning of resolveContentPolicyWithWarnings(options.content, env).warnings) {
    io.stderr.write(`subagent-otel proxy: warning: ${warning}\n`);
  }
  // Started first: its file-system calls run while the pipelines are built.
  // One plan for the check, the pipelines and the agent's forwarding: each planning warning is logged once.
  const plan = planTelemetry(options);
  const problems = configurationProblems(options, plan, cmd.capture).catch((error: unknown) => {
    diag.error(`subagent-otel: configuration check failed: ${errorMessage(error)}`);
    return [];
  });
  const telemetry = createTelemetryFromPlan(options, plan);
  let capture: WriteStream | undefined;
  let captureSkipped = 0;
  let captureError: string | undefined;
  const captureId = randomBytes(6).toString('hex');
  if (cmd.capture !== undefined) {
    const file = cmd.capture;
    // Appended, never truncated: an existing capture (or another proxy's, sharing the file) is kept.
    capture = createWriteStream(file, { flags: 'a' });
    capture.on('error', (err) => {
      captureError ??= `capture file ${file} failed: ${err.message}`;
      diag.error(`subagent-otel: capture file ${file} failed: ${err.message}; capture stopped`);
    });
    capture.write(`${captureHeaderLine(cmd.protocol, Date.now(), captureId)}\n`);
  }
  // With --agent-telemetry, runs pass through the join (completed from the agent's own reports) first.
  const listener = agentTelemetry !== undefined ? agentTelemetry.attach(telemetry.runs, options, plan) : telemetry.runs;
  const { tap, observer, settled } = observeConversation(listener, {
    protocol: cmd.protocol,
    ...(cmd.agentName !== undefined ? { agentName: cmd.agentName } : {}),
    ...(env.TRACEPARENT !== undefined ? { traceparent: env.TRACEPARENT } : {}),
    ...(env.TRACESTATE !== undefined ? { tracestate: env.TRACESTATE } : {}),
    ...(capture !== undefined
      ? {
          onLine: (direction: Direction, line: Uint8Array, time: number) => {
            if (capture?.writable !== true) return;
            // Forwarding never waits for the capture: past the bound, lines are left out of it and that is said once.
            if (capture.writableLength > CAPTURE_BACKLOG_LIMIT_BYTES) {
              captureSkipped += 1;
              if (captureSkipped === 1)
                diag.warn(
                  `subagent-otel: capture file ${cmd.capture ?? ''} cannot keep up; lines are left out of it while more than ${CAPTURE_BACKLOG_LIMIT_BYTES} bytes wait`,
                );
              return;
            }
            capture.write(`${captureRecordLine(direction === 'client->agent' ? 'c' : 'a', time, line, captureId)}\n`);
          },
        }
      : {}),
  });

  const flush = async (): Promise<void> => {
    if (!(await telemetry.flush(flushBoundMs(env, DEFAULT_PROXY_FLUSH_MS))))
      diag.warn('subagent-otel: exporting what had ended did not finish within the flush bound; it is retried at exit');
  };
  let inputEnded = false;
  let hurried = false;
  let finishing = false;
  return {
    push: (direction, chunk, time) => tap.push(direction, chunk, time),
    end: (direction) => {
      tap.end(direction);
      if (direction !== 'client->agent' || inputEnded || finishing) return;
      inputEnded = true;
      agentTelemetry?.inputEnded();
      void flush();
    },
    hurry: () => {
      if (hurried) return;
      hurried = true;
      const released = agentTelemetry?.stopWaiting() ?? 0;
      diag.info(
        `subagent-otel: signalled; ${released} run(s) that waited for the agent's records passed on now, exporting what ended`,
      );
      void flush();
    },
    flush,
    log: (level, message) =>
      level === 'info' ? diag.info(message) : level === 'warn' ? diag.warn(message) : diag.error(message),
    configurationProblems: problems,
    async finish(diagnostic) {
      finishing = true;
      // The bridge ended both directions when it saw them end; a tap told twice does nothing more.
      tap.end('agent->client');
      tap.end('client->agent');
      try {
        observer.close(Date.now(), diagnostic);
      } catch (err) {
        diag.error(`subagent-otel: closing runs failed: ${errorMessage(err)}`);
      }
      await settled();
      // The exited agent's last records come in (bounded), every held run is passed on, then the receiver closes.
      if (agentTelemetry !== undefined) await agentTelemetry.finish();
      if (capture !== undefined) {
        const file = capture;
        await new Promise<void>((resolve) => file.end(() => resolve()));
        if (captureSkipped > 0)
          diag.warn(`subagent-otel: ${captureSkipped} lines were left out of the capture file ${cmd.capture ?? ''}`);
      }
      const report = await telemetry.shutdown(flushBoundMs(env, DEFAULT_PROXY_FLUSH_MS));
      return captureError !== undefined ? { telemetry: report, captureError } : { telemetry: report };
    },
  };
}
