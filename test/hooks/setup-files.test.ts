/** setup's changes on disk: merged, backed up, refused when unsafe, undone byte for byte. */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SetupError, addHooksToFile, diffLines, removeHooksFromFile } from '../../src/hooks/setup-files.js';

const COMMAND = '/usr/bin/node /opt/subagent-otel/dist/cli/subagent-otel.js hook claude-code';
// A user's file as people write them: tabs, keys in their order, another hook, no final newline.
const USERS =
  '{\n\t"model": "opus",\n\t"hooks": {\n\t\t"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre"}]}]\n\t}\n}';

let root: string;
let setupDir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'setup-files-'));
  setupDir = join(root, 'state', 'setup');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('addHooksToFile', () => {
  it('merges into the user’s file in its own style, keeps a backup, and changes nothing the second time', async () => {
    const file = join(root, 'settings.json');
    writeFileSync(file, USERS, { mode: 0o640 });
    const change = await addHooksToFile(file, COMMAND, setupDir, true);
    expect(change.changed).toBe(true);
    const after = readFileSync(file, 'utf8');
    expect(after).toContain('\n\t"model": "opus"');
    expect(after.endsWith('}')).toBe(true);
    expect(JSON.parse(after).hooks.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] },
    ]);
    expect(JSON.parse(after).hooks.SubagentStop[0].hooks[0].command).toBe(COMMAND);
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readFileSync(change.backup ?? '', 'utf8')).toBe(USERS);
    expect((await addHooksToFile(file, COMMAND, setupDir, true)).changed).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(after);
  });

  it('with write false (dry run) reports the change and writes nothing', async () => {
    const file = join(root, 'settings.json');
    writeFileSync(file, USERS);
    const change = await addHooksToFile(file, COMMAND, setupDir, false);
    expect(change.changed).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(USERS);
    expect(existsSync(setupDir)).toBe(false);
    expect(diffLines(change.before, change.after)).toContain(`+\t\t"SubagentStop": [`);
  });

  it('leaves invalid JSON, a non-object and a read-only file untouched, saying what to do', async () => {
    const broken = join(root, 'broken.json');
    writeFileSync(broken, '{"hooks": {');
    await expect(addHooksToFile(broken, COMMAND, setupDir, true)).rejects.toThrow(
      /broken\.json is not valid JSON .*fix it first, nothing was changed/,
    );
    expect(readFileSync(broken, 'utf8')).toBe('{"hooks": {');
    const list = join(root, 'list.json');
    writeFileSync(list, '[]');
    await expect(addHooksToFile(list, COMMAND, setupDir, true)).rejects.toThrow(SetupError);
    const locked = join(root, 'locked.json');
    writeFileSync(locked, USERS);
    chmodSync(locked, 0o444);
    // Refused by its mode, for root too (who could write through it).
    await expect(addHooksToFile(locked, COMMAND, setupDir, true)).rejects.toThrow(
      /locked\.json is read-only; make it writable/,
    );
    expect(readFileSync(locked, 'utf8')).toBe(USERS);
    expect(existsSync(join(setupDir, 'backups'))).toBe(false);
  });
});

describe('removeHooksFromFile', () => {
  it('restores the bytes from before setup when the file was not edited since', async () => {
    const file = join(root, 'settings.json');
    writeFileSync(file, USERS);
    await addHooksToFile(file, COMMAND, setupDir, true);
    const change = await removeHooksFromFile(file, setupDir, true);
    expect(change.removed).toBe(3);
    expect(readFileSync(file, 'utf8')).toBe(USERS);
    expect((await removeHooksFromFile(file, setupDir, true)).changed).toBe(false);
  });

  it('removes the file setup created, and nothing else in its folder', async () => {
    const dir = join(root, 'claude');
    mkdirSync(dir);
    writeFileSync(join(dir, 'other.json'), '{}');
    const file = join(dir, 'settings.json');
    await addHooksToFile(file, COMMAND, setupDir, true);
    expect(existsSync(file)).toBe(true);
    await removeHooksFromFile(file, setupDir, true);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(dir, 'other.json'))).toBe(true);
  });

  it('takes out only our hooks from a file the user edited after setup', async () => {
    const file = join(root, 'settings.json');
    writeFileSync(file, USERS);
    await addHooksToFile(file, COMMAND, setupDir, true);
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    edited.theme = 'dark';
    writeFileSync(file, JSON.stringify(edited, null, '\t'));
    await removeHooksFromFile(file, setupDir, true);
    const after = JSON.parse(readFileSync(file, 'utf8'));
    expect(after).toEqual({
      model: 'opus',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] }] },
      theme: 'dark',
    });
  });
});
