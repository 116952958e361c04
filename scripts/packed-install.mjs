/**
 * The package as users get it: `npm pack` of this repository (what
 * `package.json`'s `files` ships; `dist/` must be built first, `npm run
 * build`), and the command installed from that tarball the way a user
 * installs a command, `npm install --global`, into a prefix of the caller's.
 * Used by the tests that run the installed command (test/deps/,
 * test/cli/packed-command.e2e.test.ts, test/stack/) and by
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
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: PACKAGE_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
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
  execFileSync('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball], {
    cwd: prefix,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { bin: join(prefix, 'bin', 'subagent-otel'), packageDir: join(prefix, 'lib', 'node_modules', 'subagent-otel') };
}
