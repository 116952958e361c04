/**
 * On Linux, agent processes do not outlive the process that started them:
 * each is started through util-linux `setpriv --pdeathsig SIGKILL`, which
 * sets the parent-death signal (`prctl(PR_SET_PDEATHSIG)`) and then execs the
 * agent in place. So a proxy or backend killed with SIGKILL (which can
 * forward nothing) still takes its agent with it. Node has no `prctl`, and a
 * native addon would need a compiler at install time; `setpriv` ships with
 * every Debian/Ubuntu/Fedora base system. Where it is missing (other
 * systems, minimal images) agents are started directly, as before.
 *
 * The command is looked up on PATH here, before `setpriv` is involved, so a
 * missing command is still reported as the spawn error it always was.
 *
 * @module subagent-otel/backend/parent-death
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** The wrapper that sets the parent-death signal, where it exists. */
const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];
/** Signal a child gets when its parent dies. */
export const PARENT_DEATH_SIGNAL = 'SIGKILL';

let setpriv: string | null | undefined;

function setprivPath(): string | undefined {
  if (setpriv === undefined)
    setpriv = process.platform === 'linux' ? (SETPRIV_PATHS.find(isExecutableFile) ?? null) : null;
  return setpriv ?? undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // ENOENT/EACCES: not this one.
    return false;
  }
}

/** `command` as `execvp` would find it on `pathVariable`, or `undefined`. */
function findCommand(command: string, pathVariable: string | undefined, cwd: string | undefined): string | undefined {
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd ?? process.cwd(), command);
    return isExecutableFile(path) ? path : undefined;
  }
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    const path = join(dir === '' ? (cwd ?? process.cwd()) : dir, command);
    if (isExecutableFile(path)) return path;
  }
  return undefined;
}

/**
 * What to spawn so that `command` dies with this process.
 *
 * @returns `{ command, args }` for `spawn`: through `setpriv --pdeathsig
 *   SIGKILL --` on Linux when `setpriv` exists and `command` is found on the
 *   child's PATH; otherwise `command` and `args` unchanged (so a missing
 *   command fails to spawn exactly as it would have). Never throws.
 */
export function withParentDeathSignal(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): { readonly command: string; readonly args: readonly string[] } {
  const wrapper = setprivPath();
  if (wrapper === undefined) return { command, args };
  const found = findCommand(command, env['PATH'], cwd);
  if (found === undefined) return { command, args };
  return { command: wrapper, args: ['--pdeathsig', PARENT_DEATH_SIGNAL, '--', found, ...args] };
}
