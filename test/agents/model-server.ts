/**
 * A scripted model server for the real-agent tests: one HTTP server on
 * 127.0.0.1 that speaks the three streaming dialects the real ACP agents use,
 * so that claude-agent-acp, codex-acp and gemini-cli run offline and keyless.
 *
 * - Anthropic Messages (`POST /v1/messages`, server-sent events) for Claude;
 * - OpenAI Responses (`POST /v1/responses`, server-sent events) for Codex;
 * - Gemini (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, and
 *   the non-streaming `:generateContent` / `:countTokens`) for gemini-cli.
 *
 * The scenario of a request is named by the last `scenario:<name>#<nonce>`
 * marker anywhere in its body (the prompt the test sent); the nonce keeps
 * per-turn state apart when one agent process plays many turns. An agent's
 * side requests (titles, checks) get a short normal answer and leave the
 * turn's state alone: requests without a marker, and those that are not a
 * turn's own (Claude and Codex: no top-level `tools`; Gemini: not
 * `:streamGenerateContent`; any agent: the conversation after the prompt
 * already holds a final answer, like Claude Code's prompt suggestion after a
 * turn), even when they quote the marker. Scenarios (texts and token counts are API: tests assert them
 * literally):
 * - `normal`: "The answer is 42." then a normal stop;
 * - `max-tokens`: "Here is the first part of a long" then a stop at the
 *   output-token limit (every request of the turn, retries included);
 * - `limit-once`: the first request of the turn as `max-tokens`, every later
 *   one "Continuing: the rest of the answer." and a normal stop;
 * - `auth-fail`: HTTP 401 with the dialect's authentication error body;
 * - `tool`: a call of the dialect's shell tool (Claude `Bash`, Codex
 *   `exec_command` asking for escalated permissions, Gemini
 *   `run_shell_command`) running `echo tool-ran | tee tool-ran.txt`, a
 *   command that writes, so that every agent asks permission; once the
 *   request carries the tool's result, "The tool said: done." and a normal
 *   stop;
 * - the delegation scenarios of {@link DELEGATION_SCENARIOS}: the parent
 *   calls the agent's delegation tool with a prompt carrying a
 *   `child:<answer|cut|hang>#<nonce>` marker; a turn's request whose
 *   conversation names that marker before any `scenario:` marker is the
 *   subagent's, answered as its kind says (a `hang` request is held open).
 *
 * Bounded: request bodies over 8 MiB are refused with 413, the request log
 * keeps the last 200 entries, and `close()` ends every open connection.
 * A test fixture: it imports nothing from the observer.
 *
 * @module subagent-otel/test/agents/model-server
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Scenario names the server plays. */
export const SCENARIOS = ['normal', 'max-tokens', 'limit-once', 'auth-fail', 'tool'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/**
 * Delegation scenarios (the parent delegates to a subagent through the
 * agent's own delegation tool; see {@link DELEGATION_TOOLS}), kept apart from
 * {@link SCENARIOS} so that the per-agent comparison suites do not play them:
 * - `delegate`: a foreground subagent answering {@link TEXT.child}, then the
 *   parent's {@link TEXT.delegated};
 * - `delegate-bg`: the same with a background subagent (Claude Code: the
 *   parent answers {@link TEXT.waiting} after the launch, and its final answer
 *   once the task notification arrives);
 * - `delegate-cut` / `delegate-bg-cut`: the subagent is cut at its output
 *   limit on every request ({@link TEXT.partial});
 * - `delegate-parent-cut`: the subagent answers, the parent's last answer is
 *   cut at its output limit on every request;
 * - `delegate-hang`: the subagent's request is never answered (held open
 *   until the client cancels and the server closes), for interrupts.
 */
export const DELEGATION_SCENARIOS = [
  'delegate',
  'delegate-bg',
  'delegate-cut',
  'delegate-bg-cut',
  'delegate-parent-cut',
  'delegate-hang',
] as const;
export type DelegationScenario = (typeof DELEGATION_SCENARIOS)[number];
type AnyScenario = Scenario | DelegationScenario;
/** What the subagent of a delegation scenario does (named by its `child:<kind>#<nonce>` marker). */
type ChildKind = 'answer' | 'cut' | 'hang';

/** The wire dialect of one request. */
export type Dialect = 'anthropic' | 'openai' | 'gemini';

/** Texts the scenarios stream (API). */
export const TEXT = {
  normal: 'The answer is 42.',
  partial: 'Here is the first part of a long',
  continued: 'Continuing: the rest of the answer.',
  afterTool: 'The tool said: done.',
  side: 'ok',
  /** A subagent's answer in the delegation scenarios. */
  child: 'The subagent found 7 files.',
  /** The parent's last answer after its subagent in the delegation scenarios. */
  delegated: 'The subagent reported back.',
  /** Claude Code's parent after launching a background subagent, before its notification. */
  waiting: 'The subagent is working.',
} as const;

/** The shell command the `tool` scenario asks the agent to run. */
export const TOOL_COMMAND = 'echo tool-ran | tee tool-ran.txt';

/** Token counts each answer reports (API). */
export const USAGE = { input: 1200, cached: 200, output: 17, reasoning: 0 } as const;
/** Token counts a subagent's answers report in the delegation scenarios (API). */
export const CHILD_USAGE = { input: 900, cached: 100, output: 11, reasoning: 0 } as const;

/** One request the server saw. */
export interface SeenRequest {
  readonly dialect: Dialect | 'other';
  readonly method: string;
  readonly path: string;
  readonly scenario: AnyScenario | undefined;
  readonly nonce: string | undefined;
  /** What the server answered: a scenario step or `side`. */
  readonly answered: string;
  readonly body: unknown;
}

/** A running model server. */
export interface ModelServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The last requests seen (at most 200), oldest first. */
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

const MAX_BODY = 8 * 1024 * 1024;
const MAX_LOG = 200;
const MARKER = /scenario:([a-z-]+)#([A-Za-z0-9_-]+)/g;
const CHILD_MARKER = /child:(answer|cut|hang)#([A-Za-z0-9_-]+)/;

type Step =
  | 'normal'
  | 'truncated'
  | 'continued'
  | 'auth-fail'
  | 'tool-call'
  | 'after-tool'
  | 'side'
  | 'search-call'
  | 'delegate-call'
  | 'wait-call'
  | 'waiting'
  | 'delegated'
  | 'child-answer'
  | 'child-truncated'
  | 'hang';

/** Starts the server on 127.0.0.1 (port 0: the kernel picks one). */
export async function startModelServer(port = 0): Promise<ModelServer> {
  const requests: SeenRequest[] = [];
  const turns = new Map<string, number>(); // nonce -> main requests seen so far
  let sequence = 0;

  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((raw) => {
        if (raw === undefined) {
          res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"request body too large"}');
          return;
        }
        const dialect = dialectOf(req.method ?? 'GET', req.url ?? '/');
        let body: unknown;
        try {
          body = raw.length > 0 ? JSON.parse(raw) : undefined;
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"body is not JSON"}');
          return;
        }
        const child = childOf(dialect, req.url ?? '/', body);
        const marker = child === undefined ? lastMarker(raw) : { scenario: undefined, nonce: child.nonce };
        const { scenario, nonce } = marker;
        const step =
          child !== undefined
            ? childStep(child.kind)
            : stepFor(dialect, req.url ?? '/', raw, body, scenario, nonce, turns);
        requests.push({
          dialect,
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          scenario,
          nonce,
          answered: step,
          body,
        });
        if (child !== undefined) turns.set(`child-${child.nonce}`, (turns.get(`child-${child.nonce}`) ?? 0) + 1);
        if (requests.length > MAX_LOG) requests.shift();
        sequence += 1;
        // Ids the agents pass on to the client (message, tool call ids) come from the turn, not the arrival
        // order: side requests (titles, checks) race the main ones and must not shift them.
        const tag =
          step === 'side' || nonce === undefined
            ? `side_${sequence}`
            : child !== undefined
              ? `child_${nonce}_${turns.get(`child-${nonce}`) ?? 0}`
              : `${nonce}_${turns.get(nonce) ?? 0}`;
        if (step === 'hang') return; // held open: the client cancels, close() ends the connection
        answer(dialect, req.url ?? '/', body, step, tag, res, { scenario, nonce });
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    origin: `http://127.0.0.1:${actual}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function dialectOf(method: string, url: string): Dialect | 'other' {
  if (method !== 'POST') return 'other';
  if (/\/v1\/messages(\?|$)/.test(url)) return 'anthropic';
  if (/\/responses(\?|$)/.test(url)) return 'openai';
  if (/\/models\/[^/:]+:(streamGenerateContent|generateContent|countTokens)/.test(url)) return 'gemini';
  return 'other';
}

function isScenario(name: string): name is AnyScenario {
  return (SCENARIOS as readonly string[]).includes(name) || (DELEGATION_SCENARIOS as readonly string[]).includes(name);
}

function isDelegation(scenario: AnyScenario): scenario is DelegationScenario {
  return (DELEGATION_SCENARIOS as readonly string[]).includes(scenario);
}

/** The conversation a request carries (Anthropic `messages`, Responses `input`, Gemini `contents`), as JSON. */
function conversationOf(dialect: Dialect | 'other', body: unknown): string {
  const b = (body ?? {}) as { messages?: unknown; input?: unknown; contents?: unknown };
  const part =
    dialect === 'anthropic'
      ? b.messages
      : dialect === 'openai'
        ? b.input
        : dialect === 'gemini'
          ? b.contents
          : undefined;
  return JSON.stringify(part ?? null);
}

/**
 * The subagent a turn's own request belongs to: its conversation names a `child:` marker before any `scenario:`
 * marker (the subagent's first message is the prompt its parent wrote). The parent's requests name the scenario
 * first (its prompt) and the child marker only later, in its delegation call.
 */
function childOf(
  dialect: Dialect | 'other',
  url: string,
  body: unknown,
): { kind: ChildKind; nonce: string } | undefined {
  if (dialect === 'other') return undefined;
  if (dialect === 'gemini' && !url.includes(':streamGenerateContent')) return undefined;
  if (dialect === 'anthropic' && !isMainAnthropic(body)) return undefined;
  if (dialect === 'openai' && !offersTools(body)) return undefined;
  const conversation = conversationOf(dialect, body);
  const m = CHILD_MARKER.exec(conversation);
  if (m === null) return undefined;
  const parent = conversation.indexOf('scenario:');
  if (parent !== -1 && parent < m.index) return undefined;
  return { kind: m[1] as ChildKind, nonce: m[2]! };
}

function childStep(kind: ChildKind): Step {
  return kind === 'answer' ? 'child-answer' : kind === 'cut' ? 'child-truncated' : 'hang';
}

function lastMarker(raw: string): { scenario: AnyScenario | undefined; nonce: string | undefined } {
  let scenario: AnyScenario | undefined;
  let nonce: string | undefined;
  for (const m of raw.matchAll(MARKER)) {
    if (isScenario(m[1]!)) {
      scenario = m[1];
      nonce = m[2];
    }
  }
  return { scenario, nonce };
}

/** The body from its last marker on (the turn's prompt and what the conversation holds after it); all of it without one. */
function afterLastMarker(raw: string): string {
  return raw.slice(Math.max(0, raw.lastIndexOf('scenario:')));
}

/** Whether the body, after the last marker, carries a tool result in the dialect's shape. */
function hasToolResult(dialect: Dialect | 'other', raw: string): boolean {
  const tail = afterLastMarker(raw);
  if (dialect === 'anthropic') return tail.includes('"tool_result"');
  if (dialect === 'openai')
    return tail.includes('"function_call_output"') || tail.includes('"custom_tool_call_output"');
  if (dialect === 'gemini') return tail.includes('"functionResponse"');
  return false;
}

function stepFor(
  dialect: Dialect | 'other',
  url: string,
  raw: string,
  body: unknown,
  scenario: AnyScenario | undefined,
  nonce: string | undefined,
  turns: Map<string, number>,
): Step {
  if (dialect === 'other' || scenario === undefined || nonce === undefined) return 'side';
  if (dialect === 'gemini' && !url.includes(':streamGenerateContent')) return 'side';
  if (dialect === 'anthropic' && !isMainAnthropic(body)) return 'side';
  // codex's side requests offer no tools of their own (no top-level `tools`). Its title request (codex-acp 2.6
  // asks one after a new session's first turn, fire and forget, so it arrives before or after the turn's end
  // or, after the last turn, not at all before shutdown) still carries the scenario marker and, in an
  // `additional_tools` input item, a nested `"tools":[{`: only the top level tells a turn's request.
  if (dialect === 'openai' && !offersTools(body)) return 'side';
  // A request whose conversation already holds the turn's final answer comes after the turn: Claude Code's
  // prompt suggestion ("[SUGGESTION MODE: ...]", on by default) forks the finished conversation with the same
  // tools, fire and forget, so it arrives before the next turn or, after the last one, not at all before shutdown.
  if (answeredAfterMarker(raw)) return 'side';
  if (isDelegation(scenario) && raw.includes('SUGGESTION MODE')) return 'side';
  const seen = turns.get(nonce) ?? 0;
  turns.set(nonce, seen + 1);
  if (isDelegation(scenario)) return delegationStep(dialect, body, scenario);
  switch (scenario) {
    case 'normal':
      return 'normal';
    case 'max-tokens':
      return 'truncated';
    case 'limit-once':
      return seen === 0 ? 'truncated' : 'continued';
    case 'auth-fail':
      return 'auth-fail';
    case 'tool':
      return hasToolResult(dialect, raw) ? 'after-tool' : 'tool-call';
  }
}

/**
 * The parent's step in a delegation scenario, from its conversation after the prompt: no result of the delegation
 * call yet, the call; Codex with the spawn's result only, the wait call; Claude Code with a background launch and no
 * task notification yet, the interim answer; then the last answer (cut in `delegate-parent-cut`).
 */
function delegationStep(dialect: Dialect, body: unknown, scenario: DelegationScenario): Step {
  // The conversation only: Claude Code's tool descriptions (after the messages in the body) name `<task-notification>`.
  const tail = afterLastMarker(conversationOf(dialect, body));
  const results =
    dialect === 'anthropic'
      ? count(tail, '"tool_result"')
      : dialect === 'openai'
        ? count(tail, '"function_call_output"') +
          count(tail, '"custom_tool_call_output"') +
          count(tail, '"tool_search_output"')
        : count(tail, '"functionResponse"');
  // Codex 0.166 offers its multi-agent tools deferred, behind `tool_search`: search, spawn, wait.
  if (dialect === 'openai')
    return results === 0
      ? 'search-call'
      : results === 1
        ? 'delegate-call'
        : results === 2
          ? 'wait-call'
          : scenario === 'delegate-parent-cut'
            ? 'truncated'
            : 'delegated';
  if (results === 0) return 'delegate-call';
  if (
    dialect === 'anthropic' &&
    (scenario === 'delegate-bg' || scenario === 'delegate-bg-cut') &&
    !tail.includes('<task-notification>')
  ) {
    return 'waiting';
  }
  return scenario === 'delegate-parent-cut' ? 'truncated' : 'delegated';
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n += 1;
  return n;
}

/** What the subagent of a delegation scenario does. */
function childKindOf(scenario: DelegationScenario): ChildKind {
  if (scenario === 'delegate-cut' || scenario === 'delegate-bg-cut') return 'cut';
  if (scenario === 'delegate-hang') return 'hang';
  return 'answer';
}

/** The texts that end a turn: an answer with a normal stop (a cut answer is not one, the agent goes on). */
const FINAL_TEXTS = [TEXT.normal, TEXT.continued, TEXT.afterTool, TEXT.delegated] as const;

/** Whether the body, after the last marker (the turn's prompt), already holds a final answer of this server. */
function answeredAfterMarker(raw: string): boolean {
  const tail = afterLastMarker(raw);
  return FINAL_TEXTS.some((text) => tail.includes(text));
}

/** Whether the request body offers tools at its top level (`tools`: a non-empty array), the mark of a turn's own request. */
function offersTools(body: unknown): boolean {
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  return Array.isArray(tools) && tools.length > 0;
}

/** Claude's main-loop requests stream and offer tools (top level); its side requests (titles, checks) do not. */
function isMainAnthropic(body: unknown): boolean {
  return (body as { stream?: unknown } | undefined)?.stream === true && offersTools(body);
}

/** The turn a request belongs to (for the calls the delegation scenarios write). */
interface TurnContext {
  readonly scenario: AnyScenario | undefined;
  readonly nonce: string | undefined;
}

/** A tool call the server answers with: the tool's name and its arguments. */
interface Call {
  readonly name: string;
  readonly input: Record<string, unknown>;
  /** The tool's namespace (Responses: Codex's deferred multi-agent tools live in `multi_agent_v1`). */
  readonly namespace?: string;
}

/** The prompt a delegation scenario's parent gives its subagent: it carries the child marker. */
function childPrompt(ctx: TurnContext): string {
  const kind = ctx.scenario !== undefined && isDelegation(ctx.scenario) ? childKindOf(ctx.scenario) : 'answer';
  return `Count the files in this folder. child:${kind}#${ctx.nonce ?? 'none'}`;
}

/** The call of a `tool-call`, `delegate-call` or `wait-call` step in `dialect`. */
function callOf(dialect: Dialect, step: Step, ctx: TurnContext, body: unknown): Call {
  if (step === 'tool-call') {
    if (dialect === 'anthropic')
      return { name: 'Bash', input: { command: TOOL_COMMAND, description: 'Print a marker' } };
    if (dialect === 'openai')
      return {
        name: 'exec_command',
        input: { cmd: TOOL_COMMAND, sandbox_permissions: 'require_escalated', justification: 'Print a marker?' },
      };
    return { name: 'run_shell_command', input: { command: TOOL_COMMAND, description: 'Print a marker' } };
  }
  const prompt = childPrompt(ctx);
  if (step === 'wait-call')
    return {
      name: 'wait_agent',
      namespace: 'multi_agent_v1',
      input: { targets: spawnedIds(body), timeout_ms: 60_000 },
    };
  if (dialect === 'anthropic') {
    const background = ctx.scenario === 'delegate-bg' || ctx.scenario === 'delegate-bg-cut';
    return {
      name: 'Agent',
      input: {
        description: 'Count the files',
        prompt,
        subagent_type: 'general-purpose',
        run_in_background: background,
      },
    };
  }
  if (dialect === 'openai') return { name: 'spawn_agent', namespace: 'multi_agent_v1', input: { message: prompt } };
  return { name: 'invoke_agent', input: { agent_name: 'generalist', prompt } };
}

/** Agent ids named in the outputs of a Responses conversation's function calls (Codex's spawn result). */
function spawnedIds(body: unknown): string[] {
  const input = (body as { input?: unknown } | undefined)?.input;
  const ids: string[] = [];
  if (!Array.isArray(input)) return ids;
  for (const item of input as Array<{ type?: unknown; output?: unknown }>) {
    if (item.type !== 'function_call_output') continue;
    const text = typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
    for (const m of text.matchAll(/"(?:agent_id|id|thread_id|agent_path|task_name)"\s*:\s*"([^"]+)"/g)) ids.push(m[1]!);
  }
  return ids;
}

function isCall(step: Step): boolean {
  return step === 'tool-call' || step === 'delegate-call' || step === 'wait-call' || step === 'search-call';
}

function isCut(step: Step): boolean {
  return step === 'truncated' || step === 'child-truncated';
}

function usageOf(step: Step): { input: number; cached: number; output: number; reasoning: number } {
  return step === 'child-answer' || step === 'child-truncated' ? CHILD_USAGE : USAGE;
}

function answer(
  dialect: Dialect | 'other',
  url: string,
  body: unknown,
  step: Step,
  seq: string,
  res: ServerResponse,
  ctx: TurnContext,
): void {
  if (dialect === 'other') {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    return;
  }
  if (step === 'auth-fail') {
    authFailure(dialect, res);
    return;
  }
  if (dialect === 'anthropic') {
    if (url.includes('/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: USAGE.input }));
      return;
    }
    anthropic(body, step, seq, res, ctx);
  } else if (dialect === 'openai') openai(body, step, seq, res, ctx);
  else if (url.includes(':countTokens'))
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: USAGE.input }));
  else gemini(url, body, step, res, ctx);
}

function authFailure(dialect: Dialect, res: ServerResponse): void {
  const body =
    dialect === 'anthropic'
      ? { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }
      : dialect === 'openai'
        ? {
            error: {
              message: 'Incorrect API key provided: dummy.',
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          }
        : {
            error: { code: 401, message: 'API key not valid. Please pass a valid API key.', status: 'UNAUTHENTICATED' },
          };
  res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function textOf(step: Step): string[] {
  switch (step) {
    case 'normal':
      return ['The answer ', 'is 42.'];
    case 'truncated':
      return ['Here is the first ', 'part of a long'];
    case 'continued':
      return ['Continuing: the rest ', 'of the answer.'];
    case 'after-tool':
      return ['The tool said: ', 'done.'];
    case 'child-truncated':
      return ['Here is the first ', 'part of a long'];
    case 'child-answer':
      return ['The subagent found ', '7 files.'];
    case 'delegated':
      return ['The subagent ', 'reported back.'];
    case 'waiting':
      return ['The subagent ', 'is working.'];
    default:
      return [TEXT.side];
  }
}

function sse(res: ServerResponse): (event: string | undefined, data: unknown) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return (event, data) => {
    res.write(`${event !== undefined ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  };
}

// ---------------------------------------------------------------- Anthropic

function anthropic(body: unknown, step: Step, seq: string, res: ServerResponse, ctx: TurnContext): void {
  const request = (body ?? {}) as { stream?: boolean; model?: string };
  const model = request.model ?? 'claude-sonnet-4-5';
  const id = `msg_fixture_${seq}`;
  const stopReason = isCut(step) ? 'max_tokens' : isCall(step) ? 'tool_use' : 'end_turn';
  const u = usageOf(step);
  const usage = {
    input_tokens: u.input,
    output_tokens: u.output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cached,
  };
  const call = isCall(step) ? callOf('anthropic', step, ctx, body) : undefined;
  const toolId = `toolu_fixture_${seq}`;
  if (request.stream !== true) {
    const content =
      call !== undefined
        ? [{ type: 'tool_use', id: toolId, name: call.name, input: call.input }]
        : [{ type: 'text', text: textOf(step).join('') }];
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  const send = sse(res);
  send('message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (call !== undefined) {
    send('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} },
    });
    send('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) },
    });
  } else {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const piece of textOf(step))
      send('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: piece },
      });
  }
  send('content_block_stop', { type: 'content_block_stop', index: 0 });
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: u.output },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

// ---------------------------------------------------------------- OpenAI Responses

function openai(body: unknown, step: Step, seq: string, res: ServerResponse, ctx: TurnContext): void {
  const send = sse(res);
  const id = `resp_fixture_${seq}`;
  const base = { id, object: 'response', created_at: 1_700_000_000, model: 'gpt-5.4-mini', output: [] as unknown[] };
  const u = usageOf(step);
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.output,
  };
  send('response.created', {
    type: 'response.created',
    sequence_number: 0,
    response: { ...base, status: 'in_progress' },
  });
  let n = 1;
  let item: Record<string, unknown>;
  if (step === 'search-call') {
    item = {
      id: `ts_fixture_${seq}`,
      type: 'tool_search_call',
      status: 'completed',
      call_id: `call_fixture_${seq}`,
      execution: 'client',
      arguments: { query: 'spawn agent', limit: 8 },
    };
    send('response.output_item.added', {
      type: 'response.output_item.added',
      sequence_number: n++,
      output_index: 0,
      item,
    });
    send('response.output_item.done', {
      type: 'response.output_item.done',
      sequence_number: n++,
      output_index: 0,
      item,
    });
  } else if (isCall(step)) {
    const call = callOf('openai', step, ctx, body);
    item = {
      id: `fc_fixture_${seq}`,
      type: 'function_call',
      status: 'completed',
      call_id: `call_fixture_${seq}`,
      name: call.name,
      ...(call.namespace !== undefined ? { namespace: call.namespace } : {}),
      arguments: JSON.stringify(call.input),
    };
    send('response.output_item.added', {
      type: 'response.output_item.added',
      sequence_number: n++,
      output_index: 0,
      item: { ...item, arguments: '' },
    });
    send('response.output_item.done', {
      type: 'response.output_item.done',
      sequence_number: n++,
      output_index: 0,
      item,
    });
  } else {
    const itemId = `msg_fixture_${seq}`;
    const text = textOf(step).join('');
    send('response.output_item.added', {
      type: 'response.output_item.added',
      sequence_number: n++,
      output_index: 0,
      item: { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
    });
    send('response.content_part.added', {
      type: 'response.content_part.added',
      sequence_number: n++,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of textOf(step)) {
      send('response.output_text.delta', {
        type: 'response.output_text.delta',
        sequence_number: n++,
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta,
      });
    }
    send('response.output_text.done', {
      type: 'response.output_text.done',
      sequence_number: n++,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      text,
    });
    const part = { type: 'output_text', text, annotations: [] };
    send('response.content_part.done', {
      type: 'response.content_part.done',
      sequence_number: n++,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part,
    });
    item = {
      id: itemId,
      type: 'message',
      role: 'assistant',
      status: isCut(step) ? 'incomplete' : 'completed',
      content: [part],
    };
    send('response.output_item.done', {
      type: 'response.output_item.done',
      sequence_number: n++,
      output_index: 0,
      item,
    });
  }
  if (isCut(step)) {
    send('response.incomplete', {
      type: 'response.incomplete',
      sequence_number: n++,
      response: {
        ...base,
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        output: [item],
        usage,
      },
    });
  } else {
    send('response.completed', {
      type: 'response.completed',
      sequence_number: n++,
      response: { ...base, status: 'completed', output: [item], usage },
    });
  }
  res.end();
}

// ---------------------------------------------------------------- Gemini

function gemini(url: string, body: unknown, step: Step, res: ServerResponse, ctx: TurnContext): void {
  const finish = isCut(step) ? 'MAX_TOKENS' : 'STOP';
  const u = usageOf(step);
  const usageMetadata = {
    promptTokenCount: u.input,
    candidatesTokenCount: u.output,
    totalTokenCount: u.input + u.output,
    cachedContentTokenCount: u.cached,
  };
  // Gemini CLI's subagents finish only through their `complete_task` tool (a text answer gets a nudge to call it).
  const call: Call | undefined = isCall(step)
    ? callOf('gemini', step, ctx, body)
    : step === 'child-answer'
      ? { name: 'complete_task', input: { result: { response: TEXT.child } } }
      : undefined;
  const chunks: Array<Record<string, unknown>> =
    call !== undefined
      ? [{ functionCall: { name: call.name, args: call.input } }]
      : textOf(step).map((text) => ({ text }));
  if (!url.includes(':streamGenerateContent')) {
    // Side calls (next-speaker checks and the like) want JSON; answer the shape they parse.
    const text =
      step === 'side'
        ? JSON.stringify({ reasoning: 'The model answered.', next_speaker: 'user' })
        : chunks.map((c) => c.text ?? '').join('');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
        modelVersion: 'gemini-fixture',
      }),
    );
    return;
  }
  const send = sse(res);
  chunks.forEach((part, i) => {
    const last = i === chunks.length - 1;
    send(undefined, {
      candidates: [{ content: { role: 'model', parts: [part] }, index: 0, ...(last ? { finishReason: finish } : {}) }],
      ...(last ? { usageMetadata } : {}),
      modelVersion: 'gemini-fixture',
    });
  });
  res.end();
}
