/**
 * The optional team attributes (decision 0124): the repository and branch a
 * transcript run worked in, and the user, on its span and on the run and
 * cost metrics, so that truncation and cost can be broken down per
 * repository and person. Off unless `SUBAGENT_OTEL_TEAM_ATTRIBUTES` is on:
 * they name people and repositories to whoever reads the telemetry.
 *
 * Names: `vcs.repository.url.full` and `vcs.ref.head.name` (the VCS
 * registry of the semantic conventions), `user.name` (the user registry).
 * The repository comes from the run's files (Codex records its remote) or
 * from the git configuration of its working directory, read once per
 * directory; its user name and password, query and fragment are never
 * emitted.
 *
 * @module subagent-otel/telemetry/team-attributes
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Attributes } from '@opentelemetry/api';
import type { RunWorkspace } from '../observe/run-record.js';

export const ATTR_VCS_REPOSITORY_URL_FULL = 'vcs.repository.url.full' as const;
export const ATTR_VCS_REF_HEAD_NAME = 'vcs.ref.head.name' as const;
export const ATTR_USER_NAME = 'user.name' as const;

/** The team attributes of a run's workspace (none for a run whose files say nothing of it but the user). */
export type TeamAttributes = (workspace: RunWorkspace | undefined) => Attributes;

/**
 * A remote URL without credentials, query, fragment or a final `.git`;
 * `git@host:path` (scp-like) as `https://host/path`. `undefined` for
 * anything that is not a URL or an scp-like address. Pure.
 */
export function publicRepositoryUrl(remote: string): string | undefined {
  const value = remote.trim();
  const scp = /^[\w.-]+@([\w.-]+):(?!\/\/)(.+)$/.exec(value);
  let url: URL;
  try {
    url = new URL(scp !== null ? `https://${scp[1]}/${scp[2]}` : value);
  } catch {
    return undefined;
  }
  if (url.protocol === 'file:') return undefined; // a local path names a folder, not a shared repository
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return url
    .toString()
    .replace(/\.git\/?$/, '')
    .replace(/\/$/, '');
}

/** The `url` of remote `origin` (else the first remote) in a git configuration's text. Pure. */
export function remoteOfGitConfig(text: string): string | undefined {
  let section: string | undefined;
  const urls = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = /^\[\s*remote\s+"([^"]+)"\s*\]$/.exec(line);
    if (header !== null) {
      section = header[1];
      continue;
    }
    if (line.startsWith('[')) section = undefined;
    const url = /^url\s*=\s*(.+)$/.exec(line);
    if (section !== undefined && url !== null && !urls.has(section)) urls.set(section, (url[1] ?? '').trim());
  }
  return urls.get('origin') ?? urls.values().next().value;
}

/** The git configuration file of the repository holding `cwd` (a worktree's `.git` file followed to its common folder), or `undefined`. */
function gitConfigOf(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (let depth = 0; depth < 64; depth += 1) {
    const dotGit = join(dir, '.git');
    try {
      const info = statSync(dotGit);
      if (info.isDirectory()) return join(dotGit, 'config');
      // A worktree or submodule: `gitdir: <path>`; a worktree's folder names its common folder in `commondir`.
      const gitdir = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
      if (gitdir === undefined) return undefined;
      const absolute = resolve(dir, gitdir);
      let common = absolute;
      try {
        common = resolve(absolute, readFileSync(join(absolute, 'commondir'), 'utf8').trim());
      } catch {
        // no commondir: a submodule's folder holds its own config
      }
      return join(common, 'config');
    } catch {
      // no .git here
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** The public URL of the repository holding `cwd`, from its git configuration; `undefined` when there is none. Never throws. */
export function repositoryOfFolder(cwd: string): string | undefined {
  const config = gitConfigOf(cwd);
  if (config === undefined) return undefined;
  try {
    const remote = remoteOfGitConfig(readFileSync(config, 'utf8'));
    return remote !== undefined ? publicRepositoryUrl(remote) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The team attributes for `userName`, looking repositories up with
 * `repositoryOf` (cached per folder; at most 1,024 folders remembered).
 */
export function teamAttributes(
  userName: string | undefined,
  repositoryOf: (cwd: string) => string | undefined = repositoryOfFolder,
): TeamAttributes {
  const cache = new Map<string, string | undefined>();
  return (workspace) => {
    const attributes: Attributes = {};
    if (userName !== undefined && userName !== '') attributes[ATTR_USER_NAME] = userName;
    if (workspace === undefined) return attributes;
    let repository = workspace.repositoryUrl !== undefined ? publicRepositoryUrl(workspace.repositoryUrl) : undefined;
    if (repository === undefined && workspace.cwd !== undefined) {
      if (!cache.has(workspace.cwd)) {
        if (cache.size >= 1024) cache.clear();
        cache.set(workspace.cwd, repositoryOf(workspace.cwd));
      }
      repository = cache.get(workspace.cwd);
    }
    if (repository !== undefined) attributes[ATTR_VCS_REPOSITORY_URL_FULL] = repository;
    if (workspace.branch !== undefined && workspace.branch !== '' && workspace.branch !== 'HEAD')
      attributes[ATTR_VCS_REF_HEAD_NAME] = workspace.branch;
    return attributes;
  };
}
