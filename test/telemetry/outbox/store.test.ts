/**
 * The outbox's store (`OutboxStore`): records are whole, private, oldest
 * first and bounded in bytes; torn writes and stale locks are cleared.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboxStore } from '../../../src/telemetry/outbox/store.js';

const dirs: string[] = [];
afterEach(() => {
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
