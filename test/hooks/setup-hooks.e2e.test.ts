/**
 * The hooks end to end, as a user meets them: `subagent-otel setup
 * claude-code` on a settings file that holds the user's own hooks, then a
 * scripted Claude Code session (test/hooks/scripted-claude-session.ts) that
 * delegates twice and runs the installed hook command at each end event, as
 * Claude Code runs it (`sh -c`, payload on stdin, no OTEL_* variables). Nothing
 * is started by hand: the first hook starts the watcher. The idle bound stays
 * at its default (10 minutes), so a run that arrives came by its hook.
 * Then a repeated hook, a killed watcher, and `setup --remove` restoring
 * the file byte for byte.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpans, runCli, type OtlpSpan } from '../helpers/cli.js';
import { ScriptedClaudeSession } from './scripted-claude-session.js';

const USERS =
  '{\n\t"permissions": {"defaultMode": "default"},\n\t"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}';

let root: string;
let env: NodeJS.ProcessEnv;
let out: string;
let settingsPath: string;
let lockPath: string;
/** The first session and its first subagent, whose hook is fired again later. */
let firstSession: ScriptedClaudeSession;
let firstChild: { agentId: string; file: string };

/** The agent's environment for its hooks: Claude Code strips OTEL_*; nothing of the test's own. */
function agentEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: join(root, 'home'),
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    XDG_STATE_HOME: join(root, 'state'),
    XDG_CONFIG_HOME: join(root, 'config'),
  };
}

function hookOf(event: string): string {
  const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as {
    hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>>;
  };
  const ours = settings.hooks[event]
    ?.flatMap((group) => group.hooks)
    .find((hook) => hook.command.includes(' hook claude-code'));
  if (ours === undefined) throw new Error(`no hook of ours for ${event} in ${settingsPath}`);
  return ours.command;
}

const runSpansOf = (): OtlpSpan[] => readSpans(out).filter((span) => span.name.startsWith('invoke_agent'));
const withText = (text: string): OtlpSpan[] =>
  runSpansOf().filter((span) => JSON.stringify(span.attributes).includes(text));

