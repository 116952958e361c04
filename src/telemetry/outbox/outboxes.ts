/**
 * Where the outbox lives and how a pipeline opens the outbox of one of its
 * OTLP destinations; what `check` shows of every destination's outbox.
 *
 * The default root is `$XDG_STATE_HOME/subagent-otel/outbox` (else
 * `~/.local/state/subagent-otel/outbox`), beside the watch checkpoints; one
 * folder per destination, named by a hash of signal, protocol and URL
 * (decision 0100).
 *
 * @module subagent-otel/telemetry/outbox/outboxes
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { loadRawSender, type OtlpExporterSettings } from '../otlp-exporters.js';
import { DestinationOutbox } from './destination.js';
import { destinationKey, outboxFolders, OutboxStore, type OutboxDestination, type OutboxState } from './store.js';

/** The default outbox root of an environment: `$XDG_STATE_HOME/subagent-otel/outbox`, else `~/.local/state/subagent-otel/outbox`. */
export function defaultOutboxDir(env: NodeJS.ProcessEnv): string {
  const state =
    env['XDG_STATE_HOME'] !== undefined && env['XDG_STATE_HOME'] !== ''
      ? env['XDG_STATE_HOME']
      : join(homedir(), '.local', 'state');
  return join(state, 'subagent-otel', 'outbox');
}

/** Where an outbox is and how large each destination's folder may grow. */
export interface OutboxPlace {
  readonly dir: string;
  readonly maxBytes: number;
}

/**
 * The outbox of the destination `settings` describes, under `place`.
 * @param url the destination as shown to people (no credentials).
 */
export function openDestinationOutbox(
  place: OutboxPlace,
  settings: OtlpExporterSettings,
  url: string,
  hooks: { onRefused?: (items: number, error: unknown) => void; onDrainFailed?: (error: unknown) => void } = {},
): DestinationOutbox {
  const signal = settings.signal === 'TRACES' ? 'traces' : 'metrics';
  const destination: OutboxDestination = { signal, protocol: settings.protocol, url };
  const store = new OutboxStore(
    join(place.dir, destinationKey(signal, settings.protocol, settings.url)),
    place.maxBytes,
    destination,
  );
  return new DestinationOutbox({ store, destination, sender: () => loadRawSender(settings), ...hooks });
}

/** What waits for one destination, as `check` shows it. */
export interface OutboxSummary {
  readonly folder: string;
  readonly destination?: OutboxDestination;
  readonly requests: number;
  readonly bytes: number;
  /** Spans or metric batches. */
  readonly items: number;
  readonly runs: number;
  /** When the oldest waiting request was filed (epoch ms). */
  readonly since?: number;
  readonly state: OutboxState;
}

/** Every destination folder under `place.dir` that holds something or has a state. Rejects only when the root cannot be listed. */
export async function summarizeOutbox(place: OutboxPlace): Promise<OutboxSummary[]> {
  const summaries: OutboxSummary[] = [];
  for (const store of await outboxFolders(place.dir, place.maxBytes)) {
    const records = await store.list();
    const destination = await store.destination();
    const oldest = records[0];
    summaries.push({
      folder: store.dir,
      ...(destination !== undefined ? { destination } : {}),
      requests: records.length,
      bytes: records.reduce((sum, r) => sum + r.bytes, 0),
      items: records.reduce((sum, r) => sum + r.items, 0),
      runs: records.reduce((sum, r) => sum + r.runs, 0),
      ...(oldest !== undefined ? { since: oldest.at } : {}),
      state: await store.state(),
    });
  }
  return summaries;
}
