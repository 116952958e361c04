/** The command the demo names last to show its runs (`viewCommand`): bare for the default directory, else with it, quoted for a shell. */
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { viewCommand } from '../../../src/cli/commands/demo.js';

describe('viewCommand', () => {
  it('is bare when the runs went where view reads by default', () => {
    expect(viewCommand('subagent-otel-out', {})).toBe('subagent-otel view');
    expect(viewCommand(resolve('subagent-otel-out'), {})).toBe('subagent-otel view');
    expect(viewCommand('/data/tele', { SUBAGENT_OTEL_OUT: '/data/tele' })).toBe('subagent-otel view');
  });

  it('names another directory, quoted when a shell would split or expand it', () => {
    expect(viewCommand('/data/tele', {})).toBe('subagent-otel view /data/tele');
    expect(viewCommand(join('/tmp', "it's here"), {})).toBe("subagent-otel view '/tmp/it'\\''s here'");
  });
});
