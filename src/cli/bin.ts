#!/usr/bin/env node
/**
 * The `subagent-otel` command's first module (the package's `bin`). Refuses
 * a Node.js older than the floor the package needs (`engines`: 22.15.0) with
 * one line on stderr and exit code 1, before anything else is loaded; else
 * turns on Node's compile cache (`cli/compile-cache`) and loads the CLI
 * (`cli/main`), or for `hook` the agents' hook alone (`hooks/run-hook`). Imports nothing statically (the bundle adds only its
 * `createRequire` banner), so an old Node gets as far as this check: keep it
 * so (decision 0060).
 *
 * @module subagent-otel/cli/bin
 */

/** The oldest Node.js the package runs on (`engines.node` in package.json). */
const FLOOR = [22, 15] as const;

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < FLOOR[0] || (major === FLOOR[0] && minor < FLOOR[1])) {
  process.stderr.write(
    `subagent-otel: needs Node.js ${FLOOR.join('.')} or later, but this is Node.js ${process.versions.node} (${process.execPath}); install a current Node.js LTS and run it again\n`,
  );
  process.exitCode = 1;
} else {
  const { enableCompileCacheFor } = await import('./compile-cache.js');
  enableCompileCacheFor(process.env);
  if (process.argv[2] === 'hook') {
    // What the agents run at a subagent's end: loads the hook alone, never the CLI (decision 0123).
    const { runHook } = await import('../hooks/run-hook.js');
    process.exitCode = await runHook(process.argv.slice(3), {
      stdin: process.stdin,
      env: process.env,
      script: process.argv[1] ?? '',
    });
  } else {
    await import('./main.js');
  }
}
