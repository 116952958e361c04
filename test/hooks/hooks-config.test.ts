/**
 * The file `setup` writes for the watcher the hooks start: saved whole and
 * private, read back as it was written; absent is no configuration, and an
 * unreadable or invalid file is a message naming it and the way out. Only
 * OpenTelemetry's and this project's variables are copied into it.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  loadHooksConfig,
  saveHooksConfig,
  telemetryEnvironment,
  type HooksConfig,
} from '../../src/hooks/hooks-config.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hooks-config-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const config: HooksConfig = {
  version: 1,
  since: 1_770_000_000_000,
  agents: { codex: { folder: '/home/u/.codex/sessions' } },
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
  out: '/data/otel',
  noContent: true,
};

describe('saveHooksConfig and loadHooksConfig', () => {
  it('write the file private (0600) in a new private folder, leaving no temporary file, and read it back', async () => {
    const path = join(root, 'config', 'subagent-otel', 'hooks.json');
    await saveHooksConfig(path, config);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'config', 'subagent-otel')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(root, 'config', 'subagent-otel'))).toEqual(['hooks.json']);
    expect(await loadHooksConfig(path)).toEqual({ ok: true, config });
  });

  it('give no configuration for a file that does not exist', async () => {
    expect(await loadHooksConfig(join(root, 'none.json'))).toEqual({ ok: true, config: undefined });
  });

  it('name the file and the way out when it is not JSON or not a configuration', async () => {
    const path = join(root, 'hooks.json');
    writeFileSync(path, '{"version":1,');
    const notJson = await loadHooksConfig(path);
    expect(notJson.ok ? '' : notJson.message).toMatch(
      new RegExp(`^${path} is not JSON \\(.*\\); run 'subagent-otel setup <agent>' again to rewrite it$`),
    );
    writeFileSync(path, JSON.stringify({ ...config, agents: { gemini: { folder: '/x' } } }));
    const wrongAgent = await loadHooksConfig(path);
    expect(wrongAgent.ok ? '' : wrongAgent.message).toMatch(
      new RegExp(`^${path} is not a hooks configuration \\(agents`),
    );
    writeFileSync(path, JSON.stringify({ ...config, version: 2 }));
    const wrongVersion = await loadHooksConfig(path);
    expect(wrongVersion.ok ? '' : wrongVersion.message).toMatch(/is not a hooks configuration \(version: /);
  });

  it('say why a path it cannot read is unreadable', async () => {
    const loaded = await loadHooksConfig(root);
    expect(loaded.ok ? '' : loaded.message).toMatch(new RegExp(`^cannot read ${root}: .*EISDIR`));
  });
});

describe('telemetryEnvironment', () => {
  it("keeps OTEL_* and SUBAGENT_OTEL_* but the hook's own message variable, and nothing else", () => {
    expect(
      telemetryEnvironment({
        OTEL_SERVICE_NAME: 'team-a',
        SUBAGENT_OTEL_OUT: '/o',
        SUBAGENT_OTEL_HOOK_EVENT: '{"v":1}',
        ANTHROPIC_API_KEY: 'sk',
        PATH: '/bin',
        MY_OTEL_THING: 'x',
      }),
    ).toEqual({ OTEL_SERVICE_NAME: 'team-a', SUBAGENT_OTEL_OUT: '/o' });
  });
});
