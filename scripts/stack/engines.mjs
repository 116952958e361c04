/**
 * The stack's engines: the project's collector distribution, Jaeger and
 * Prometheus 3, built from the Go modules under collector-config/ into a
 * per-user cache (never into the repository), and reused while their version
 * and module files are unchanged. Alertmanager is Debian's package.
 *
 * Owns the cache directory layout and the `go build` runs; starts no server.
 *
 * @module subagent-otel/scripts/stack/engines
 */

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is scripts/stack/engines.mjs). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every engine built from Go modules: name, release, Go module folder, packages, build tags. */
export const ENGINES = Object.freeze([
  Object.freeze({
    name: 'subagent-otelcol',
    version: '0.161.0',
    module: 'collector-config/distribution',
    packages: ['.'],
    binaries: ['subagent-otelcol'],
    output: 'subagent-otelcol',
    tags: '',
    ldflags: '',
  }),
  Object.freeze({
    name: 'jaeger',
    version: '2.13.0',
    module: 'collector-config/engines/jaeger',
    packages: ['github.com/jaegertracing/jaeger/cmd/jaeger'],
    binaries: ['jaeger'],
    output: 'jaeger',
    tags: '',
    ldflags: '',
  }),
  Object.freeze({
    name: 'prometheus',
    version: '3.16.0',
    module: 'collector-config/engines/prometheus',
    packages: ['github.com/prometheus/prometheus/cmd/prometheus', 'github.com/prometheus/prometheus/cmd/promtool'],
    binaries: ['prometheus', 'promtool'],
    output: '',
    // Service discovery: DNS (compose) and file (this stack) only; no UI assets.
    tags: 'remove_all_sd,enable_dns_sd',
    ldflags: '-X github.com/prometheus/common/version.Version=3.16.0',
  }),
]);

/** How to get the tools the engines need, for error messages. */
export const INSTALL = Object.freeze({
  go: "Go 1.26 or newer is needed to build the stack's engines: install it from https://go.dev/dl/ (or your system's golang package, if it is 1.26+) and put its bin folder on PATH",
  alertmanager: 'apt-get install -y --no-install-recommends prometheus-alertmanager',
  build: 'npm run stack -- build',
});

/** `${XDG_CACHE_HOME:-~/.cache}/subagent-otel/engines`, or `SUBAGENT_OTEL_ENGINES` when set. */
export function cacheRoot(env = process.env) {
  if (env.SUBAGENT_OTEL_ENGINES) return env.SUBAGENT_OTEL_ENGINES;
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'subagent-otel', 'engines');
}

/** `<cache>/<name>-<version>`: one folder per engine release. */
export function engineDir(engine, env = process.env) {
  return join(cacheRoot(env), `${engine.name}-${engine.version}`);
}

/**
 * Hash of what a build depends on besides the version: the module's go.mod,
 * go.sum and Go files, the tags and the linker flags. A change rebuilds.
 */
export function sourceHash(engine) {
  const dir = join(ROOT, engine.module);
  const h = createHash('sha256');
  for (const name of readdirSync(dir)
    .filter((n) => n === 'go.mod' || n === 'go.sum' || n.endsWith('.go'))
    .sort()) {
    h.update(name)
      .update('\0')
      .update(readFileSync(join(dir, name)))
      .update('\0');
  }
  h.update(engine.tags).update('\0').update(engine.ldflags);
  return h.digest('hex').slice(0, 16);
}

function stampPath(engine, env) {
  return join(engineDir(engine, env), 'build.json');
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // ENOENT / EACCES: not built.
    return false;
  }
}

/** @returns true when every binary of `engine` is in the cache and was built from the current module files. */
export function isBuilt(engine, env = process.env) {
  const dir = engineDir(engine, env);
  if (!engine.binaries.every((b) => isExecutable(join(dir, b)))) return false;
  try {
    const stamp = JSON.parse(readFileSync(stampPath(engine, env), 'utf8'));
    return stamp.version === engine.version && stamp.sourceHash === sourceHash(engine);
  } catch {
    // Missing or unreadable stamp: a build that did not finish.
    return false;
  }
}

/**
 * Path of one engine binary in the cache.
 * @throws Error naming the binary and the command that builds it when it is missing or stale.
 */
export function binary(binaryName, env = process.env) {
  const engine = ENGINES.find((e) => e.binaries.includes(binaryName));
  if (engine === undefined) throw new Error(`no engine ships ${binaryName}`);
  if (!isBuilt(engine, env)) {
    throw new Error(
      `${binaryName} ${engine.version} is not built in ${engineDir(engine, env)}: run \`${INSTALL.build}\` (needs Go: ${INSTALL.go})`,
    );
  }
  return join(engineDir(engine, env), binaryName);
}

