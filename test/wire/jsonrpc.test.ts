import { describe, expect, it } from 'vitest';
import { parseFrame } from '../../src/wire/jsonrpc.js';

describe('parseFrame', () => {
  it('classifies requests, notifications and responses', () => {
    expect(parseFrame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/"}}')).toEqual({
      ok: true,
      frame: { kind: 'request', id: 1, method: 'initialize', params: { cwd: '/' } },
    });
    expect(
      parseFrame('{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}'),
    ).toEqual({
      ok: true,
      frame: { kind: 'notification', method: 'session.status', params: { sessionId: 's', status: 'idle' } },
    });
    expect(parseFrame('{"jsonrpc":"2.0","id":"a","result":{"messageId":"m"}}')).toEqual({
      ok: true,
      frame: { kind: 'response', id: 'a', result: { messageId: 'm' } },
    });
    expect(parseFrame('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')).toEqual({
      ok: true,
      frame: { kind: 'response', id: null, error: { code: -32700, message: 'Parse error', data: undefined } },
    });
  });

  it.each([
    ['text that is not JSON', 'this is not json {', 'not-json', ''],
    ['a JSON number', '42', 'not-object', ''],
    ['a JSON array', '[1,2]', 'not-object', ''],
    ['an object without jsonrpc', '{"hello":1}', 'not-jsonrpc', 'jsonrpc'],
    ['a wrong version', '{"jsonrpc":"1.0","id":1,"result":{}}', 'not-jsonrpc', 'jsonrpc'],
    ['a numeric method', '{"jsonrpc":"2.0","id":1,"method":7}', 'not-jsonrpc', 'method'],
    ['an object id', '{"jsonrpc":"2.0","id":{},"result":{}}', 'not-jsonrpc', 'id'],
    ['a response with neither result nor error', '{"jsonrpc":"2.0","id":1}', 'not-jsonrpc', 'result'],
    ['a malformed error object', '{"jsonrpc":"2.0","id":1,"error":"boom"}', 'not-jsonrpc', 'error'],
    ['an empty line', '', 'not-json', ''],
  ])('rejects %s with a typed error and never throws', (_name, line, code, path) => {
    const result = parseFrame(line);
    expect(result).toMatchObject({ ok: false, error: { code, path } });
  });
});
