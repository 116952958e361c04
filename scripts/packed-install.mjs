/**
 * The package as users get it: `npm pack` of this repository (what
 * `package.json`'s `files` ships; `dist/` must be built first, `npm run
 * build`), and the command installed from that tarball the way a user
 * installs a command, `npm install --global`, into a prefix of the caller's.
 * Also the environment an exporting command runs with to send to one
 * destination only. Used by the tests that run the installed command
 * (test/deps/, test/cli/packed-command.e2e.test.ts, test/stack/) and by
 * scripts/packed-export-check.mjs.
 *
 * Dependencies come from the npm cache when it holds them
 * (`--prefer-offline`; `npm ci` of this repository puts them there), else
 * from the registry. Install scripts are not run (`--ignore-scripts`): the
 * package has none, and its dependencies' scripts only print notices.
 * Owns only the files it writes into the directories it is given.
 *
 * @module subagent-otel/scripts/packed-install
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the package that is packed). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * `npm pack` of the repository into `destination` (which must exist).
 * @returns the tarball's absolute path. Throws with npm's output when packing fails.
 */
export function packPackage(destination) {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [info] = JSON.parse(out);
  if (info === undefined || typeof info.filename !== 'string') throw new Error(`npm pack printed no tarball: ${out}`);
  return resolve(destination, info.filename);
}

/**
 * Installs the command from `tarball` with `npm install --global --prefix
 * <prefix>`: the bin in `<prefix>/bin`, the package (with its own
 * `node_modules`) in `<prefix>/lib/node_modules/subagent-otel`.
 * @returns `bin`, the installed `subagent-otel` (npm's link to the bundle),
 *   and `packageDir`. Throws with npm's output when the install fails.
 */
export function installPackedCommand(tarball, prefix) {
  execFileSync(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      tarball,
    ],
    {
      cwd: prefix,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return {
    bin: join(prefix, 'bin', 'subagent-otel'),
    packageDir: join(prefix, 'lib', 'node_modules', 'subagent-otel'),
  };
}

/** No telemetry configuration of the caller's own, and no caller's trace context. */
const NO_TELEMETRY_ENV = Object.freeze({
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '',
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: '',
  OTEL_EXPORTER_OTLP_HEADERS: '',
  OTEL_TRACES_EXPORTER: '',
  OTEL_METRICS_EXPORTER: '',
  SUBAGENT_OTEL_OUT: '',
  SUBAGENT_OTEL_PROMETHEUS_PORT: '',
  SUBAGENT_OTEL_LOG_FILE: '',
  TRACEPARENT: '',
  TRACESTATE: '',
});

/**
 * The variables that make a command export to `destination` only, laid
 * over the caller's environment: its endpoint, protocol, certificate (TLS)
 * and service name, every other telemetry variable emptied, and a shutdown
 * budget of 120 s, so a loaded machine never decides whether the last
 * batch made it.
 * @param {{ endpoint: string, protocol: string, certificate?: string, service: string }} destination
 * @returns {Record<string, string>} a new object; never reads or changes `process.env`.
 */
export function exportingEnvironment(destination) {
  return {
    ...NO_TELEMETRY_ENV,
    OTEL_EXPORTER_OTLP_ENDPOINT: destination.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: destination.protocol,
    OTEL_EXPORTER_OTLP_CERTIFICATE: destination.certificate ?? '',
    OTEL_SERVICE_NAME: destination.service,
    SUBAGENT_OTEL_SHUTDOWN_TIMEOUT_MS: '120000',
  };
}
