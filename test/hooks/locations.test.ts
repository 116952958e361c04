/**
 * Where the hooks' parts live (`hooks/locations.ts`): the XDG state and
 * config roots with their home-folder defaults, the watcher's files under
 * the state root, and the agents' homes, transcript folders and settings
 * files, from the environment alone.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agentHome,
  configRoot,
  hookFiles,
  isHookedAgent,
  settingsFile,
  stateRoot,
  transcriptFolder,
} from '../../src/hooks/locations.js';

describe('state and config roots', () => {
  it('follow XDG_STATE_HOME and XDG_CONFIG_HOME, and fall back to the home folder when unset or empty', () => {
    expect(stateRoot({ XDG_STATE_HOME: '/s' })).toBe('/s/subagent-otel');
    expect(configRoot({ XDG_CONFIG_HOME: '/c' })).toBe('/c/subagent-otel');
    expect(stateRoot({})).toBe(join(homedir(), '.local/state/subagent-otel'));
    expect(configRoot({ XDG_CONFIG_HOME: '' })).toBe(join(homedir(), '.config/subagent-otel'));
  });
});

describe('hookFiles', () => {
  it('puts the socket, lock and log in the private daemon folder, and the config under the config root', () => {
    expect(hookFiles({ XDG_STATE_HOME: '/s', XDG_CONFIG_HOME: '/c' })).toEqual({
      config: '/c/subagent-otel/hooks.json',
      daemonDir: '/s/subagent-otel/daemon',
      socket: '/s/subagent-otel/daemon/hooks.sock',
      lock: '/s/subagent-otel/daemon/watch.lock',
      log: '/s/subagent-otel/daemon/watch.log',
      setupDir: '/s/subagent-otel/setup',
    });
  });
});

describe("the agents' folders", () => {
  it('knows only the hooked agents', () => {
    expect(['claude-code', 'codex', 'gemini-cli'].map(isHookedAgent)).toEqual([true, true, false]);
  });

  it('takes CLAUDE_CONFIG_DIR and CODEX_HOME, resolved, else ~/.claude and ~/.codex', () => {
    expect(agentHome('claude-code', { CLAUDE_CONFIG_DIR: '/cc' })).toBe('/cc');
    expect(agentHome('codex', { CODEX_HOME: 'rel/codex' })).toBe(resolve('rel/codex'));
    expect(agentHome('claude-code', {})).toBe(join(homedir(), '.claude'));
    expect(agentHome('codex', { CODEX_HOME: '' })).toBe(join(homedir(), '.codex'));
  });

  it('finds transcripts under projects/ for Claude Code and sessions/ for Codex', () => {
    expect(transcriptFolder('claude-code', { CLAUDE_CONFIG_DIR: '/cc' })).toBe('/cc/projects');
    expect(transcriptFolder('codex', { CODEX_HOME: '/cx' })).toBe('/cx/sessions');
  });

  it("names the user's settings file, or the project's with a project", () => {
    expect(settingsFile('claude-code', { CLAUDE_CONFIG_DIR: '/cc' })).toBe('/cc/settings.json');
    expect(settingsFile('codex', { CODEX_HOME: '/cx' })).toBe('/cx/hooks.json');
    expect(settingsFile('claude-code', {}, '/p')).toBe('/p/.claude/settings.json');
    expect(settingsFile('codex', {}, '/p')).toBe('/p/.codex/hooks.json');
  });
});
