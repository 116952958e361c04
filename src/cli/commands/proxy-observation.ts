/**
 * The observing half of `subagent-otel proxy`: telemetry, the protocol
 * tracker, the frame tap and the optional capture file, built together and
 * torn down in order. Loaded after the child was spawned, so the agent never
 * waits for the telemetry libraries to load.
 *
 * @module subagent-otel/cli/commands/proxy-observation
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { diag } from '@opentelemetry/api';
import { randomBytes } from 'node:crypto';
import { captureHeaderLine, captureRecordLine } from '../../wire/capture.js';
import { AcpTracker } from '../../observe/acp-tracker.js';
import type { Direction, FrameObserver } from '../../observe/frame-observer.js';
import { FrameTap } from '../../observe/frame-tap.js';
import { ProtocolSniffer } from '../../observe/protocol-sniffer.js';
import type { RunListener } from '../../observe/run-record.js';
import { SdkTracker } from '../../observe/sdk-tracker.js';
import { createTelemetry, type TelemetryShutdownReport } from '../../telemetry/setup.js';
import type { Command } from '../args.js';
import { flushBoundMs, telemetryOptions } from '../telemetry-options.js';

export type ProxyCommand = Extract<Command, { name: 'proxy' }>;

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

/** Builds the tracker for a protocol choice; `auto` decides from the first frames. */
export function protocolObserver(
  protocol: ProxyCommand['protocol'],
  listener: RunListener,
  options: { agentName?: string; traceparent?: string; tracestate?: string },
): FrameObserver {
  const base = {
    ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
    ...(options.traceparent !== undefined ? { traceparent: options.traceparent } : {}),
  };
  const factories = {
    sdk: () => new SdkTracker(listener, { ...base, ...(options.tracestate !== undefined ? { tracestate: options.tracestate } : {}) }),
    acp: () => new AcpTracker(listener, base),
  };
  return protocol === 'auto' ? new ProtocolSniffer(factories) : factories[protocol]();
}

/** A running observation: feed it the forwarded chunks, then `finish` it once. */
export interface ProxyObservation {
  push(direction: Direction, chunk: Uint8Array, time?: number): void;
  end(direction: Direction): void;
  /**
   * Closes open runs with `diagnostic`, ends the capture, flushes telemetry
   * within its bound. @returns the flush report, and the capture file's
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
export function observeConversation(listener: RunListener, options: ConversationOptions): { tap: FrameTap; observer: FrameObserver } {
  const observer = protocolObserver(options.protocol, listener, {
    ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
    ...(options.traceparent !== undefined && options.traceparent !== '' ? { traceparent: options.traceparent } : {}),
    ...(options.tracestate !== undefined && options.tracestate !== '' ? { tracestate: options.tracestate } : {}),
  });
  const tap = new FrameTap(observer, {
    onRejected: (direction: Direction, kind, message) => listener.onMalformed?.(`proxy ${direction}`, { code: kind, message }),
    ...(options.onLine !== undefined ? { onLine: options.onLine } : {}),
  });
  return { tap, observer };
}

/** Starts telemetry and the tracker for a proxy command. Never throws for exporter problems (they are reported through diag). */
export function startProxyObservation(cmd: ProxyCommand, env: NodeJS.ProcessEnv): ProxyObservation {
  const telemetry = createTelemetry(telemetryOptions(cmd, env));
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
  const { tap, observer } = observeConversation(telemetry.runs, {
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
              if (captureSkipped === 1) diag.warn(`subagent-otel: capture file ${cmd.capture ?? ''} cannot keep up; lines are left out of it while more than ${CAPTURE_BACKLOG_LIMIT_BYTES} bytes wait`);
              return;
            }
            capture.write(`${captureRecordLine(direction === 'client->agent' ? 'c' : 'a', time, line, captureId)}\n`);
          },
        }
      : {}),
  });

  return {
    push: (direction, chunk, time) => tap.push(direction, chunk, time),
    end: (direction) => tap.end(direction),
    async finish(diagnostic) {
      try {
        observer.close(Date.now(), diagnostic);
      } catch (err) {
        diag.error(`subagent-otel: closing runs failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (capture !== undefined) {
        const file = capture;
        await new Promise<void>((resolve) => file.end(() => resolve()));
        if (captureSkipped > 0) diag.warn(`subagent-otel: ${captureSkipped} lines were left out of the capture file ${cmd.capture ?? ''}`);
      }
      const report = await telemetry.shutdown(flushBoundMs(env, DEFAULT_PROXY_FLUSH_MS));
      return captureError !== undefined ? { telemetry: report, captureError } : { telemetry: report };
    },
  };
}
