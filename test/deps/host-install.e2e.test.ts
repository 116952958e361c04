/**
 * The package as a host on the current OpenTelemetry line installs it: `npm
 * pack`, then a host app on `@opentelemetry/sdk-node` 0.301.0 and
 * `@opentelemetry/api` 1.10.0 installs the tarball. Its tree holds one
 * `@opentelemetry/api` and one `@opentelemetry/core` (3.x), and nothing of
 * OpenTelemetry under the package's own `node_modules` (the API is a peer
 * dependency, decision 0030). In a real host process (`node host.mjs`), a run
 * fed to `SdkTracker` lands in the host's exporter under the host's active
 * span, and `subagent.runs` in the host's metric reader.
 *
 * Installs from the npm cache when it holds the packages (`--prefer-offline`;
 * `npm ci` of this repository puts them there), else from the registry.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packPackage } from '../../scripts/packed-install.mjs';
import { events, step, text, turnEnd, turnStart, usage } from '../helpers/events.js';

interface LsNode {
  readonly version?: string;
  readonly dependencies?: Record<string, LsNode>;
}

/** Every version of every package in `npm ls --all --json` of `dir`. */
function versionsIn(dir: string): Map<string, string[]> {
  const tree = JSON.parse(
    execFileSync('npm', ['ls', '--all', '--json'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }),
  ) as LsNode;
  const versions = new Map<string, string[]>();
  const walk = (deps: Record<string, LsNode> | undefined): void => {
    for (const [name, node] of Object.entries(deps ?? {})) {
      if (node.version !== undefined) {
        const seen = versions.get(name) ?? [];
        if (!seen.includes(node.version)) seen.push(node.version);
        versions.set(name, seen);
      }
      walk(node.dependencies);
    }
  };
  walk(tree.dependencies);
  return versions;
}

/** The host app: its own NodeSDK pipeline, a span of its own, and a subagent run fed to the package's tracker under it. */
const HOST_SCRIPT = `
import { readFileSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { MetricReader } from '@opentelemetry/sdk-metrics';
import { RunTelemetry, SdkTracker } from 'subagent-otel';

class HostReader extends MetricReader {
  onForceFlush() { return Promise.resolve(); }
  onShutdown() { return Promise.resolve(); }
}
const spans = new InMemorySpanExporter();
const reader = new HostReader();
const sdk = new NodeSDK({ serviceName: 'host-app', spanProcessors: [new SimpleSpanProcessor({ exporter: spans })], metricReaders: [reader], instrumentations: [], resourceDetectors: [] });
sdk.start();
const feed = JSON.parse(readFileSync(new URL('./events.json', import.meta.url), 'utf8'));
let loop;
trace.getTracer('host-app').startActiveSpan('agent-loop', (span) => {
  loop = span.spanContext();
  const tracker = new SdkTracker(new RunTelemetry(), { agentName: 'researcher' });
  for (const event of feed) tracker.onNotification('session.event', { sessionId: 'host-s1', event });
  span.end();
});
const { resourceMetrics, errors } = await reader.collect();
const runs = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).filter((m) => m.descriptor.name === 'subagent.runs').flatMap((m) => m.dataPoints).reduce((sum, p) => sum + p.value, 0);
const run = spans.getFinishedSpans().find((s) => s.name.startsWith('invoke_agent'));
console.log(JSON.stringify({
  loop,
  run: run && { name: run.name, traceId: run.spanContext().traceId, parent: run.parentSpanContext?.spanId, service: run.resource.attributes['service.name'], scope: run.instrumentationScope.name },
  runs, metricErrors: errors.length, metricService: resourceMetrics.resource.attributes['service.name'],
}));
await sdk.shutdown();
`;

describe('a host on NodeSDK 0.301 and API 1.10.0 that installs the packed package', () => {
  const host = mkdtempSync(join(tmpdir(), 'host-app-'));

  beforeAll(() => {
    const tarball = basename(packPackage(host));
    const manifest = {
      name: 'host-app',
      private: true,
      type: 'module',
      dependencies: {
        '@opentelemetry/api': '1.10.0',
        '@opentelemetry/sdk-node': '0.301.0',
        '@opentelemetry/sdk-trace': '3.1.0',
        '@opentelemetry/sdk-metrics': '3.1.0',
        'subagent-otel': `file:./${tarball}`,
      },
    };
    writeFileSync(join(host, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(join(host, 'host.mjs'), HOST_SCRIPT);
    const feed = events(
      [turnStart(), step('embedded', { content: [text('Done.')], usage: usage(10, 2) }), turnEnd('completed')],
      0,
      1_700_000_000_000,
    );
    writeFileSync(join(host, 'events.json'), JSON.stringify(feed));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], {
      cwd: host,
      encoding: 'utf8',
      stdio: 'pipe',
    });
  }, 300_000);

  it('has one @opentelemetry/api (1.10.0) and one @opentelemetry/core (3.x) in its tree, and one of every other OpenTelemetry package', () => {
    const versions = versionsIn(host);
    expect(versions.get('@opentelemetry/api')).toEqual(['1.10.0']);
    expect(versions.get('@opentelemetry/core')).toHaveLength(1);
    expect(versions.get('@opentelemetry/core')?.[0]).toMatch(/^3\./);
    const doubled = [...versions].filter(([name, list]) => name.startsWith('@opentelemetry/') && list.length > 1);
    expect(doubled).toEqual([]);
    // Nothing of OpenTelemetry installed under the package itself: it uses the host's copies.
    const own = join(host, 'node_modules', 'subagent-otel', 'node_modules');
    expect(existsSync(join(own, '@opentelemetry')) ? readdirSync(join(own, '@opentelemetry')) : []).toEqual([]);
  });

  it("puts the run's span in the host's exporter under its active span, and the run in its metric reader", () => {
    const out = execFileSync(process.execPath, ['host.mjs'], { cwd: host, encoding: 'utf8' });
    const result = JSON.parse(out) as {
      loop: { traceId: string; spanId: string };
      run?: { name: string; traceId: string; parent?: string; service: string; scope: string };
      runs: number;
      metricErrors: number;
      metricService: string;
    };
    expect(result.run).toEqual({
      name: 'invoke_agent researcher',
      traceId: result.loop.traceId,
      parent: result.loop.spanId,
      service: 'host-app',
      scope: 'subagent-otel',
    });
    expect(result.runs).toBe(1);
    expect(result.metricErrors).toBe(0);
    expect(result.metricService).toBe('host-app');
  });
});
