/** What check says of the hooks: the setup, and a hook that is gone or runs files that are gone. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saveHooksConfig } from '../../src/hooks/hooks-config.js';
import { hooksStatus, hooksStatusText, shellWords } from '../../src/hooks/hooks-status.js';
import { hookCommand, shellQuote } from '../../src/hooks/settings-hooks.js';
import { CLI } from '../helpers/paths.js';

const root = mkdtempSync(join(tmpdir(), 'hooks-status-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = {
  HOME: join(root, 'home'),
  CLAUDE_CONFIG_DIR: join(root, 'claude'),
  XDG_STATE_HOME: join(root, 'state'),
  XDG_CONFIG_HOME: join(root, 'config'),
};

describe('shellWords', () => {
  it('reads back what shellQuote wrote', () => {
    for (const word of ['/usr/bin/node', "/tmp/it's here/x.js", 'a b', "''"])
      expect(shellWords(`${shellQuote(word)} hook codex`)).toEqual([word, 'hook', 'codex']);
  });
});

describe('hooksStatus', () => {
  it('is undefined before any setup, and names a hook that is gone or runs a file that is gone', async () => {
    expect(await hooksStatus(env)).toBeUndefined();
    expect(hooksStatusText(undefined)[0]).toContain('not set up');
    await saveHooksConfig(join(root, 'config', 'subagent-otel', 'hooks.json'), {
      version: 1,
      since: 0,
      agents: { 'claude-code': { folder: '/p' } },
      env: { OTEL_EXPORTER_OTLP_HEADERS: 'a=b', SUBAGENT_OTEL_OUT: '/o' },
    });
    const settings = join(root, 'claude', 'settings.json');
    let status = await hooksStatus(env);
    expect(status?.hooks['claude-code']).toEqual({
      file: settings,
      problem: "not there (the file is missing or not JSON): run 'subagent-otel setup' again",
    });
    expect(status?.variables).toEqual({ OTEL_EXPORTER_OTLP_HEADERS: null, SUBAGENT_OTEL_OUT: '/o' });
    mkdirSync(join(root, 'claude'));
    const write = (command: string): void =>
      writeFileSync(settings, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command }] }] } }));
    write(hookCommand(join(root, 'old node', 'node'), CLI, 'claude-code'));
    status = await hooksStatus(env);
    expect(status?.hooks['claude-code']?.problem).toBe(
      `it runs ${join(root, 'old node', 'node')}, which is gone: run 'subagent-otel setup' again`,
    );
    write(hookCommand(process.execPath, CLI, 'claude-code'));
    status = await hooksStatus(env);
    expect(status?.hooks['claude-code']).toEqual({ file: settings });
    expect(hooksStatusText(status).join('\n')).toContain(`claude-code: follows /p; hook in ${settings}`);
    write('echo mine');
    expect((await hooksStatus(env))?.hooks['claude-code']?.problem).toMatch(/^not there \(removed\?\)/);
  });
});
