/**
 * Property test: every consumer of a run's stop reason agrees with one
 * reference written here, for generated event suffixes. The reference is
 * positional (it looks at each turn as a block of the suffix), not the
 * incremental set bookkeeping the code under test uses, and its tables are
 * literals copied by hand from upstream's three rules. Consumers: the
 * in-process result reader, the epoch reader, the SDK rule over events, the
 * `subagent/end` payload, the foreground tool result, the durable-log
 * tracker (per epoch, for a one-shot and a continuable child) and the SDK
 * tracker (a prompted run from its inbox receipt to idle).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LogTracker } from '../../src/observe/log-tracker.js';
import type { RunRecord } from '../../src/observe/run-record.js';
import { SdkTracker } from '../../src/observe/sdk-tracker.js';
import { foregroundToolResult, readEpochResult, readResult, subagentRunEndInfo } from '../../src/output/result.js';
import { stopReasonOfEvents } from '../../src/output/stop-reason.js';
import type { SessionEvent } from '../../src/wire/events.js';

type Item = { kind: 'step' } | { kind: 'claim' } | { kind: 'receipt' } | { kind: 'cancel'; replaced: boolean };
interface Block {
  readonly items: readonly Item[];
  /** Turn-end kind, or undefined when the turn never ended. */
  readonly end: string | undefined;
  /** Items after the turn (outside any turn). */
  readonly after: readonly Item[];
}

const KINDS = ['completed', 'max-tokens', 'aborted', 'blocked', 'error', 'interrupted', 'paused'];
const itemArb: fc.Arbitrary<Item> = fc.oneof(
  fc.constant<Item>({ kind: 'step' }),
  fc.constant<Item>({ kind: 'claim' }),
  fc.constant<Item>({ kind: 'receipt' }),
  fc.boolean().map<Item>((replaced) => ({ kind: 'cancel', replaced })),
);
const blockArb: fc.Arbitrary<Block> = fc.record({
  items: fc.array(itemArb, { maxLength: 3 }),
  end: fc.option(fc.constantFrom(...KINDS), { nil: undefined }),
  after: fc.array(
    fc.oneof(
      fc.constant<Item>({ kind: 'receipt' }),
      fc.boolean().map<Item>((replaced) => ({ kind: 'cancel', replaced })),
    ),
    { maxLength: 2 },
  ),
});
const suffixArb = fc.record({
  before: fc.array(
    fc.oneof(
      fc.constant<Item>({ kind: 'receipt' }),
      fc.boolean().map<Item>((replaced) => ({ kind: 'cancel', replaced })),
    ),
    { maxLength: 2 },
  ),
  blocks: fc.array(blockArb, { maxLength: 4 }),
});

const T0 = 1_700_000_000_000;

function eventOf(item: Item, turn: number): { type: string; data: unknown } {
  switch (item.kind) {
    case 'step':
      return { type: 'step/start', data: { turn, step: 0 } };
    case 'claim':
      return { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } };
    case 'receipt':
      return {
        type: 'agent/inbox/spliced',
        data: { target: 'next-turn', start: 0, inserted: [{ id: `m${turn}`, role: 'user', content: [] }] },
      };
    case 'cancel':
      return {
        type: 'agent/inbox/spliced',
        data: {
          target: 'next-turn',
          start: 0,
          removedCount: 1,
          outcome: 'canceled',
          inserted: item.replaced ? [{ id: 'r', role: 'user', content: [] }] : [],
        },
      };
  }
}

/** The suffix as events, and the per-turn event lists (from each `turn/start` to the next), for the log tracker. */
function build(suffix: { before: readonly Item[]; blocks: readonly Block[] }): {
  events: SessionEvent[];
  epochs: SessionEvent[][];
} {
  const drafts: Array<{ type: string; data: unknown }> = suffix.before.map((i) => eventOf(i, 0));
  suffix.blocks.forEach((block, turn) => {
    drafts.push({ type: 'turn/start', data: { turn } });
    for (const item of block.items) drafts.push(eventOf(item, turn));
    if (block.end !== undefined) drafts.push({ type: 'turn/end', data: { turn, reason: { kind: block.end } } });
    for (const item of block.after) drafts.push(eventOf(item, turn));
  });
  const events = drafts.map((d, i) => ({ ...d, seq: i, time: T0 + i }) as SessionEvent);
  const epochs: SessionEvent[][] = [];
  for (const event of events) {
    if (event.type === 'turn/start') epochs.push([]);
    epochs[epochs.length - 1]?.push(event);
  }
  return { events, epochs };
}