/** Waits until `condition` holds (checked every 100 ms), at most `budgetMs`; CI is a busy machine. */
async function until(what: string, condition: () => boolean, budgetMs = 60_000): Promise<void> {
  const deadline = Date.now() + budgetMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; watcher log:\n${readLog()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function readLog(): string {
  const log = join(root, 'state', 'subagent-otel', 'daemon', 'watch.log');
  return existsSync(log) ? readFileSync(log, 'utf8') : '(no log)';
}

function watcherPid(): number | undefined {
  if (!existsSync(lockPath)) return undefined;
  const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
  return Number.isInteger(pid) ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hooks-e2e-'));
  env = agentEnv();
  out = join(root, 'out');
  settingsPath = join(root, 'claude', 'settings.json');
  lockPath = join(root, 'state', 'subagent-otel', 'daemon', 'watch.lock');
  mkdirSync(join(root, 'claude'), { recursive: true });
  writeFileSync(settingsPath, USERS);
});

afterAll(() => {
  const pid = watcherPid();
  if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

describe('setup claude-code, then a session that delegates twice', () => {
  it('--dry-run prints the change and leaves the file as it was', async () => {
    const result = await runCli(['setup', 'claude-code', '--dry-run'], '', env);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toContain(`would change ${settingsPath}`);
    expect(result.stdout.toString()).toContain('+\t\t"SubagentStop": [');
    expect(readFileSync(settingsPath, 'utf8')).toBe(USERS);
  });

  it('merges the hooks into the user’s settings', async () => {
    const result = await runCli(['setup', 'claude-code', '--out', out], '', env);
    expect(result.stderr.toString()).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toContain('added the hook to SubagentStop, Stop, SessionEnd');
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(settings.permissions).toEqual({ defaultMode: 'default' });
    expect(settings.hooks.Stop[0]).toEqual({ hooks: [{ type: 'command', command: 'true' }] });
    expect(settings.hooks.Stop).toHaveLength(2);
    const again = await runCli(['setup', 'claude-code', '--out', out], '', env);
    expect(again.stdout.toString()).toContain('already has the hook');
  });

  it('reports both subagent runs and the session’s run from their hooks alone', async () => {
    const session = new ScriptedClaudeSession(join(root, 'claude', 'projects'), join(root, 'work'), hookOf, env);
    firstSession = session;
    session.prompt('Please delegate twice.');
    firstChild = await session.delegate('Count the files.', 'First answer: 7 files.');
    await session.delegate('Count the folders.', 'Second answer: 3 folders.');
    session.answer('Both subagents reported back.');
    await session.fire({
      hook_event_name: 'Stop',
      stop_hook_active: false,
      last_assistant_message: 'Both subagents reported back.',
    });
    await session.fire({ hook_event_name: 'SessionEnd', reason: 'other' });
    for (const run of session.hookRuns)
      expect({ event: run.event, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
        event: run.event,
        code: 0,
        stdout: '',
        stderr: '',
      });

    await until('three runs in the trace file', () => runSpansOf().length >= 3);
    const [first] = withText('First answer: 7 files.');
    const [second] = withText('Second answer: 3 folders.');
    const [main] = withText('Both subagents reported back.');
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(main).toBeDefined();
    // Both children in the session's trace, below its span.
    expect(first?.traceId).toBe(main?.traceId);
    expect(second?.traceId).toBe(main?.traceId);
    const ids = new Set(
      readSpans(out)
        .filter((s) => s.traceId === main?.traceId)
        .map((s) => s.spanId),
    );
    expect(ids.has(first?.parentSpanId ?? '')).toBe(true);
    expect(runSpansOf()).toHaveLength(3);
    expect(readLog()).toContain('subagent-otel watch --daemon: started');
  });

  it('check shows the setup and the running watcher', async () => {
    const result = await runCli(['check', '--json', '--out', join(root, 'check-out')], '', {
      ...env,
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=secret',
    });
    const report = JSON.parse(result.stdout.toString()) as {
      hooks?: { agents: Record<string, string>; watcher?: number; out?: string };
    };
    expect(report.hooks?.agents).toEqual({ 'claude-code': join(root, 'claude', 'projects') });
    expect(report.hooks?.out).toBe(out);
    expect(report.hooks?.watcher).toBe(watcherPid());
    const text = await runCli(['check', '--out', join(root, 'check-out')], '', env);
    expect(text.stdout.toString()).toContain(`Agents' hooks: ${join(root, 'config', 'subagent-otel', 'hooks.json')}`);
    expect(text.stdout.toString()).toMatch(/watcher: running \(process \d+\)/);
  });

  it('a repeated hook emits nothing twice; a killed watcher is started again by the next hook, repeating nothing', async () => {
    // The first session's SubagentStop and SessionEnd again (Claude Code may fire a hook twice, anthropics/claude-code#83365);
    // a new session's end, after them, marks when they were handled.
    const stop = {
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      agent_id: firstChild.agentId,
      agent_type: 'general-purpose',
      agent_transcript_path: firstChild.file,
    };
    await firstSession.fire(stop);
    await firstSession.fire(stop);
    await firstSession.fire({ hook_event_name: 'SessionEnd', reason: 'other' });
    const first = new ScriptedClaudeSession(join(root, 'claude', 'projects'), join(root, 'work'), hookOf, env);
    first.prompt('One more.');
    await first.delegate('Read the README.', 'Third answer: it is short.');
    first.answer('Done with the third.');
    await first.fire({ hook_event_name: 'SessionEnd', reason: 'clear' });
    await until('the third session', () => withText('Done with the third.').length === 1);
    expect(withText('First answer: 7 files.')).toHaveLength(1);
    expect(withText('Both subagents reported back.')).toHaveLength(1);

    const pid = watcherPid();
    expect(pid).toBeDefined();
    process.kill(pid ?? 0, 'SIGKILL');
    await until('the killed watcher gone', () => !isAlive(pid ?? 0));
    const next = new ScriptedClaudeSession(join(root, 'claude', 'projects'), join(root, 'work'), hookOf, env);
    next.prompt('After the crash.');
    await next.delegate('Check the tests.', 'Fourth answer: all green.');
    next.answer('Done after the crash.');
    await next.fire({ hook_event_name: 'SessionEnd', reason: 'logout' });
    await until(
      'the session after the crash',
      () => withText('Done after the crash.').length === 1 && withText('Fourth answer: all green.').length === 1,
    );
    expect(watcherPid()).not.toBe(pid);
    expect(withText('First answer: 7 files.')).toHaveLength(1);
    expect(withText('Third answer: it is short.')).toHaveLength(1);
  });

  it('--remove restores the settings file byte for byte and stops the watcher', async () => {
    const pid = watcherPid();
    expect(pid !== undefined && isAlive(pid)).toBe(true);
    const result = await runCli(['setup', 'claude-code', '--remove'], '', env);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toContain(`took 3 hook(s) out of ${settingsPath}`);
    expect(readFileSync(settingsPath, 'utf8')).toBe(USERS);
    await until('the watcher stopped', () => !isAlive(pid ?? 0));
    expect(readLog()).toMatch(/stopped \(exit code 0\)/);
  });
});
