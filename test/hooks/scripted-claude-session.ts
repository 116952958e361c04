/**
 * A scripted Claude Code session for the hooks' tests: writes a session's
 * transcript as Claude Code 2.1 does, line by line with the current time
 * (the main file `<projects>/<project>/<session>.jsonl`, each subagent's
 * `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`), and runs
 * the hook command `setup` installed at each end event, with the payload
 * Claude Code gives it, through `sh -c` as Claude Code runs command hooks.
 *
 * Record shapes follow the Claude Code 2.1.318 session generated here
 * (test/transcripts/claude-code/generated/foreground/): `type`, `uuid`,
 * `parentUuid`, `sessionId`, `timestamp`, `isSidechain`, `agentId` on a
 * subagent's lines, `message` as the Messages API returns it. Hook payloads
 * follow code.claude.com/docs/en/hooks ("Hook input": `session_id`,
 * `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`;
 * `SubagentStop` adds `stop_hook_active`, `agent_id`, `agent_type`,
 * `agent_transcript_path`, `last_assistant_message`; `SessionEnd` adds `reason`).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const USAGE = { input_tokens: 1200, cache_creation_input_tokens: 0, cache_read_input_tokens: 200, output_tokens: 17 };
const CHILD_USAGE = {
  input_tokens: 900,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 100,
  output_tokens: 11,
};

/** What one hook run took and saw. */
export interface HookRun {
  readonly event: string;
  /** Epoch ms when the hook process was started. */
  readonly startedAt: number;
  /** Its wall time, ms. */
  readonly wallMs: number;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` with `sh -c`, `payload` on stdin, as Claude Code runs a command hook. */
export function runHookCommand(command: string, payload: unknown, env: NodeJS.ProcessEnv): Promise<HookRun> {
  const event = (payload as { hook_event_name?: string }).hook_event_name ?? '';
  return new Promise((done, fail) => {
    const startedAt = Date.now();
    const child = spawn('sh', ['-c', command], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.stdin.on('error', () => undefined); // a hook that exits before reading its input (EPIPE): its exit code says it
    child.on('close', (code) => done({ event, startedAt, wallMs: Date.now() - startedAt, code, stdout, stderr }));
    child.stdin.end(JSON.stringify(payload));
  });
}

/** A session being written. */
export class ScriptedClaudeSession {
  readonly sessionId = randomUUID();
  readonly projectDir: string;
  readonly mainFile: string;
  readonly hookRuns: HookRun[] = [];
  #last: string | null = null;

  readonly cwd: string;
  /** The command installed for an event. */
  readonly hook: (event: string) => string;
  /** The environment the agent gives its hooks. */
  readonly env: NodeJS.ProcessEnv;
  /** Fields added to every line (Claude Code's `gitBranch`, say). */
  lineFields: Record<string, unknown> = {};

  constructor(projects: string, cwd: string, hook: (event: string) => string, env: NodeJS.ProcessEnv) {
    this.cwd = cwd;
    this.hook = hook;
    this.env = env;
    this.projectDir = join(projects, cwd.replaceAll('/', '-'));
    mkdirSync(this.projectDir, { recursive: true });
    this.mainFile = join(this.projectDir, `${this.sessionId}.jsonl`);
  }

  #line(file: string, fields: Record<string, unknown>, chain: { last: string | null }): void {
    const uuid = randomUUID();
    const line = {
      parentUuid: chain.last,
      ...fields,
      uuid,
      timestamp: new Date().toISOString(),
      userType: 'external',
      entrypoint: 'cli',
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: '2.1.318',
      ...this.lineFields,
    };
    chain.last = uuid;
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }

  #main(fields: Record<string, unknown>): void {
    const chain = { last: this.#last };
    this.#line(this.mainFile, { isSidechain: false, ...fields }, chain);
    this.#last = chain.last;
  }

  /** The user's prompt. */
  prompt(text: string): void {
    this.#main({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } });
  }

  /** The parent's model answer: text, ending the turn. */
  answer(text: string): void {
    this.#main({
      type: 'assistant',
      message: {
        id: `msg_${randomUUID()}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-5-5',
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        usage: USAGE,
      },
    });
  }

  /**
   * A foreground delegation: the parent's `Agent` tool call, the subagent's
   * transcript (its prompt, then `answer`), its `SubagentStop` hook, then
   * the tool result in the parent. @returns the subagent's id and file.
   */
  async delegate(prompt: string, answer: string): Promise<{ agentId: string; file: string }> {
    const toolUseId = `toolu_${randomUUID().replaceAll('-', '')}`;
    this.#main({
      type: 'assistant',
      message: {
        id: `msg_${randomUUID()}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-5-5',
        content: [
          {
            type: 'tool_use',
            id: toolUseId,
            name: 'Agent',
            input: { description: 'Delegated work', prompt, subagent_type: 'general-purpose' },
          },
        ],
        stop_reason: 'tool_use',
        usage: USAGE,
      },
    });
    const agentId = randomUUID().replaceAll('-', '').slice(0, 17);
    const folder = join(this.projectDir, this.sessionId, 'subagents');
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `agent-${agentId}.jsonl`);
    writeFileSync(
      join(folder, `agent-${agentId}.meta.json`),
      JSON.stringify({ agentType: 'general-purpose', description: 'Delegated work', toolUseId }),
    );
    const chain = { last: null as string | null };
    this.#line(file, { isSidechain: true, agentId, type: 'user', message: { role: 'user', content: prompt } }, chain);
    this.#line(
      file,
      {
        isSidechain: true,
        agentId,
        type: 'assistant',
        message: {
          id: `msg_${randomUUID()}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-opus-5-5',
          content: [{ type: 'text', text: answer }],
          stop_reason: 'end_turn',
          usage: CHILD_USAGE,
        },
      },
      chain,
    );
    await this.fire({
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      agent_id: agentId,
      agent_type: 'general-purpose',
      agent_transcript_path: file,
      last_assistant_message: answer,
    });
    this.#main({
      type: 'user',
      message: {
        role: 'user',
        content: [{ tool_use_id: toolUseId, type: 'tool_result', content: [{ type: 'text', text: answer }] }],
      },
      toolUseResult: {
        status: 'completed',
        prompt,
        agentId,
        agentType: 'general-purpose',
        content: [{ type: 'text', text: answer }],
        totalTokens: 1011,
        usage: CHILD_USAGE,
      },
    });
    return { agentId, file };
  }

  /** Runs the hook installed for `payload.hook_event_name` with the common fields added. */
  async fire(payload: Record<string, unknown>): Promise<HookRun> {
    const full = {
      session_id: this.sessionId,
      transcript_path: this.mainFile,
      cwd: this.cwd,
      permission_mode: 'default',
      ...payload,
    };
    const run = await runHookCommand(this.hook(String(payload['hook_event_name'])), full, this.env);
    this.hookRuns.push(run);
    return run;
  }
}
