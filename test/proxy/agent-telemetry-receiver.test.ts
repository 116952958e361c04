/**
 * The loopback receiver of `proxy --agent-telemetry` over real HTTP: takes
 * OTLP/HTTP JSON (plain and gzip) on the three export paths from a sender
 * with its token, refuses requests without it (nothing handed over), protobuf,
 * other paths, non-JSON and bodies that are no export request, counting each
 * refusal.
 */
import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startAgentTelemetryReceiver,
  TOKEN_HEADER,
  type AgentTelemetryReceiver,
} from '../../src/proxy/agent-telemetry-receiver.js';
import type { OtlpJsonRequest } from '../../src/wire/otlp-json.js';

const LOGS = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gemini-cli' } }] },
      scopeLogs: [
        {
          scope: { name: 'gemini-cli' },
          logRecords: [
            {
              timeUnixNano: '1796160959693000000',
              attributes: [{ key: 'event.name', value: { stringValue: 'gemini_cli.api_response' } }],
            },
          ],
        },
      ],
    },
  ],
};

let receiver: AgentTelemetryReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** The token header as the agent sends it, from the receiver's `OTEL_EXPORTER_OTLP_HEADERS` value. */
function tokenHeader(): Record<string, string> {
  const [name, value] = receiver!.otlpHeaders.split('=');
  return { [name!]: value! };
}

/** POSTs with the receiver's token unless `withToken` is false. */
async function post(
  path: string,
  body: string | Buffer,
  headers: Record<string, string>,
  withToken = true,
): Promise<number> {
  const res = await fetch(`${receiver!.origin}${path}`, {
    method: 'POST',
    headers: withToken ? { ...tokenHeader(), ...headers } : headers,
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the agent telemetry receiver', () => {
  it('listens on loopback and takes JSON export requests, plain and gzip, handing each over validated', async () => {
    const taken: OtlpJsonRequest[] = [];
    receiver = await startAgentTelemetryReceiver((request) => taken.push(request));
    expect(receiver.origin).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
    expect(await post('/v1/logs', JSON.stringify(LOGS), { 'content-type': 'application/json' })).toBe(200);
    expect(
      await post('/v1/logs', gzipSync(JSON.stringify(LOGS)), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      }),
    ).toBe(200);
    expect(await post('/v1/metrics', '{"resourceMetrics":[]}', { 'content-type': 'application/json' })).toBe(200);
    expect(taken.map((r) => r.signal)).toEqual(['logs', 'logs', 'metrics']);
    expect(receiver.stats.taken).toEqual({ traces: 0, logs: 2, metrics: 1 });
    expect(receiver.stats.refused).toBe(0);
  });

  it('gives each receiver its own token header for the agent', async () => {
    receiver = await startAgentTelemetryReceiver(() => undefined);
    const first = receiver.otlpHeaders;
    await receiver.close();
    receiver = await startAgentTelemetryReceiver(() => undefined);
    expect(first).toMatch(new RegExp(`^${TOKEN_HEADER}=[0-9a-f]{64}$`));
    expect(receiver.otlpHeaders).toMatch(new RegExp(`^${TOKEN_HEADER}=[0-9a-f]{64}$`));
    expect(receiver.otlpHeaders).not.toBe(first);
  });

  it.each([
    ['no token', {}],
    ['another token', { [TOKEN_HEADER]: '0'.repeat(64) }],
    ['a prefix of the token', 'prefix'],
    ['the token as a bearer authorization', 'bearer'],
  ] as const)('refuses a valid export request with %s (401), hands nothing over, and counts it', async (_name, how) => {
    const taken: OtlpJsonRequest[] = [];
    receiver = await startAgentTelemetryReceiver((request) => taken.push(request));
    const token = receiver.otlpHeaders.split('=')[1]!;
    const headers: Record<string, string> =
      how === 'prefix'
        ? { [TOKEN_HEADER]: token.slice(0, 63) }
        : how === 'bearer'
          ? { authorization: `Bearer ${token}` }
          : { ...how };
    expect(
      await post('/v1/logs', JSON.stringify(LOGS), { 'content-type': 'application/json', ...headers }, false),
    ).toBe(401);
    expect(
      await post('/v1/traces', '{"resourceSpans":[]}', { 'content-type': 'application/json', ...headers }, false),
    ).toBe(401);
    expect(taken).toEqual([]);
    expect(receiver.stats.taken).toEqual({ traces: 0, logs: 0, metrics: 0 });
    expect(receiver.stats.refused).toBe(2);
    expect(receiver.stats.unauthorized).toBe(2);
    expect(receiver.stats.firstRefusal).toContain(TOKEN_HEADER);
    // The agent's own request still goes through.
    expect(await post('/v1/logs', JSON.stringify(LOGS), { 'content-type': 'application/json' })).toBe(200);
    expect(taken.map((r) => r.signal)).toEqual(['logs']);
  });

  it.each([
    [
      'protobuf',
      '/v1/traces',
      Buffer.from([0x0a, 0x00]),
      { 'content-type': 'application/x-protobuf' },
      415,
      'OTLP/HTTP JSON',
    ],
    ['another path', '/v1/other', '{}', { 'content-type': 'application/json' }, 404, 'not an OTLP/HTTP export path'],
    ['a body that is not JSON', '/v1/traces', '{', { 'content-type': 'application/json' }, 400, 'not JSON'],
    [
      'a span without ids',
      '/v1/traces',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x"}]}]}]}',
      { 'content-type': 'application/json' },
      400,
      'traceId',
    ],
  ])('refuses %s and counts it', async (_name, path, body, headers, status, cause) => {
    const taken: OtlpJsonRequest[] = [];
    receiver = await startAgentTelemetryReceiver((request) => taken.push(request));
    expect(await post(path, body, headers)).toBe(status);
    expect(taken).toEqual([]);
    expect(receiver.stats.refused).toBe(1);
    expect(receiver.stats.unauthorized).toBe(0);
    expect(receiver.stats.firstRefusal).toContain(cause);
  });

  it('is idle only once no connection is open and every request was handed over', async () => {
    const taken: OtlpJsonRequest[] = [];
    receiver = await startAgentTelemetryReceiver((r) => taken.push(r));
    await receiver.idle();
    const url = new URL(`${receiver.origin}/v1/logs`);
    // One kept-alive connection, as an agent's exporter holds it between exports.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            headers: { ...tokenHeader(), 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            res.once('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.once('error', reject);
        req.end(JSON.stringify(LOGS));
      });
    expect(await send()).toBe(200);
    let idle = false;
    const becameIdle = receiver.idle().then(() => {
      idle = true;
    });
    // A second export over the same open connection: the receiver was not idle in between.
    expect(await send()).toBe(200);
    expect(idle).toBe(false);
    agent.destroy();
    await becameIdle;
    expect(taken.map((r) => r.signal)).toEqual(['logs', 'logs']);
  });
});
