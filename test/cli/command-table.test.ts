/**
 * The command table is the one list of commands: the main help's list,
 * `help <topic>`, the parse errors that name the commands and the dispatch
 * all follow it, and each entry answers only for its own name.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { helpText, parseCommandLine } from '../../src/cli/args.js';
import { COMMANDS, HELP_TOPICS, runCommand, type TableCommand } from '../../src/cli/command-table.js';
import { UsageError } from '../../src/cli/errors.js';

const NAMES = COMMANDS.map((spec) => spec.name);

describe('the command table', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('names each command once, and hook only as a help topic', () => {
    expect(NAMES).toEqual(['demo', 'proxy', 'replay', 'watch', 'setup', 'check', 'view']);
    expect(HELP_TOPICS.map((topic) => topic.name)).toEqual([...NAMES, 'hook']);
    // bin.ts runs `hook` before main: main does not know it as a command.
    expect(() => parseCommandLine(['hook'])).toThrow(
      new UsageError(`unknown command 'hook'; commands: ${NAMES.join(', ')} (see 'subagent-otel --help')`),
    );
  });

  it('lists every entry in the main help, in its order, with its synopsis and summary in one column', () => {
    const lines = helpText().split('\n');
    const listed = lines.filter(
      (line) =>
        line.startsWith('  subagent-otel ') &&
        !line.startsWith('  subagent-otel help ') &&
        !line.startsWith('  subagent-otel --'),
    );
    expect(listed).toEqual(COMMANDS.map((spec) => `  subagent-otel ${spec.synopsis.padEnd(38)} ${spec.summary}`));
    // Every row's description starts in one column (index 55), the help line's included.
    const rows = lines.filter((line) => /^ {2}subagent-otel (?!--)/.test(line));
    expect(rows).toHaveLength(COMMANDS.length + 1);
    for (const row of rows) expect([row[54], row[55] === ' ']).toEqual([' ', false]);
  });

  it.each(COMMANDS.map((spec) => [spec.name, spec] as const))(
    "prints %s's page for help <name>, --help and -h",
    (name, spec) => {
      expect(helpText(name)).toBe(spec.help);
      expect(spec.help.startsWith(`Usage: subagent-otel ${name} `)).toBe(true);
      expect(parseCommandLine([name, '--help'])).toEqual({ name: 'help', topic: name });
      expect(parseCommandLine([name, '-h'])).toEqual({ name: 'help', topic: name });
    },
  );

  it('names the table in the errors for an unknown command and an unknown topic', () => {
    expect(() => parseCommandLine(['frob'])).toThrow(
      new UsageError(`unknown command 'frob'; commands: ${NAMES.join(', ')} (see 'subagent-otel --help')`),
    );
    expect(() => helpText('frob')).toThrow(
      new UsageError(`no help for 'frob'; commands: ${[...NAMES, 'hook'].join(', ')}`),
    );
  });

  it('lets only the proxy forward stdout', () => {
    expect(COMMANDS.filter((spec) => spec.forwardsStdout === true).map((spec) => spec.name)).toEqual(['proxy']);
  });

  it('runs a parsed command with the entry of its name and nothing else', async () => {
    const runs = COMMANDS.map((spec, index) => vi.spyOn(spec, 'run').mockResolvedValue(index + 10));
    const context = {
      exitNow: (code: number): never => {
        throw new Error(`exit ${code}`);
      },
    };
    const cmd = parseCommandLine(['replay', 'x']) as TableCommand;
    await expect(runCommand(cmd, context)).resolves.toBe(NAMES.indexOf('replay') + 10);
    expect(runs.map((run) => run.mock.calls.length)).toEqual(NAMES.map((name) => (name === 'replay' ? 1 : 0)));
    expect(runs[NAMES.indexOf('replay')]?.mock.calls[0]).toEqual([cmd, context]);
  });
});