/** Finds the first of `names` on PATH. @returns its path, or undefined. */
export function onPath(names, env = process.env) {
  for (const name of names) {
    for (const dir of (env.PATH ?? '').split(delimiter).filter((d) => d !== '')) {
      if (isExecutable(join(dir, name))) return join(dir, name);
    }
  }
  return undefined;
}

/** The `go` command and its version. @throws Error with the install hint when Go is missing. */
export function goTool(env = process.env) {
  const go = onPath(['go'], env) ?? (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (go === undefined) throw new Error(`go not found on PATH: ${INSTALL.go}`);
  const r = spawnSync(go, ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${go} env GOVERSION failed: ${r.stderr}`);
  return { go, version: r.stdout.trim() };
}

/**
 * Builds one engine into its cache folder (`go build -trimpath`), printing a
 * progress line every 30 s with the number of packages compiled so far.
 * The full `go build -v` output goes to `<cache>/<name>-<version>/build.log`.
 * @returns the build's wall-clock seconds. Rejects with the log's tail on failure.
 */
export async function buildEngine(engine, { log = console.error, env = process.env } = {}) {
  const { go, version: goVersion } = goTool(env);
  const dir = engineDir(engine, env);
  mkdirSync(dir, { recursive: true });
  rmSync(stampPath(engine, env), { force: true });
  const logPath = join(dir, 'build.log');
  const out = createWriteStream(logPath);
  const args = ['build', '-v', '-trimpath'];
  if (engine.tags !== '') args.push('-tags', engine.tags);
  if (engine.ldflags !== '') args.push('-ldflags', engine.ldflags);
  args.push('-o', engine.output === '' ? `${dir}/` : join(dir, engine.output), ...engine.packages);
  const started = Date.now();
  log(`stack: building ${engine.name} ${engine.version} with ${goVersion} (${engine.module}); log: ${logPath}`);
  let packages = 0;
  let tail = '';
  const child = spawn(go, args, { cwd: join(ROOT, engine.module), env, stdio: ['ignore', 'pipe', 'pipe'] });
  const onData = (chunk) => {
    out.write(chunk);
    const text = chunk.toString('utf8');
    packages += (text.match(/\n/g) ?? []).length;
    tail = (tail + text).slice(-4000);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const ticker = setInterval(() => {
    log(
      `stack: still building ${engine.name}: ${Math.round((Date.now() - started) / 1000)} s, ${packages} packages so far`,
    );
  }, 30_000);
  const code = await new Promise((resolve) => {
    child.once('error', (err) => {
      tail += `\n${err.message}`;
      resolve(-1);
    });
    child.once('exit', (c) => resolve(c ?? -1));
  });
  clearInterval(ticker);
  await new Promise((resolve) => out.end(resolve));
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  if (code !== 0)
    throw new Error(
      `go build of ${engine.name} ${engine.version} failed (exit ${code}) after ${seconds} s; see ${logPath}:\n${tail}`,
    );
  writeFileSync(
    stampPath(engine, env),
    `${JSON.stringify({ version: engine.version, sourceHash: sourceHash(engine), go: goVersion, seconds, builtAt: new Date().toISOString() }, null, 2)}\n`,
  );
  log(`stack: built ${engine.name} ${engine.version} in ${seconds} s (${packages} packages)`);
  return seconds;
}

/**
 * Builds every engine that is missing or stale, one after another, and
 * reuses the others.
 * @returns per engine: 'reused' or the build's seconds.
 */
export async function ensureEngines({ log = console.error, env = process.env, names } = {}) {
  const result = {};
  for (const engine of ENGINES) {
    if (names !== undefined && !names.includes(engine.name)) continue;
    if (isBuilt(engine, env)) {
      result[engine.name] = 'reused';
      continue;
    }
    result[engine.name] = await buildEngine(engine, { log, env });
  }
  return result;
}

/** Alertmanager from PATH (Debian's prometheus-alertmanager). @throws Error with the install command. */
export function alertmanagerBinary(env = process.env) {
  const found = onPath(['prometheus-alertmanager', 'alertmanager'], env);
  if (found === undefined) throw new Error(`prometheus-alertmanager not found: ${INSTALL.alertmanager}`);
  return found;
}

/** @returns true when `path` exists (for callers that only report). */
export const exists = existsSync;
