/**
 * The attributes of runs read from transcripts (`transcriptRunAttributes`):
 * cost only when some call was priced (0 would read as free), the models
 * that could not be priced, the session's cost on its root run, and the
 * usage notes; nothing for a run without those fields.
 */
import { describe, expect, it } from 'vitest';
import { transcriptRunAttributes } from '../../src/telemetry/transcript-attributes.js';

describe('transcriptRunAttributes', () => {
  it('gives nothing for a run that carries no cost and no notes', () => {
    expect(transcriptRunAttributes({})).toEqual({});
    expect(transcriptRunAttributes({ usageNotes: [] })).toEqual({});
  });

  it('gives the amount, currency and unpriced models of a priced run', () => {
    expect(
      transcriptRunAttributes({
        cost: { amount: 0.25, currency: 'USD', unpricedModels: ['mystery-1'], pricedCalls: 3 },
      }),
    ).toEqual({
      'subagent.cost.amount': 0.25,
      'subagent.cost.currency': 'USD',
      'subagent.cost.unpriced_models': ['mystery-1'],
    });
  });

  it('gives no amount when no call was priced, only the models that were not', () => {
    expect(
      transcriptRunAttributes({ cost: { amount: 0, currency: 'USD', unpricedModels: ['m'], pricedCalls: 0 } }),
    ).toEqual({ 'subagent.cost.unpriced_models': ['m'] });
  });

  it("adds the session's cost when priced, and the usage notes", () => {
    expect(
      transcriptRunAttributes({
        sessionTotalCost: { amount: 1.5, currency: 'USD', unpricedModels: [], pricedCalls: 9 },
        usageNotes: ['cache reads estimated'],
      }),
    ).toEqual({
      'subagent.session.cost.amount': 1.5,
      'subagent.session.cost.currency': 'USD',
      'subagent.usage.notes': ['cache reads estimated'],
    });
    expect(
      transcriptRunAttributes({ sessionTotalCost: { amount: 0, currency: 'USD', unpricedModels: [], pricedCalls: 0 } }),
    ).toEqual({});
  });
});
