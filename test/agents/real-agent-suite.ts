/**
 * Plays every model-server scenario against one real ACP agent twice: once
 * with the SDK client talking to the agent directly, once through
 * `subagent-otel proxy --protocol acp --out DIR`, each path with its own
 * model server, home and agent process (one process per path for all
 * scenarios, a new session per turn). Returns both client views, the
 * proxied run's spans, and writes the raw transcripts to
 * `$ACP_CAPTURE_DIR/<agent>-<scenario>.ndjson` when that variable is set.
 *
 * Also the comparison helpers the tests use: `normalised()` (ids, times and
 * temporary paths replaced by placeholders) and span lookups.
 *
 * @module subagent-otel/test/agents/real-agent-suite
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attributes, readSpans, type OtlpSpan } from '../helpers/cli.js';
import { CLI } from '../helpers/paths.js';
import { startPeer, type Frame, type Turn } from './acp-driver.js';
import { launchSpec, type AgentName } from './agents.js';
import { SCENARIOS, startModelServer, type Scenario, type SeenRequest } from './model-server.js';
import { ATTR_GEN_AI_CONVERSATION_ID } from '../../src/telemetry/semconv.js';

/**
 * How many turns a scenario plays: `limit-once` plays its prompt, then
 * {@link followUpOf} in a new session; every other scenario one turn. Not in
 * the same session: codex-acp 0.16 sometimes never answers the prompt after a
 * failed turn in that session (no model request, no answer; a few runs in a
 * hundred), after the output limit as after a 401.
 */
export function turnsOf(scenario: Scenario): 1 | 2 {
  return scenario === 'limit-once' ? 2 : 1;
}

/** The second prompt of a scenario: the same marker (so the model server continues its state), asking to go on. */
export function followUpOf(scenario: Scenario): string {
  return `scenario:${scenario}#${scenario} Please continue.`;
}

/** One scenario as one path saw it. */
export interface ScenarioView {
  /** The scenario's turns ({@link turnsOf}), each in a session of its own. */
  readonly turns: readonly Turn[];
  /** `session/new` frames of those sessions. */
  readonly sessionFrames: Frame[];
}

/** Everything one path (direct or proxied) saw. */
export interface PathView {
  readonly initialize: unknown;
  readonly initFrames: Frame[];
  readonly scenarios: Record<Scenario, ScenarioView>;
  readonly modelRequests: SeenRequest[];
  /** The agent's connection-level notifications ({@link CONNECTION_LEVEL_METHODS}), in order, from all of the path's frames. */
  readonly connectionNotifications: Frame[];
  readonly exit: { code: number | null; signal: NodeJS.Signals | null };
  readonly stderr: string;
}

/** Result of {@link playAgent}. */
export interface AgentPlay {
  readonly direct: PathView;
  readonly proxied: PathView;
  /** Spans the proxy wrote (`traces.jsonl`), read after it exited. */
  readonly spans: OtlpSpan[];
}

/** The prompt text of a scenario (the nonce is the scenario name: each path has its own model server). */
export function promptOf(scenario: Scenario): string {
  return `scenario:${scenario}#${scenario} Please answer.`;
}

async function playPath(agent: AgentName, wrap: (argv: readonly string[]) => string[]): Promise<PathView> {
  const server = await startModelServer();
  const spec = launchSpec(agent, server.origin);
  try {
    const peer = await startPeer(wrap(spec.argv), spec.env, spec.cwd);
    const initFrames = peer.frames.slice();
    const scenarios = {} as Record<Scenario, ScenarioView>;
    let failure: unknown;
    try {
      for (const scenario of SCENARIOS) {
        const turns: Turn[] = [];
        const sessionFrames: Frame[] = [];
        for (const prompt of turnsOf(scenario) === 2
          ? [promptOf(scenario), followUpOf(scenario)]
          : [promptOf(scenario)]) {
          const before = peer.frames.length;
          const sessionId = await peer.newSession(spec.cwd);
          sessionFrames.push(...peer.frames.slice(before));
          turns.push(await peer.prompt(sessionId, prompt));
        }
        scenarios[scenario] = { turns, sessionFrames };
      }
    } catch (error) {
      failure = error;
    }
    const exit = await peer.close();
    if (failure !== undefined)
      throw new Error(`${agent} failed (${JSON.stringify(exit)}); its stderr ends: ${peer.stderr().slice(-2000)}`, {
        cause: failure,
      });
    const connectionNotifications = peer.frames.filter(isConnectionLevel);
    return {
      initialize: peer.initialize,
      initFrames,
      scenarios,
      modelRequests: [...server.requests],
      connectionNotifications,
      exit,
      stderr: peer.stderr(),
    };
  } finally {
    await server.close();
    spec.dispose();
  }
}

