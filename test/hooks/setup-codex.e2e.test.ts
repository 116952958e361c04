/** `setup codex` and `--project`: the right settings files, the recorded folders, and a clean undo. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

let root: string;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'setup-codex-'));
  env = {
    HOME: join(root, 'home'),
    CODEX_HOME: join(root, 'codex'),
    CLAUDE_CONFIG_DIR: join(root, 'claude'),
    XDG_STATE_HOME: join(root, 'state'),
    XDG_CONFIG_HOME: join(root, 'config'),
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer secret',
  };
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = () => JSON.parse(readFileSync(join(root, 'config', 'subagent-otel', 'hooks.json'), 'utf8'));

describe('setup codex', () => {
  it('writes $CODEX_HOME/hooks.json and records the sessions folder and the environment, privately', async () => {
    const result = await runCli(['setup', 'codex'], '', env);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toContain('Codex runs a new hook once you have reviewed and trusted it');
    const hooks = JSON.parse(readFileSync(join(root, 'codex', 'hooks.json'), 'utf8'));
    expect(Object.keys(hooks.hooks)).toEqual(['SubagentStop', 'Stop', 'SessionEnd']);
    expect(hooks.hooks.Stop[0].hooks[0].command).toMatch(/ hook codex$/);
    expect(config().agents).toEqual({ codex: { folder: join(root, 'codex', 'sessions') } });
    expect(config().env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:9');
    // An endpoint is configured: no file destination is added.
    expect(config().out).toBeUndefined();
    const check = await runCli(['check', '--json'], '', {
      ...env,
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
    });
    const status = JSON.parse(check.stdout.toString()).hooks;
    expect(status.variables).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_HEADERS: null,
    });
    expect(check.stdout.toString()).not.toContain('secret');
    expect(status.watcher).toBeUndefined();
  });

  it('keeps both agents when Claude Code is set up too, and the first setup’s time', async () => {
    const since = config().since;
    expect((await runCli(['setup', 'claude-code'], '', env)).code).toBe(0);
    expect(Object.keys(config().agents).sort()).toEqual(['claude-code', 'codex']);
    expect(config().since).toBe(since);
  });

  it('--project writes that project’s settings and leaves the user’s alone', async () => {
    const project = join(root, 'project');
    mkdirSync(project);
    const before = readFileSync(join(root, 'claude', 'settings.json'), 'utf8');
    expect((await runCli(['setup', 'claude-code', '--project', project], '', env)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')).hooks.SessionEnd).toHaveLength(
      1,
    );
    expect(readFileSync(join(root, 'claude', 'settings.json'), 'utf8')).toBe(before);
    expect((await runCli(['setup', 'claude-code', '--project', project, '--remove'], '', env)).code).toBe(0);
    expect(existsSync(join(project, '.claude', 'settings.json'))).toBe(false);
    // The project's undo does not forget the user's setup.
    expect(Object.keys(config().agents).sort()).toEqual(['claude-code', 'codex']);
  });

  it('--remove takes the agent out of the record and the file setup created away', async () => {
    expect((await runCli(['setup', 'codex', '--remove'], '', env)).code).toBe(0);
    expect(existsSync(join(root, 'codex', 'hooks.json'))).toBe(false);
    expect(Object.keys(config().agents)).toEqual(['claude-code']);
  });

  it('a hook with no setup and a payload it cannot use exits 0, prints nothing, and says why in the log', async () => {
    const bare = {
      HOME: join(root, 'bare'),
      XDG_STATE_HOME: join(root, 'bare-state'),
      XDG_CONFIG_HOME: join(root, 'bare-config'),
    };
    const garbage = await runCli(['hook', 'claude-code'], 'not json', bare);
    expect({ code: garbage.code, out: garbage.stdout.toString(), err: garbage.stderr.toString() }).toEqual({
      code: 0,
      out: '',
      err: '',
    });
    const unknown = await runCli(['hook', 'gemini'], '{}', bare);
    expect({ code: unknown.code, out: unknown.stdout.toString(), err: unknown.stderr.toString() }).toEqual({
      code: 0,
      out: '',
      err: '',
    });
    const log = readFileSync(join(root, 'bare-state', 'subagent-otel', 'daemon', 'watch.log'), 'utf8');
    expect(log).toContain("hook: claude-code: the hook's input is not JSON");
    expect(log).toContain("hook: unknown agent 'gemini'");
  });
});
