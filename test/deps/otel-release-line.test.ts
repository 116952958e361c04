/**
 * One OpenTelemetry release line: every `@opentelemetry/*` package the
 * install resolves has exactly one version, and the stable packages and the
 * experimental ones sit on the matching pair of the 3.x line (3.1.0 and
 * 0.301.0, the set `@opentelemetry/sdk-node` 0.301.0 pins); the API is a peer
 * dependency with a range, plus a pinned dev dependency for the tests
 * (docs/decisions/0030-one-opentelemetry-release-line.md).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

interface LsNode {
  readonly version?: string;
  readonly dependencies?: Record<string, LsNode>;
}

/** Every name@version in the resolved tree (dev dependencies included). */
function resolvedVersions(): Map<string, Set<string>> {
  const out = execFileSync('npm', ['ls', '--all', '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const tree = JSON.parse(out) as LsNode;
  const versions = new Map<string, Set<string>>();
  const walk = (deps: Record<string, LsNode> | undefined): void => {
    for (const [name, node] of Object.entries(deps ?? {})) {
      if (node.version !== undefined) {
        const seen = versions.get(name) ?? new Set<string>();
        seen.add(node.version);
        versions.set(name, seen);
      }
      walk(node.dependencies);
    }
  };
  walk(tree.dependencies);
  return versions;
}

describe('the OpenTelemetry release line', () => {
  it('npm ls shows one version of every @opentelemetry package', () => {
    const versions = resolvedVersions();
    const otel = [...versions].filter(([name]) => name.startsWith('@opentelemetry/'));
    expect(otel.length).toBeGreaterThan(10);
    const multiple = otel.filter(([, set]) => set.size > 1).map(([name, set]) => `${name}: ${[...set].join(', ')}`);
    expect(multiple).toEqual([]);
  });

  it('stable packages are on 3.1.0 and experimental ones on 0.301.0', () => {
    const versions = resolvedVersions();
    const offLine: string[] = [];
    for (const [name, set] of versions) {
      if (!name.startsWith('@opentelemetry/')) continue;
      // The API and the semantic-conventions package have their own release trains.
      if (name === '@opentelemetry/api' || name === '@opentelemetry/semantic-conventions') continue;
      for (const version of set) {
        if (version !== '3.1.0' && version !== '0.301.0') offLine.push(`${name}@${version}`);
      }
    }
    expect(offLine).toEqual([]);
    expect([...(versions.get('@opentelemetry/api') ?? [])]).toEqual(['1.10.0']);
  });

  it('package.json takes the line as ranges a host can share, the API as a peer, and pins the test-only packages', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const otel = (deps: Record<string, string>): Array<[string, string]> =>
      Object.entries(deps).filter(([name]) => name.startsWith('@opentelemetry/'));
    // Exactly what src/ imports: the exporters are built from their delegates (decision 0072), so no exporter-trace-* package.
    expect(otel(manifest.dependencies).map(([name]) => name)).toEqual([
      '@opentelemetry/core',
      '@opentelemetry/exporter-metrics-otlp-http',
      '@opentelemetry/exporter-prometheus',
      '@opentelemetry/otlp-exporter-base',
      '@opentelemetry/otlp-grpc-exporter-base',
      '@opentelemetry/otlp-transformer',
      '@opentelemetry/resources',
      '@opentelemetry/sdk-metrics',
      '@opentelemetry/sdk-trace',
    ]);
    for (const [name, range] of otel(manifest.dependencies)) expect(['^3.1.0', '^0.301.0'], name).toContain(range);
    expect(manifest.dependencies['@opentelemetry/api']).toBeUndefined();
    expect(manifest.peerDependencies).toEqual({ '@opentelemetry/api': '^1.10.0' });
    expect(otel(manifest.devDependencies)).toEqual([
      ['@opentelemetry/api', '1.10.0'],
      ['@opentelemetry/sdk-node', '0.301.0'],
    ]);
    expect(manifest.dependencies['fzstd']).toBeUndefined();
  });
});
