/**
 * The books of one pipeline set: drops split into refusals and unsafe
 * losses, problem lines kept once and at most 32, and a snapshot that is a
 * copy.
 */
import { describe, expect, it } from 'vitest';
import { ExportAccounts } from '../../src/telemetry/export-accounts.js';
import { RefusedExportError } from '../../src/telemetry/outbox/refusal.js';
import { OnceReporter } from '../../src/telemetry/report-once.js';

describe('ExportAccounts', () => {
  it('counts a refusal as dropped and refused, anything else as dropped and an unsafe loss', () => {
    const accounts = new ExportAccounts(new OnceReporter(), undefined);
    accounts.onDrop('traces', 'otlp', 3, new RefusedExportError('400 Bad Request'));
    accounts.onDrop('traces', 'file', 2, new Error('disk full'));
    accounts.onDrop('metrics', 'otlp', 1, new Error('timeout'));
    const books = accounts.snapshot();
    expect(books.dropped).toEqual({ traces: 5, metrics: 1 });
    expect(books.refused).toEqual({ traces: 3, metrics: 0 });
    expect(accounts.unsafeLosses).toBe(3);
  });

  it('keeps the first drop line of each signal and exporter, once', () => {
    const accounts = new ExportAccounts(new OnceReporter(), undefined);
    accounts.onDrop('traces', 'otlp', 2, new Error('ECONNREFUSED'));
    accounts.onDrop('traces', 'otlp', 4, new Error('ECONNREFUSED again'));
    accounts.onDrop('metrics', 'console', 1, 'closed');
    expect(accounts.snapshot().errors).toEqual([
      'traces: otlp export failed, 2 span(s) dropped: ECONNREFUSED',
      'metrics: console export failed, 1 metric batch(es) dropped: closed',
    ]);
  });

  it('tells the run listener of every drop once it has one', () => {
    const accounts = new ExportAccounts(new OnceReporter(), undefined);
    const told: unknown[][] = [];
    accounts.onDrop('traces', 'file', 1, new Error('before'));
    accounts.runs = { recordDropped: (...args: unknown[]) => told.push(args) } as unknown as NonNullable<
      ExportAccounts['runs']
    >;
    accounts.onDrop('traces', 'file', 2, new Error('after'));
    expect(told).toEqual([['traces', 'file', 2]]);
  });

  it('notes distinct lines only, and no more than 32', () => {
    const accounts = new ExportAccounts(new OnceReporter(), undefined);
    accounts.note('same');
    accounts.note('same');
    for (let i = 0; i < 40; i += 1) accounts.note(`line ${i}`);
    const { errors } = accounts.snapshot();
    expect(errors).toHaveLength(32);
    expect(errors[0]).toBe('same');
    expect(errors[31]).toBe('line 30');
  });

  it('opens no outbox when the outbox is off, and a snapshot is a copy', () => {
    const accounts = new ExportAccounts(new OnceReporter(), undefined);
    expect(accounts.outboxFor('traces', {} as never, 'http://collector:4318/v1/traces')).toBeUndefined();
    expect(accounts.outboxes).toEqual([]);
    const before = accounts.snapshot();
    accounts.onDrop('metrics', 'otlp', 1, new Error('x'));
    expect(before.dropped.metrics).toBe(0);
    expect(before.fromOutbox).toEqual({ requests: 0, items: 0, runs: 0 });
    expect(before.outboxed).toEqual({ traces: 0, metrics: 0, runs: 0 });
  });
});
