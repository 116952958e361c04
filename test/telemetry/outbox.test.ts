/**
 * The outbox's store, its refusal rule and its drainer against a real OTLP
 * receiver (test/helpers/otlp-receiver.ts): records are whole, private,
 * oldest first and bounded in bytes; a drain delivers each once, stops at a
 * retryable failure and removes refusals for good, counting them.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync, readdirSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OTLPExporterError } from '@opentelemetry/otlp-exporter-base';
import { DestinationOutbox } from '../../src/telemetry/outbox/destination.js';
import { isPermanentRefusal } from '../../src/telemetry/outbox/refusal.js';
import { OutboxStore } from '../../src/telemetry/outbox/store.js';
import { loadRawSender, otlpExporterSettings } from '../../src/telemetry/otlp-exporters.js';
import { OnceReporter } from '../../src/telemetry/report-once.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';

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

describe('the outbox store', () => {
  it('writes private, whole records, lists them oldest first and names what they hold', async () => {
    const store = new OutboxStore(folder(), 1 << 20, {
      signal: 'traces',
      protocol: 'http/json',
      url: 'http://x/v1/traces',
    });
    await store.write(Buffer.from('second'), 3, 1, 2_000);
    await store.write(Buffer.from('first'), 5, 2, 1_000);
    const records = await store.list();
    expect(records.map((r) => [r.at, r.items, r.runs, r.bytes])).toEqual([
      [1_000, 5, 2, 5],
      [2_000, 3, 1, 6],
    ]);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(store.dir)) expect(statSync(join(store.dir, name)).mode & 0o777).toBe(0o600);
    expect((await store.read(records[0]!))?.toString()).toBe('first');
    expect(await store.destination()).toEqual({ signal: 'traces', protocol: 'http/json', url: 'http://x/v1/traces' });
  });

  it('drops the oldest records past its bound and counts what they held', async () => {
    const store = new OutboxStore(folder(), 25, { signal: 'traces', protocol: 'http/json', url: 'u' });
    await store.write(Buffer.alloc(10), 4, 1, 1);
    await store.write(Buffer.alloc(10), 5, 1, 2);
    const third = await store.write(Buffer.alloc(10), 6, 1, 3);
    expect(third.dropped.map((r) => r.items)).toEqual([4]);
    expect((await store.list()).map((r) => r.items)).toEqual([5, 6]);
    const alone = await store.write(Buffer.alloc(26), 7, 0, 4);
    expect(alone.kept).toBe(false);
    expect((await store.state()).droppedItems).toBe(4);
  });

  it('ignores a half-written record of a killed writer and removes it once it is old', async () => {
    const store = new OutboxStore(folder(), 1 << 20, { signal: 'metrics', protocol: 'grpc', url: 'u' });
    await store.write(Buffer.from('whole'), 1, 0, 1);
    const torn = join(store.dir, '0000000000002-1-1-1-0.otlp.tmp');
    writeFileSync(torn, 'half');
    expect((await store.list()).map((r) => r.bytes)).toEqual([5]);
    utimesSync(torn, new Date(0), new Date(0));
    await store.list();
    expect(readdirSync(store.dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('lets one live process drain at a time and takes over the lock of a dead one', async () => {
    const store = new OutboxStore(folder(), 1 << 20, { signal: 'traces', protocol: 'http/json', url: 'u' });
    const release = await store.lock();
    expect(release).toBeDefined();
    writeFileSync(join(store.dir, 'drain.lock'), String(process.ppid)); // a live process other than this one
    expect(await store.lock()).toBeUndefined();
    writeFileSync(join(store.dir, 'drain.lock'), '2147483646'); // no such process
    expect(await store.lock()).toBeDefined();
  });
});

describe('refusals for good', () => {
  it('are HTTP 4xx but 408 and 429, and the permanent gRPC codes; everything else may pass later', () => {
    const http = (code: number) => new OTLPExporterError('x', code);
    expect([400, 401, 403, 404, 413].map((c) => isPermanentRefusal(http(c), 'http/json'))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([408, 429, 500, 502, 503].map((c) => isPermanentRefusal(http(c), 'http/protobuf'))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    const grpc = (code: number) => Object.assign(new Error('x'), { code });
    expect([3, 7, 12, 16].map((c) => isPermanentRefusal(grpc(c), 'grpc'))).toEqual([true, true, true, true]);
    expect([1, 4, 8, 14].map((c) => isPermanentRefusal(grpc(c), 'grpc'))).toEqual([false, false, false, false]);
    expect(
      isPermanentRefusal(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'http/json'),
    ).toBe(false);
  });
});

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
