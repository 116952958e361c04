/** The pure edits of an agent's settings: ours added once, others never touched, exactly ours removed. */
import { describe, expect, it } from 'vitest';
import {
  SettingsShapeError,
  hookCommand,
  isOurHook,
  shellQuote,
  withOurHooks,
  withoutOurHooks,
} from '../../src/hooks/settings-hooks.js';

const COMMAND =
  "'/opt/node 22/bin/node' /usr/lib/node_modules/subagent-otel/dist/cli/subagent-otel.js hook claude-code";
const USERS = {
  model: 'opus',
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
  },
};

describe('withOurHooks', () => {
  it('adds one group per end event after the user’s own, leaving every other key as it was', () => {
    const { settings, changed } = withOurHooks(USERS, COMMAND, 'settings.json');
    expect(changed).toBe(true);
    expect(settings).toEqual({
      model: 'opus',
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] }],
        Stop: [
          { hooks: [{ type: 'command', command: 'notify-send done' }] },
          { hooks: [{ type: 'command', command: COMMAND, timeout: 10 }] },
        ],
        SubagentStop: [{ hooks: [{ type: 'command', command: COMMAND, timeout: 10 }] }],
        SessionEnd: [{ hooks: [{ type: 'command', command: COMMAND, timeout: 10 }] }],
      },
    });
    expect(USERS.hooks.Stop).toHaveLength(1); // the input is not changed
  });

  it('changes nothing the second time, and brings an old command of ours to the new one in place', () => {
    const once = withOurHooks({}, COMMAND, 'f').settings;
    expect(withOurHooks(once, COMMAND, 'f').changed).toBe(false);
    const moved = withOurHooks(once, '/usr/bin/node /new/place/subagent-otel.js hook claude-code', 'f');
    expect(moved.changed).toBe(true);
    expect(JSON.stringify(moved.settings)).not.toContain('/opt/node 22');
    expect((moved.settings['hooks'] as Record<string, unknown[]>)['Stop']).toHaveLength(1);
  });

  it('refuses settings whose hooks are not the documented shape', () => {
    expect(() => withOurHooks({ hooks: [] }, COMMAND, 'a.json')).toThrow(SettingsShapeError);
    expect(() => withOurHooks({ hooks: { Stop: {} } }, COMMAND, 'a.json')).toThrow('"hooks.Stop" is not a list');
  });
});

describe('withoutOurHooks', () => {
  it('takes out exactly ours, with the groups, events and hooks object that held nothing else', () => {
    const added = withOurHooks(USERS, COMMAND, 'f').settings;
    const { settings, removed } = withoutOurHooks(added, 'f');
    expect(removed).toBe(3);
    expect(settings).toEqual(USERS);
    expect(withoutOurHooks(withOurHooks({ model: 'x' }, COMMAND, 'f').settings, 'f').settings).toEqual({ model: 'x' });
  });

  it('keeps a group in which the user put a hook of their own beside ours', () => {
    const mixed = {
      hooks: {
        Stop: [
          {
            hooks: [
              { type: 'command', command: 'echo mine' },
              { type: 'command', command: COMMAND },
            ],
          },
        ],
      },
    };
    expect(withoutOurHooks(mixed, 'f')).toEqual({
      settings: { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'echo mine' }] }] } },
      removed: 1,
    });
  });

  it('removes nothing from settings without ours', () => {
    expect(withoutOurHooks(USERS, 'f')).toEqual({ settings: USERS, removed: 0 });
  });
});

describe('commands', () => {
  it('quotes what a shell would split, and knows its own hooks only', () => {
    expect(shellQuote("/tmp/it's here")).toBe("'/tmp/it'\\''s here'");
    expect(shellQuote('/usr/bin/node')).toBe('/usr/bin/node');
    expect(hookCommand('/usr/bin/node', '/a b/subagent-otel.js', 'codex')).toBe(
      "/usr/bin/node '/a b/subagent-otel.js' hook codex",
    );
    expect(isOurHook({ type: 'command', command: COMMAND })).toBe(true);
    expect(isOurHook({ type: 'command', command: 'my-hook claude-code' })).toBe(false);
    expect(isOurHook({ type: 'command', command: 'subagent-otel hook claude-code && rm -rf /' })).toBe(false);
  });
});
