/**
 * The attributes only runs read from coding agents' transcripts carry: their
 * cost (the run's own, and on a session's root run the whole session's) and
 * the notes on where their usage is approximate. Pure: owns the mapping of
 * those `RunRecord` fields to attributes, nothing else.
 *
 * @module subagent-otel/telemetry/transcript-attributes
 */
import type { Attributes } from '@opentelemetry/api';
import type { RunRecord } from '../observe/run-record.js';
import {
  ATTR_SUBAGENT_COST_AMOUNT,
  ATTR_SUBAGENT_COST_CURRENCY,
  ATTR_SUBAGENT_COST_UNPRICED_MODELS,
  ATTR_SUBAGENT_SESSION_COST_AMOUNT,
  ATTR_SUBAGENT_SESSION_COST_CURRENCY,
  ATTR_SUBAGENT_USAGE_NOTES,
} from './semconv.js';

/**
 * @returns the cost and usage-note attributes of `record`: none for a run
 *   without those fields (every run not read from a transcript). Never throws.
 */
export function transcriptRunAttributes(
  record: Pick<RunRecord, 'cost' | 'sessionTotalCost' | 'usageNotes'>,
): Attributes {
  const attributes: Attributes = {};
  if (record.cost !== undefined) {
    // Nothing priced: no amount (0 would read as free), only the models that could not be priced.
    if (record.cost.pricedCalls > 0) {
      attributes[ATTR_SUBAGENT_COST_AMOUNT] = record.cost.amount;
      attributes[ATTR_SUBAGENT_COST_CURRENCY] = record.cost.currency;
    }
    if (record.cost.unpricedModels.length > 0)
      attributes[ATTR_SUBAGENT_COST_UNPRICED_MODELS] = [...record.cost.unpricedModels];
  }
  if (record.sessionTotalCost !== undefined && record.sessionTotalCost.pricedCalls > 0) {
    attributes[ATTR_SUBAGENT_SESSION_COST_AMOUNT] = record.sessionTotalCost.amount;
    attributes[ATTR_SUBAGENT_SESSION_COST_CURRENCY] = record.sessionTotalCost.currency;
  }
  if (record.usageNotes !== undefined && record.usageNotes.length > 0)
    attributes[ATTR_SUBAGENT_USAGE_NOTES] = [...record.usageNotes];
  return attributes;
}
