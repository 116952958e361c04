/** The environment a hook hands to the watcher it starts (`watcherEnvironment`): where the user's files are, nothing of the agent's. */
import { describe, expect, it } from 'vitest';

describe('watcherEnvironment', () => {
  it('keeps where the user’s files are, and nothing of the agent’s keys or session', async () => {
    const { watcherEnvironment } = await import('../../src/hooks/run-hook.js');
    const env = watcherEnvironment({
      PATH: '/bin',
      HOME: '/h',
      XDG_STATE_HOME: '/s',
      LC_ALL: 'C',
      ANTHROPIC_API_KEY: 'sk-secret',
      CLAUDE_CONFIG_DIR: '/c',
      NODE_OPTIONS: '--inspect',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x',
    });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', XDG_STATE_HOME: '/s', LC_ALL: 'C' });
  });
});
