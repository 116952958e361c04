/**
 * The proxy's start, in process: the queue that holds forwarded chunks while
 * the observation loads (`StartupQueue`). The pipes made while the proxy's
 * code loads are in test/proxy/os-pipes.test.ts; the end-to-end behaviour
 * (FIFOs seen by the agent, SIGPIPE, EOF) is in test/hardening/proxy-pipes.
 */
import { describe, expect, it } from 'vitest';
import { StartupQueue } from '../../src/proxy/run-proxy.js';
import type { Direction } from '../../src/observe/frame-observer.js';

function recorder(): {
  target: { push(d: Direction, c: Uint8Array, t?: number): void; end(d: Direction): void };
  seen: string[];
} {
  const seen: string[] = [];
  return {
    seen,
    target: {
      push: (direction, chunk, time) =>
        seen.push(`${direction} ${Buffer.from(chunk).toString('utf8')} @${String(time)}`),
      end: (direction) => seen.push(`${direction} end`),
    },
  };
}

describe('StartupQueue', () => {
  it('hands chunks and ends over in the order they were forwarded, with the time each was forwarded', () => {
    const queue = new StartupQueue(1024);
    queue.push('client->agent', Buffer.from('{"id":1}\n'), 100);
    queue.push('agent->client', Buffer.from('{"id":1,"result":{}}\n'), 101);
    queue.end('client->agent', 102);
    queue.push('agent->client', Buffer.from('tail'), 103);
    const { target, seen } = recorder();
    queue.drainInto(target);
    expect(seen).toEqual([
      'client->agent {"id":1}\n @100',
      'agent->client {"id":1,"result":{}}\n @101',
      'client->agent end',
      'agent->client tail @103',
    ]);
    expect(queue.overflowed).toBe(false);
  });

  it('keeps at most its limit of bytes, says it overflowed, and still keeps later ends', () => {
    const queue = new StartupQueue(10);
    queue.push('agent->client', Buffer.from('12345678'), 1);
    queue.push('agent->client', Buffer.from('abc'), 2);
    queue.push('agent->client', Buffer.from('xy'), 3);
    queue.end('agent->client', 4);
    const { target, seen } = recorder();
    queue.drainInto(target);
    expect(seen).toEqual(['agent->client 12345678 @1', 'agent->client xy @3', 'agent->client end']);
    expect(queue.overflowed).toBe(true);
  });

  it('is empty after a drain: a second drain hands over nothing, and its byte count starts again', () => {
    const queue = new StartupQueue(4);
    queue.push('agent->client', Buffer.from('abcd'), 1);
    queue.drainInto(recorder().target);
    const { target, seen } = recorder();
    queue.drainInto(target);
    expect(seen).toEqual([]);
    queue.push('agent->client', Buffer.from('efgh'), 2);
    queue.drainInto(target);
    expect(seen).toEqual(['agent->client efgh @2']);
    expect(queue.overflowed).toBe(false);
  });
});