/** Upstream's rules, restated as literal tables. */
const IN_PROCESS: Record<string, string> = {
  completed: 'completed',
  'max-tokens': 'max-tokens',
  aborted: 'aborted',
  blocked: 'refusal',
};
const EPOCH: Record<string, string> = {
  'max-tokens': 'max-tokens',
  aborted: 'aborted',
  interrupted: 'aborted',
  error: 'error',
  blocked: 'refusal',
};
const SDK: Record<string, string> = { completed: 'completed', 'max-tokens': 'max-tokens', aborted: 'aborted' };

/** The reference: which turn accounts for work, positionally, and whether empty cancellations follow it. */
function reference(events: readonly SessionEvent[]): { inProcess: string; epoch: string; sdk: string } {
  let accounting: { kind: string; at: number } | undefined;
  let lastEnd: string | undefined;
  let turnStartAt = -1;
  events.forEach((event, at) => {
    if (event.type === 'turn/start') turnStartAt = at;
    if (event.type !== 'turn/end') return;
    const kind = (event.data as { reason: { kind: string } }).reason.kind;
    lastEnd = kind;
    const inside = events.slice(turnStartAt + 1, at);
    const stepped = inside.some((e) => e.type === 'step/start');
    const claimed = inside.some(
      (e) =>
        e.type === 'agent/inbox/spliced' &&
        (e.data as { removedCount?: number; outcome?: string }).removedCount !== undefined &&
        (e.data as { outcome?: string }).outcome !== 'canceled',
    );
    if (stepped || (claimed && kind !== 'completed')) accounting = { kind, at };
    turnStartAt = -1;
  });
  const dropped = events.some(
    (e, at) =>
      at > (accounting?.at ?? -1) &&
      e.type === 'agent/inbox/spliced' &&
      (e.data as { outcome?: string }).outcome === 'canceled' &&
      (e.data as { inserted: unknown[] }).inserted.length === 0,
  );
  const inProcess = accounting === undefined ? 'error' : (IN_PROCESS[accounting.kind] ?? 'error');
  const epoch =
    accounting === undefined || accounting.kind === 'completed'
      ? dropped
        ? 'aborted'
        : 'completed'
      : (EPOCH[accounting.kind] ?? 'error');
  const sdk = lastEnd === undefined ? 'error' : (SDK[lastEnd] ?? 'error');
  return { inProcess, epoch, sdk };
}

const HEADLINES: Record<string, string> = {
  aborted: 'Error: subagent run was cancelled',
  error: 'Error: subagent run failed',
  'max-tokens': 'Error: subagent run hit its token limit before finishing',
  refusal: 'Error: subagent declined the task',
};

function collect(): { records: RunRecord[]; listener: ConstructorParameters<typeof SdkTracker>[0] } {
  const records: RunRecord[] = [];
  return { records, listener: { onRunStart: () => undefined, onRunEnd: (r) => records.push(r) } };
}

async function logRuns(events: readonly SessionEvent[], continuable: boolean): Promise<RunRecord[]> {
  const { records, listener } = collect();
  const tracker = new LogTracker(listener);
  const header = {
    type: 'session',
    version: 0,
    id: 'child',
    createdAt: T0 - 1,
    parentSession: 'parent',
    delegationDepth: 1,
  };
  const descriptor = {
    type: 'subagent/descriptor',
    data: { version: 2, mode: continuable ? 'continuable' : 'one-shot', provider: 'spawn' },
  };
  const lines = [header, descriptor, ...events].map((l) => JSON.stringify(l)).join('\n') + '\n';
  await tracker.readSource(
    continuable ? 'continuable.jsonl' : 'one-shot.jsonl',
    (async function* () {
      yield Buffer.from(lines, 'utf8');
    })(),
  );
  tracker.emit();
  return records;
}

