/**
 * The built `subagent-otel view` without a browser: the clear errors (a
 * port in use, a file that is not OTLP, nothing to show), and the server's
 * read-only, same-host, locked-down answers over a traces file written here
 * (one `invoke_agent` span, as `telemetry/run-telemetry.ts` exports it).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finished, runCli, spawnCli, waitForLine } from '../../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'view-command-'));
const traces = join(dir, 'traces.jsonl');
writeFileSync(
  traces,
  `${JSON.stringify({
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              {
                traceId: 'ab'.repeat(16),
                spanId: 'cd'.repeat(8),
                name: 'invoke_agent coder',
                startTimeUnixNano: '1764000000000000000',
                endTimeUnixNano: '1764000002000000000',
                attributes: [
                  { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
                  { key: 'gen_ai.agent.name', value: { stringValue: 'coder' } },
                  { key: 'subagent.stop_reason', value: { stringValue: 'max-tokens' } },
                ],
              },
            ],
          },
        ],
      },
    ],
  })}\n`,
);

function http(
  url: string,
  method: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const blockers: Server[] = [];
afterAll(() => {
  for (const b of blockers) b.close();
});

describe('subagent-otel view', () => {
  it('says a port is in use and how to choose another, exit code 2', async () => {
    const blocker = createServer();
    blockers.push(blocker);
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const r = await runCli(['view', '--port', String(port), dir]);
    expect(r.code).toBe(2);
    expect(r.stderr.toString()).toBe(
      `subagent-otel: view: port ${port} on 127.0.0.1 is in use: give another with --port <port>, or leave --port out for a free one\n`,
    );
  });

  it('refuses a file that is not OTLP JSON traces by name, exit code 2', async () => {
    const metrics = join(dir, 'metrics.jsonl');
    writeFileSync(metrics, `${JSON.stringify({ resourceMetrics: [] })}\n`);
    const r = await runCli(['view', metrics]);
    expect(r.code).toBe(2);
    expect(r.stderr.toString()).toContain(
      `${metrics} is not an OTLP JSON traces file: line 1 is an OTLP metrics request, not traces`,
    );
  });

  it('says what to run first when the default directory has no traces', async () => {
    const r = await runCli(['view'], '', { SUBAGENT_OTEL_OUT: join(dir, 'nothing-here') });
    expect(r.code).toBe(2);
    expect(r.stderr.toString()).toContain(
      `no runs to show: ${join(dir, 'nothing-here', 'traces.jsonl')} does not exist; run 'subagent-otel demo'`,
    );
  });

  it('serves the runs read-only on 127.0.0.1, to its own host name only, under a strict content security policy', async () => {
    const child = spawnCli(['view', dir]);
    child.stderr.resume();
    const line = await waitForLine(child, (l) => l.startsWith('subagent-otel view: http://127.0.0.1:'));
    const url = line.slice('subagent-otel view: '.length).trim();
    try {
      let summary: { state: string; runs: number };
      do summary = JSON.parse((await http(`${url}api/summary`, 'GET')).body) as typeof summary;
      while (summary.state === 'loading');
      expect(summary).toMatchObject({ state: 'ready', runs: 1 });
      const runs = await http(`${url}api/runs?stop=max-tokens`, 'GET');
      expect(JSON.parse(runs.body)).toMatchObject({
        total: 1,
        rows: [{ agent: 'coder', stop: 'max-tokens', durationMs: 2000 }],
      });
      const page = await http(url, 'GET');
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.body).toContain('<script src="/assets/page.js" defer></script>');
      expect((await http(`${url}assets/page.js`, 'GET')).status).toBe(200);
      expect((await http(`${url}api/runs`, 'POST')).status).toBe(405);
      expect((await http(`${url}api/runs`, 'GET', { host: 'attacker.example:80' })).status).toBe(421);
    } finally {
      const done = finished(child);
      child.kill('SIGINT');
      expect((await done).code).toBe(0);
    }
  });
});
