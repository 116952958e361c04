import { describe, expect, it } from 'vitest';
import type { Direction, FrameObserver } from '../../src/observe/frame-observer.js';
import { ProtocolSniffer, protocolOfFrame, SNIFF_FRAME_LIMIT } from '../../src/observe/protocol-sniffer.js';
import type { JsonRpcFrame } from '../../src/wire/jsonrpc.js';

const request = (method: string, params: unknown, id = 1): JsonRpcFrame => ({ kind: 'request', id, method, params });

class Seen implements FrameObserver {
  frames: Array<[Direction, string]> = [];
  closed: string[] = [];
  observeFrame(direction: Direction, frame: JsonRpcFrame): void {
    this.frames.push([direction, frame.kind === 'response' ? `response ${String(frame.id)}` : frame.method]);
  }
  close(_time: number, diagnostic?: string): void {
    this.closed.push(diagnostic ?? '');
  }
}

describe('protocolOfFrame', () => {
  it.each<[string, JsonRpcFrame, string | undefined]>([
    ['an ACP initialize', request('initialize', { protocolVersion: 1, clientCapabilities: {} }), 'acp'],
    ['an SDK initialize', request('initialize', { cwd: '/', provider: 'deepseek', model: 'm' }), 'sdk'],
    ['an ACP prompt', request('session/prompt', { sessionId: 's', prompt: [] }), 'acp'],
    ['an SDK prompt', request('session/prompt', { sessionId: 's', contentBlocks: [] }), 'sdk'],
    ['session/new', request('session/new', { cwd: '/', mcpServers: [] }), 'acp'],
    ['a session.event notification', { kind: 'notification', method: 'session.event', params: {} }, 'sdk'],
    ['a session/update notification', { kind: 'notification', method: 'session/update', params: {} }, 'acp'],
    ['a response', { kind: 'response', id: 1, result: {} }, undefined],
    ['an unknown method', request('custom/thing', {}), undefined],
  ])('tells %s', (_name, frame, expected) => {
    expect(protocolOfFrame(frame)).toBe(expected);
  });
});

describe('ProtocolSniffer', () => {
  it('holds frames until one tells the protocol, then hands them over in order', () => {
    const sdk = new Seen();
    const acp = new Seen();
    const sniffer = new ProtocolSniffer({ sdk: () => sdk, acp: () => acp });
    sniffer.observeFrame('agent->client', { kind: 'response', id: 0, result: {} }, 1);
    sniffer.observeFrame('client->agent', request('custom/thing', {}), 2);
    expect(sniffer.protocol).toBeUndefined();
    sniffer.observeFrame('client->agent', request('session/new', {}), 3);
    sniffer.observeFrame('agent->client', { kind: 'notification', method: 'session/update', params: {} }, 4);
    expect(sniffer.protocol).toBe('acp');
    expect(acp.frames).toEqual([
      ['agent->client', 'response 0'],
      ['client->agent', 'custom/thing'],
      ['client->agent', 'session/new'],
      ['agent->client', 'session/update'],
    ]);
    expect(sdk.frames).toEqual([]);
  });

  it('falls back to the default protocol after the frame limit or at close', () => {
    const sdk = new Seen();
    const sniffer = new ProtocolSniffer({ sdk: () => sdk, acp: () => new Seen() });
    for (let i = 0; i < SNIFF_FRAME_LIMIT; i += 1)
      sniffer.observeFrame('client->agent', request('custom/thing', {}, i), i);
    expect(sniffer.protocol).toBe('sdk');
    expect(sdk.frames).toHaveLength(SNIFF_FRAME_LIMIT);

    const late = new Seen();
    const closing = new ProtocolSniffer({ sdk: () => late, acp: () => new Seen() });
    closing.observeFrame('client->agent', request('custom/thing', {}), 1);
    closing.close(2, 'agent exited');
    expect(late.frames).toHaveLength(1);
    expect(late.closed).toEqual(['agent exited']);
  });
});
