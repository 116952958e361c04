import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

describe('the npm package', () => {
  it('exports the documented API from its root', async () => {
    const api = (await import('../dist/index.js')) as Record<string, unknown>;
    for (const name of [
      'AssistantOutputFold',
      'finalAssistantOutput',
      'readResult',
      'splitEpochs',
      'subagentResult',
      'subagentRunEndInfo',
      'foregroundToolResult',
      'stopReasonFromAcp',
      'parseFrame',
      'parseSessionEvent',
      'parseSdkNotification',
      'SdkTracker',
      'AcpTracker',
      'createTelemetry',
      'runSdkSubagent',
      'runAcpSubagent',
    ]) {
      expect(typeof api[name], name).toBe('function');
    }
  });

  it('packs the CLI, the fixtures the demo spawns, the view page and the collector config', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const [pack] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
    const files = new Set(pack?.files.map((f) => f.path));
    for (const f of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/subagent-otel.js',
      'dist/fixtures/sdk-runtime.js',
      'dist/fixtures/acp-agent.js',
      'dist/view/page/page.js',
      'dist/view/page/page.css',
      'collector-config/otelcol.yaml',
      'README.md',
      'package.json',
    ]) {
      expect(files.has(f), f).toBe(true);
    }
    expect([...files].some((f) => f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
  });
});
