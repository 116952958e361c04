/**
 * `subagent-otel proxy`: wires the stdio bridge to the frame tap, the
 * protocol tracker, the optional capture file and telemetry, then reports how
 * the child ended. Owns the order of shutdown: the child's exit first, then
 * closing open runs, then the capture, then a bounded telemetry flush.
 *
 * @module subagent-otel/cli/commands/proxy
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { captureHeaderLine, captureRecordLine } from '../../wire/capture.js';
import { AcpTracker } from '../../observe/acp-tracker.js';
import type { Direction, FrameObserver } from '../../observe/frame-observer.js';
import { FrameTap } from '../../observe/frame-tap.js';
import { ProtocolSniffer } from '../../observe/protocol-sniffer.js';
import type { RunListener } from '../../observe/run-record.js';
import { SdkTracker } from '../../observe/sdk-tracker.js';
import { createTelemetry } from '../../telemetry/setup.js';
import type { Command } from '../args.js';
import { runStdioProxy, type ProxyExit } from '../stdio-proxy.js';
import { installDiagnostics, telemetryOptions } from '../telemetry-options.js';
import { diag } from '@opentelemetry/api';

export type ProxyCommand = Extract<Command, { name: 'proxy' }>;

/** Bound on flushing telemetry after the child exited, in ms (`SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS`). */
export const DEFAULT_PROXY_FLUSH_MS = 5000;

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

function describeExit(exit: ProxyExit): string {
  if (exit.spawnError !== undefined) return `the agent could not be started (${exit.spawnError})`;
  return exit.signal !== null ? `the agent was killed by ${exit.signal}` : `the agent exited with code ${String(exit.code)}`;
}

/**
 * Runs the proxy until the child exits and telemetry is flushed.
 * @returns the child's exit. Prints nothing on stdout; on stderr only when the
 *   command could not be started (the child's stderr is otherwise untouched).
 */
export async function runProxy(cmd: ProxyCommand, io: { env: NodeJS.ProcessEnv; stderr: NodeJS.WritableStream }): Promise<ProxyExit> {
  installDiagnostics('proxy', io.env);
  const telemetry = createTelemetry(telemetryOptions(cmd, io.env));
  const listener = telemetry.runs;
  const traceparent = io.env.TRACEPARENT;
  const tracestate = io.env.TRACESTATE;
  const observer = protocolObserver(cmd.protocol, listener, {
    ...(cmd.agentName !== undefined ? { agentName: cmd.agentName } : {}),
    ...(traceparent !== undefined && traceparent !== '' ? { traceparent } : {}),
    ...(tracestate !== undefined && tracestate !== '' ? { tracestate } : {}),
  });

  let capture: WriteStream | undefined;
  if (cmd.capture !== undefined) {
    capture = createWriteStream(cmd.capture, { flags: 'w' });
    capture.on('error', (err) => diag.error(`subagent-otel: capture file ${cmd.capture ?? ''} failed: ${err.message}; capture stopped`));
    capture.write(`${captureHeaderLine(cmd.protocol, Date.now())}\n`);
  }
  const tap = new FrameTap(observer, {
    onRejected: (direction: Direction, kind, message) => listener.onMalformed(`proxy ${direction}`, { code: kind, message }),
    ...(capture !== undefined
      ? {
          onLine: (direction: Direction, line: Uint8Array, time: number) => {
            if (capture?.writable === true) capture.write(`${captureRecordLine(direction === 'client->agent' ? 'c' : 'a', time, line)}\n`);
          },
        }
      : {}),
  });

  let observerErrors = 0;
  const exit = await runStdioProxy({
    command: cmd.command,
    args: cmd.args,
    env: io.env,
    onChunk: (direction, chunk) => tap.push(direction, chunk),
    onEnd: (direction) => tap.end(direction),
    onObserverError: (err) => {
      observerErrors += 1;
      if (observerErrors === 1) diag.error(`subagent-otel: observation failed, forwarding continues: ${err instanceof Error ? err.message : String(err)}`);
    },
  });
  if (exit.spawnError !== undefined) io.stderr.write(`subagent-otel proxy: cannot start '${cmd.command}': ${exit.spawnError}\n`);
  try {
    tap.end('agent->client');
    tap.end('client->agent');
    observer.close(Date.now(), describeExit(exit));
  } catch (err) {
    diag.error(`subagent-otel: closing runs failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (capture !== undefined) {
    const file = capture;
    await new Promise<void>((resolve) => file.end(() => resolve()));
  }
  const flushMs = Number(io.env.SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS ?? DEFAULT_PROXY_FLUSH_MS);
  await telemetry.shutdown(Number.isFinite(flushMs) && flushMs > 0 ? flushMs : DEFAULT_PROXY_FLUSH_MS);
  return exit;
}
