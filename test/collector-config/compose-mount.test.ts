/**
 * The compose file mounts, by default, the directory the demo writes when it
 * is run from the repository root (`npm start`): compose resolves relative
 * host paths against the compose file's own directory, not the shell's.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_OUT_DIR } from '../../src/telemetry/setup.js';
import { ROOT } from '../helpers/paths.js';

const composeDir = join(ROOT, 'collector-config');
const compose = parse(readFileSync(join(composeDir, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { volumes?: string[] }>;
};

/** Host side of every volume mounted at the collector's otlp_json_file directory, with `${VAR:-default}` resolved to its default. */
function outMounts(): Array<[string, string]> {
  const mounts: Array<[string, string]> = [];
  for (const [name, service] of Object.entries(compose.services)) {
    for (const volume of service.volumes ?? []) {
      const [host, target] = volume.split(':/');
      if (target?.startsWith('var/lib/subagent-otel-out') !== true || host === undefined) continue;
      mounts.push([name, host.replace(/^\$\{SUBAGENT_OTEL_OUT:-([^}]*)\}$/, '$1')]);
    }
  }
  return mounts;
}

describe('collector-config/docker-compose.yml', () => {
  it('mounts the directory the demo writes from the repository root', () => {
    const mounts = outMounts();
    expect(mounts.map(([service]) => service).sort()).toEqual(['otel-agent', 'otel-collector']);
    for (const [, host] of mounts) expect(resolve(composeDir, host)).toBe(resolve(ROOT, DEFAULT_OUT_DIR));
  });
});
