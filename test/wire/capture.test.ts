/**
 * The capture format (one JSON header line, then one record per observed
 * line): text records for valid UTF-8, base64 for anything else, the stream
 * id on both when the file is shared, and validation that never throws.
 */
import { describe, expect, it } from 'vitest';
import {
  captureHeaderLine,
  captureRecordLine,
  isCaptureHeader,
  parseCaptureHeader,
  parseCaptureRecord,
} from '../../src/wire/capture.js';

describe('writing', () => {
  it('writes the header with the format version, and the stream id only when given', () => {
    expect(JSON.parse(captureHeaderLine('acp', 1000))).toEqual({
      type: 'subagent-otel-capture',
      version: 1,
      protocol: 'acp',
      startedAt: 1000,
    });
    expect(JSON.parse(captureHeaderLine('sdk', 5, 'w1'))).toMatchObject({ id: 'w1' });
  });

  it('stores valid UTF-8 as text and other bytes as base64', () => {
    expect(JSON.parse(captureRecordLine('c', 7, Buffer.from('{"id":1}')))).toEqual({ t: 7, d: 'c', l: '{"id":1}' });
    expect(JSON.parse(captureRecordLine('a', 8, Uint8Array.of(0xff, 0x00), 'w1'))).toEqual({
      t: 8,
      d: 'a',
      b: '/wA=',
      s: 'w1',
    });
  });
});

describe('reading', () => {
  it('recognises a header by its type and checks its fields', () => {
    expect(isCaptureHeader({ type: 'subagent-otel-capture' })).toBe(true);
    expect(isCaptureHeader({ jsonrpc: '2.0' })).toBe(false);
    expect(isCaptureHeader(null)).toBe(false);
    expect(parseCaptureHeader({ type: 'subagent-otel-capture', version: 1, protocol: 'auto', startedAt: 0 }).ok).toBe(
      true,
    );
    const bad = parseCaptureHeader({ type: 'subagent-otel-capture', version: 0, protocol: 'auto', startedAt: 0 });
    expect(bad.ok ? '' : bad.error.path).toBe('version');
  });

  it('gives a record back as bytes, from text or base64, with its stream', () => {
    const text = parseCaptureRecord({ t: 1, d: 'c', l: 'é' });
    expect(text.ok && [text.time, text.direction, [...text.bytes]]).toEqual([1, 'c', [0xc3, 0xa9]]);
    const binary = parseCaptureRecord({ t: 2, d: 'a', b: '/wA=', s: 'w2' });
    expect(binary.ok && [[...binary.bytes], binary.stream]).toEqual([[0xff, 0x00], 'w2']);
  });

  it('refuses a record with both or neither of l and b, a wrong direction, or no object', () => {
    expect(parseCaptureRecord({ t: 1, d: 'c', l: 'x', b: 'eA==' }).ok).toBe(false);
    expect(parseCaptureRecord({ t: 1, d: 'c' }).ok).toBe(false);
    const direction = parseCaptureRecord({ t: 1, d: 'x', l: '' });
    expect(direction.ok ? '' : direction.error.path).toBe('d');
    const scalar = parseCaptureRecord('line');
    expect(scalar.ok ? undefined : scalar.error.code).toBe('not-object');
  });
});
