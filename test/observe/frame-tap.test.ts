import { describe, expect, it } from 'vitest';
import type { Direction, FrameObserver } from '../../src/observe/frame-observer.js';
import { FrameTap } from '../../src/observe/frame-tap.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';

function tapWithRecorders(maxLineBytes?: number) {
  const frames: Array<[Direction, JsonRpcFrame, number]> = [];
  const rejected: string[] = [];
  const lines: string[] = [];
  const observer: FrameObserver = { observeFrame: (d, f, t) => frames.push([d, f, t]), close: () => undefined };
  const tap = new FrameTap(observer, {
    onRejected: (d, kind, message) => rejected.push(`${d} ${kind}: ${message}`),
    onLine: (d, line) => lines.push(`${d} ${Buffer.from(line).toString('latin1')}`),
    now: () => 42,
    ...(maxLineBytes !== undefined ? { maxLineBytes } : {}),
  });
  return { tap, frames, rejected, lines };
}

describe('FrameTap', () => {
  it('turns chunks split anywhere into frames, with the chunk arrival time', () => {
    const { tap, frames } = tapWithRecorders();
    tap.push('client->agent', Buffer.from('{"jsonrpc":"2.0","id":1,"meth'));
    tap.push('client->agent', Buffer.from('od":"initialize","params":{}}\r\n{"jsonrpc":"2.0","method":"x"}\n'), 7);
    expect(frames).toEqual([
      ['client->agent', { kind: 'request', id: 1, method: 'initialize', params: {} }, 7],
      ['client->agent', { kind: 'notification', method: 'x', params: undefined }, 7],
    ]);
    expect(tap.counts['client->agent']).toEqual({ lines: 2, frames: 2, rejected: 0 });
  });

  it('reports each rejected line by kind and goes on; blank lines are neither frames nor errors', () => {
    const { tap, frames, rejected } = tapWithRecorders(40);
    tap.push(
      'agent->client',
      Buffer.concat([
        Buffer.from('not json\n\n[1]\n{"a":1}\n'),
        Buffer.from([0xff, 0x0a]),
        Buffer.from('{"jsonrpc":"2.0","method":"a-very-long-method"}\n{"jsonrpc":"2.0","method":"ok"}\n'),
      ]),
    );
    tap.push('agent->client', Buffer.from('{"torn'));
    tap.end('agent->client');
    expect(frames.map(([, f]) => (f.kind === 'notification' ? f.method : f.kind))).toEqual(['ok']);
    expect(rejected).toEqual([
      expect.stringMatching(
        /^agent->client not-json: \(root\): expected JSON text, received text that does not parse \(.+\)$/,
      ),
      'agent->client not-object: (root): expected a JSON-RPC object, received array(1)',
      'agent->client not-jsonrpc: jsonrpc: expected string "2.0", received nothing (field missing)',
      'agent->client not-utf8: line is not valid UTF-8; skipped',
      'agent->client oversized: line of 47 bytes exceeds the line limit; skipped',
      'agent->client torn-tail: stream ended inside a line (6 bytes without a newline); skipped',
    ]);
    expect(tap.counts['agent->client']).toEqual({ lines: 6, frames: 1, rejected: 6 });
  });

  it('hands every complete line to the capture hook, valid or not, in order', () => {
    const { tap, lines } = tapWithRecorders();
    tap.push('client->agent', Buffer.from('{"jsonrpc":"2.0","method":"a"}\nnope\n'));
    tap.push('agent->client', Buffer.from('\n'));
    expect(lines).toEqual(['client->agent {"jsonrpc":"2.0","method":"a"}', 'client->agent nope', 'agent->client ']);
  });
});
