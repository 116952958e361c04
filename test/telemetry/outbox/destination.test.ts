/**
 * The outbox's drainer (`DestinationOutbox`) against a real OTLP receiver
 * (test/helpers/otlp-receiver.ts): a drain delivers each record once, stops
 * at a retryable failure and removes refusals for good, counting them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DestinationOutbox } from '../../../src/telemetry/outbox/destination.js';
import { OutboxStore } from '../../../src/telemetry/outbox/store.js';
import { loadRawSender, otlpExporterSettings } from '../../../src/telemetry/otlp-exporters.js';
import { OnceReporter } from '../../../src/telemetry/report-once.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';

const dirs: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-outbox-'));
  dirs.push(dir);
  return join(dir, 'dest');
}

describe('the drainer', () => {
  const body = (name: string): Buffer =>
    Buffer.from(
      JSON.stringify({
        resourceSpans: [
          {
            resource: {},
            scopeSpans: [
              {
                scope: { name: 's' },
                spans: [
                  {
                    traceId: '0af7651916cd43dd8448eb211c80319c',
                    spanId: 'b7ad6b7169203331',
                    name,
                    kind: 1,
                    startTimeUnixNano: '1',
                    endTimeUnixNano: '2',
                  },
                ],
              },
            ],
          },
        ],
      }),
    );

  async function drainerFor(mode: Parameters<typeof startOtlpReceiver>[0]) {
    const receiver = await startOtlpReceiver(mode);
    cleanups.push(() => receiver.close());
    const settings = otlpExporterSettings(
      'TRACES',
      { protocol: 'http/json', url: `${receiver.endpoint}/v1/traces` },
      'delta',
      { OTEL_EXPORTER_OTLP_TIMEOUT: '2000' },
      new OnceReporter(),
    );
    const store = new OutboxStore(folder(), 1 << 20, { signal: 'traces', protocol: 'http/json', url: settings.url });
    const refused: number[] = [];
    const outbox = new DestinationOutbox({
      store,
      destination: { signal: 'traces', protocol: 'http/json', url: settings.url },
      sender: () => loadRawSender(settings),
      onRefused: (items) => refused.push(items),
    });
    return { receiver, store, outbox, refused };
  }

  it('delivers every waiting request once, oldest first, and empties the folder', async () => {
    const { receiver, store, outbox } = await drainerFor({ kind: 'healthy' });
    await store.write(body('a'), 1, 1, 1);
    await store.write(body('b'), 1, 0, 2);
    expect(await outbox.drain()).toBe(0);
    expect(receiver.acceptedSpans().map((s) => s.name)).toEqual(['a', 'b']);
    expect(outbox.account().delivered).toEqual({ requests: 2, items: 2, runs: 1 });
    await outbox.finish(Date.now() + 1000);
  });

  it('removes and counts a request the destination refuses for good, and keeps going', async () => {
    const { store, outbox, refused } = await drainerFor({ kind: 'status', status: 400 });
    await store.write(body('a'), 3, 1, 1);
    expect(await outbox.drain()).toBe(0);
    expect(refused).toEqual([3]);
    expect((await store.state()).refused).toBe(1);
    await outbox.finish(Date.now() + 1000);
  });

  it('stops at a retryable failure, keeps the requests and remembers the error', async () => {
    const { store, outbox } = await drainerFor({ kind: 'error-500' });
    await store.write(body('a'), 1, 1, 1);
    await store.write(body('b'), 1, 1, 2);
    expect(await outbox.drain()).toBe(2);
    expect(outbox.isDown).toBe(true);
    expect((await store.state()).lastError).toBeDefined();
    await outbox.finish(Date.now() + 1000);
  });
});