describe('every consumer agrees with the reference stop reason', () => {
  it('result readers, subagent/end, tool result and the SDK rule', () => {
    fc.assert(
      fc.property(suffixArb, (suffix) => {
        const { events } = build(suffix);
        const ref = reference(events);
        const result = readResult(events);
        expect(result.stopReason).toBe(ref.inProcess);
        expect(readEpochResult(events).stopReason).toBe(ref.epoch);
        expect(stopReasonOfEvents(events, 'in-process')).toBe(ref.inProcess);
        expect(stopReasonOfEvents(events, 'epoch')).toBe(ref.epoch);
        expect(stopReasonOfEvents(events, 'sdk')).toBe(ref.sdk);
        expect(
          subagentRunEndInfo({ runId: 'r', provider: 'spawn', id: 'c', local: true }, result.stopReason, result.output)
            .stopReason,
        ).toBe(ref.inProcess);
        const tool = foregroundToolResult(result);
        expect(tool.isError).toBe(ref.inProcess !== 'completed');
        expect(tool.content).toEqual([
          { type: 'text', text: ref.inProcess === 'completed' ? '' : HEADLINES[ref.inProcess] },
        ]);
      }),
      { numRuns: 2000 },
    );
  });

  it('the durable-log tracker, per epoch, by the in-process rule for a one-shot child and the epoch rule for a continuable one', async () => {
    await fc.assert(
      fc.asyncProperty(suffixArb, async (suffix) => {
        const { events, epochs } = build(suffix);
        const oneShot = await logRuns(events, false);
        const continuable = await logRuns(events, true);
        if (epochs.length === 0) {
          // A child whose log holds no turn is still one run, over what the log holds.
          expect(oneShot.map((r) => r.stopReason)).toEqual([reference(events).inProcess]);
          expect(continuable.map((r) => r.stopReason)).toEqual([reference(events).epoch]);
          return;
        }
        expect(oneShot.map((r) => r.stopReason)).toEqual(epochs.map((e) => reference(e).inProcess));
        expect(continuable.map((r) => r.stopReason)).toEqual(epochs.map((e) => reference(e).epoch));
        expect(oneShot.every((r) => r.subagentProvider === 'spawn')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('the SDK tracker, for a prompted run from its inbox receipt to idle', () => {
    fc.assert(
      fc.property(suffixArb, (suffix) => {
        const { events } = build(suffix);
        const { records, listener } = collect();
        const tracker = new SdkTracker(listener, { newRunId: () => 'run' });
        tracker.observeFrame(
          'client->agent',
          { kind: 'request', id: 1, method: 'session/prompt', params: { sessionId: 's', contentBlocks: [] } },
          T0 - 2,
        );
        const receiptEvent = {
          type: 'agent/inbox/spliced',
          seq: 0,
          time: T0 - 1,
          data: { target: 'next-turn', start: 0, inserted: [{ id: 'm', role: 'user', content: [] }] },
        };
        tracker.observeFrame(
          'agent->client',
          { kind: 'notification', method: 'session.event', params: { sessionId: 's', event: receiptEvent } },
          T0 - 1,
        );
        tracker.observeFrame(
          'agent->client',
          { kind: 'notification', method: 'session.status', params: { sessionId: 's', status: 'running' } },
          T0 - 1,
        );
        tracker.observeFrame('agent->client', { kind: 'response', id: 1, result: { messageId: 'm' } }, T0 - 1);
        for (const event of events)
          tracker.observeFrame(
            'agent->client',
            { kind: 'notification', method: 'session.event', params: { sessionId: 's', event } },
            event.time ?? T0,
          );
        expect(records).toEqual([]);
        tracker.observeFrame(
          'agent->client',
          { kind: 'notification', method: 'session.status', params: { sessionId: 's', status: 'idle' } },
          T0 + 1000,
        );
        expect(records.map((r) => r.stopReason)).toEqual([reference(events).sdk]);
      }),
      { numRuns: 1000 },
    );
  });
});
