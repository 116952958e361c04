/** What `watch`, `replay` and `demo` say about the outbox at exit (`outboxLines`): one line per thing that happened, none when nothing did. */
import { describe, expect, it } from 'vitest';
import { outboxLines } from '../../src/cli/outbox-lines.js';
import type { TelemetryShutdownReport } from '../../src/telemetry/setup.js';

const quiet: TelemetryShutdownReport = {
  timedOut: false,
  errors: [],
  dropped: { traces: 0, metrics: 0 },
  refused: { traces: 0, metrics: 0 },
  outboxed: { traces: 0, metrics: 0, runs: 0 },
  fromOutbox: { requests: 0, items: 0, runs: 0 },
};

describe('outboxLines', () => {
  it('says nothing when the outbox took and gave nothing and nothing was refused', () => {
    expect(outboxLines(quiet)).toEqual([]);
  });

  it('says what was delivered from the outbox, what went into it, and what was refused, in that order', () => {
    const report: TelemetryShutdownReport = {
      ...quiet,
      dropped: { traces: 5, metrics: 1 },
      refused: { traces: 5, metrics: 1 },
      outboxed: { traces: 7, metrics: 2, runs: 3 },
      fromOutbox: { requests: 2, items: 9, runs: 4 },
    };
    expect(outboxLines(report)).toEqual([
      'outbox: delivered 4 run(s) (9 span(s) or metric batch(es) in 2 request(s)) that waited in the outbox',
      'outbox: 3 run(s) (7 span(s) and 2 metric batch(es)) were not taken by the destination and went to the outbox; the next command delivers them (now: subagent-otel check --deliver)',
      'the destination refused 5 span(s) and 1 metric batch(es) for good (not retried)',
    ]);
  });

  it('names metrics that went to the outbox even when no span did', () => {
    expect(outboxLines({ ...quiet, outboxed: { traces: 0, metrics: 1, runs: 0 } })).toHaveLength(1);
  });
});