/**
 * Plays all scenarios directly and through the proxy.
 * @returns both views and the proxy's spans. Throws when the agent is not
 *   installed (naming the install command) or a path fails to start.
 */
export async function playAgent(agent: AgentName): Promise<AgentPlay> {
  const out = mkdtempSync(join(tmpdir(), `real-agent-${agent}-otel-`));
  const direct = await playPath(agent, (argv) => [...argv]);
  const proxied = await playPath(agent, (argv) => [
    process.execPath,
    CLI,
    'proxy',
    '--protocol',
    'acp',
    '--out',
    out,
    '--',
    ...argv,
  ]);
  const captureDir = process.env.ACP_CAPTURE_DIR;
  if (captureDir !== undefined && captureDir !== '') writeCaptures(captureDir, agent, direct);
  return { direct, proxied, spans: readSpans(out) };
}

/** Writes `<agent>-<scenario>.ndjson`: initialize, the session's `session/new`, its turns. */
function writeCaptures(dir: string, agent: AgentName, view: PathView): void {
  mkdirSync(dir, { recursive: true });
  for (const scenario of SCENARIOS) {
    const s = view.scenarios[scenario];
    const frames = [...view.initFrames, ...s.sessionFrames, ...s.turns.flatMap((t) => t.frames)];
    writeFileSync(join(dir, `${agent}-${scenario}.ndjson`), frames.map((f) => `${JSON.stringify(f)}\n`).join(''));
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** A run's temporary directories, under whatever directory `os.tmpdir()` names (TMPDIR moves it). */
const TEMP_ROOT = new RegExp(`${tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/real-agent-[a-z]+-[A-Za-z0-9]+`, 'g');
const EPOCH_MS = /(?<![0-9])1[0-9]{12}(?![0-9])/g;
const LOOPBACK_PORT = /127\.0\.0\.1:[0-9]+/g;
// claude-agent-acp 0.101's `_meta.quota.model_usage` and `usage_update.cost` count the session's side calls too
// (its title request), which finish before or after the turn's end depending on timing.
const VOLATILE_KEY = /(_ms|_at|At|[Tt]ime|^process_id$|^turn_id$|^duration$|^nanos$|^secs$|^model_usage$|^cost$)$/;

/**
 * A deep copy of `value` with what legitimately differs between two runs of
 * the same scenario replaced by placeholders: UUIDs (session, turn and
 * request ids), the temporary home/work paths, the model server's port,
 * epoch milliseconds inside strings (gemini's tool call ids), and values
 * under time- and process-id keys and claude's `model_usage` and `cost`. Everything else, order included, is kept.
 */
export function normalised(value: unknown): unknown {
  if (typeof value === 'string')
    return value
      .replace(UUID, '<uuid>')
      .replace(TEMP_ROOT, '<tmp>')
      .replace(EPOCH_MS, '<ms>')
      .replace(LOOPBACK_PORT, '127.0.0.1:<port>');
  if (Array.isArray(value)) return value.map(normalised);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = VOLATILE_KEY.test(k) ? '<volatile>' : normalised(v);
    return out;
  }
  return value;
}

/** Session updates that are not part of a turn: agents send them after `session/new`, racing the first prompt. */
const SESSION_LEVEL_UPDATES = new Set([
  'available_commands_update',
  'current_mode_update',
  'config_option_update',
  'session_info_update',
]);

function turnLevel(update: unknown): boolean {
  const kind = (update as { update?: { sessionUpdate?: unknown } }).update?.sessionUpdate;
  return typeof kind !== 'string' || !SESSION_LEVEL_UPDATES.has(kind);
}

/**
 * Notifications an agent sends once per connection, not per session or turn. codex-acp 2.6 pushes its first
 * `_auth/status_update` after the initialize response is written and an account read in its app server has
 * answered: it arrives before or after the client's first `session/new`, so in `initFrames` or in the first
 * session's frames depending on timing. {@link framesView} leaves them out; the tests compare them apart, in
 * full ({@link PathView.connectionNotifications}).
 */
export const CONNECTION_LEVEL_METHODS: ReadonlySet<string> = new Set(['_auth/status_update']);

function isConnectionLevel(f: Frame): boolean {
  const method = (f.frame as { method?: unknown; id?: unknown }).method;
  return (
    f.dir === 'agent->client' &&
    typeof method === 'string' &&
    CONNECTION_LEVEL_METHODS.has(method) &&
    (f.frame as { id?: unknown }).id === undefined
  );
}

/** Frames, normalised, less session-level `session/update` notifications (see {@link clientView}) and connection-level ones. */
export function framesView(frames: readonly Frame[]): unknown {
  return normalised(
    frames.filter(
      (f) =>
        !isConnectionLevel(f) &&
        ((f.frame as { method?: unknown }).method !== 'session/update' ||
          turnLevel((f.frame as { params?: unknown }).params)),
    ),
  );
}

/**
 * The client's view of a turn, normalised: updates (less the session-level
 * ones, whose arrival before or after the prompt is a race; `usage_update`s
 * apart, in their own order; codex's streamed command output folded into the
 * command's end update, see {@link foldStreamedOutput}), permission
 * requests, the answer or error, and the text. Raw frames are left out (they
 * hold the JSON-RPC ids the client chose).
 */
export function clientView(turn: Turn): unknown {
  const { frames: _frames, updates, ...rest } = turn;
  const kept = updates.filter(turnLevel);
  return normalised({
    ...rest,
    updates: foldRefinedToolCalls(foldStreamedOutput(kept.filter((u) => !isUsageUpdate(u)))),
    usageUpdates: kept.filter(isUsageUpdate),
  });
}

/**
 * claude-agent-acp 0.101 emits each tool call once (its `emittedToolCalls`) and refines a call it already
 * emitted with a `tool_call_update`. When the streamed `tool_use` start reaches it before the complete
 * assistant message, the client gets a `tool_call` without input (`rawInput: {}`, `content: []`, a generic
 * title) and then a `tool_call_update` with the input; otherwise one `tool_call` with the input. Which one is a
 * race inside Claude Code (both seen in CI, direct and through the proxy). This folds the first form into the
 * second: an input-less `tool_call` and the next `tool_call_update` of the same id, with no update of that id
 * between, become one `tool_call` with the update's fields over the call's. Nothing else is changed.
 */
function foldRefinedToolCalls(updates: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  const open = new Map<string, number>();
  for (const u of updates) {
    const update = (u as Partial<ToolUpdate>).update;
    const id = update?.toolCallId;
    if (update === undefined || typeof id !== 'string') {
      out.push(u);
      continue;
    }
    const rawInput = update.rawInput;
    if (
      update.sessionUpdate === 'tool_call' &&
      rawInput !== null &&
      typeof rawInput === 'object' &&
      Object.keys(rawInput).length === 0
    ) {
      open.set(id, out.length);
      out.push(u);
      continue;
    }
    const at = open.get(id);
    open.delete(id);
    if (at !== undefined && update.sessionUpdate === 'tool_call_update') {
      const call = out[at] as ToolUpdate;
      out[at] = { ...call, update: { ...call.update, ...update, sessionUpdate: 'tool_call' } };
      continue;
    }
    out.push(u);
  }
  return out;
}

type ToolUpdate = {
  sessionId?: unknown;
  update: { sessionUpdate: string; toolCallId?: string; _meta?: Record<string, unknown> } & Record<string, unknown>;
};
type OutputChunk = { data: string; terminal_id: unknown };

/** A `tool_call_update` that carries nothing but codex-acp's `_meta.terminal_output_delta` chunk. */
function outputChunkOnly(u: unknown): { toolCallId: string; chunk: OutputChunk } | undefined {
  const update = (u as Partial<ToolUpdate>).update;
  if (update?.sessionUpdate !== 'tool_call_update' || typeof update.toolCallId !== 'string') return undefined;
  if (Object.keys(update).sort().join() !== '_meta,sessionUpdate,toolCallId') return undefined;
  const meta = update._meta ?? {};
  const chunk = meta.terminal_output_delta as Partial<OutputChunk> | undefined;
  if (Object.keys(meta).join() !== 'terminal_output_delta' || typeof chunk?.data !== 'string') return undefined;
  return { toolCallId: update.toolCallId, chunk: { data: chunk.data, terminal_id: chunk.terminal_id } };
}

/**
 * codex-acp 2.6 sends a command's output as `_meta.terminal_output_delta` chunk updates while the app server
 * streams it, and whatever did not stream inside the command's end update (`terminal_exit`), under the same key
 * (its `commandEndMeta`). Whether codex streams the few bytes of the test's command before it reports the end is
 * a race, so the client gets either [chunk, end] or [end with the chunk]. This folds chunk-only updates right
 * before the end update of the same tool call and terminal into that end update (their data concatenated), the
 * second form; nothing else is changed, and the output's bytes are still compared.
 */
function foldStreamedOutput(updates: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  let pending: { toolCallId: string; chunk: OutputChunk; updates: unknown[] } | undefined;
  const flush = (): void => {
    if (pending !== undefined) out.push(...pending.updates);
    pending = undefined;
  };
  for (const u of updates) {
    const only = outputChunkOnly(u);
    if (only !== undefined) {
      if (
        pending !== undefined &&
        pending.toolCallId === only.toolCallId &&
        pending.chunk.terminal_id === only.chunk.terminal_id
      ) {
        pending = {
          ...pending,
          chunk: { ...pending.chunk, data: pending.chunk.data + only.chunk.data },
          updates: [...pending.updates, u],
        };
      } else {
        flush();
        pending = { ...only, updates: [u] };
      }
      continue;
    }
    const update = (u as Partial<ToolUpdate>).update;
    const exit = update?._meta?.terminal_exit as { terminal_id?: unknown } | undefined;
    if (
      pending !== undefined &&
      update?.sessionUpdate === 'tool_call_update' &&
      update.toolCallId === pending.toolCallId &&
      exit?.terminal_id === pending.chunk.terminal_id &&
      update._meta?.terminal_output_delta === undefined
    ) {
      out.push({
        ...(u as ToolUpdate),
        update: { ...update, _meta: { ...update._meta, terminal_output_delta: pending.chunk } },
      });
      pending = undefined;
      continue;
    }
    flush();
    out.push(u);
  }
  flush();
  return out;
}

/** codex sends `usage_update` from another task than its tool output: its place among the other updates is a race. */
function isUsageUpdate(update: unknown): boolean {
  return (update as { update?: { sessionUpdate?: unknown } }).update?.sessionUpdate === 'usage_update';
}

/** `invoke_agent` spans of a session, oldest first. */
export function runSpans(spans: readonly OtlpSpan[], sessionId: string): OtlpSpan[] {
  return spans
    .filter((s) => s.name.startsWith('invoke_agent') && attributes(s)[ATTR_GEN_AI_CONVERSATION_ID] === sessionId)
    .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
}

/** `execute_tool` spans whose parent is `run`. */
export function toolSpans(spans: readonly OtlpSpan[], run: OtlpSpan): OtlpSpan[] {
  return spans.filter((s) => s.name.startsWith('execute_tool') && s.parentSpanId === run.spanId);
}

/** The `subagent.output` value the run's span must carry for the text a client received. */
export function outputOf(text: string): string {
  return JSON.stringify([{ type: 'text', text }]);
}
