/** The team attributes: public repository URLs only, the remote read from git's own files, cached per folder. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  publicRepositoryUrl,
  remoteOfGitConfig,
  repositoryOfFolder,
  teamAttributes,
} from '../../src/telemetry/team-attributes.js';

const root = mkdtempSync(join(tmpdir(), 'team-attributes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('publicRepositoryUrl', () => {
  it('drops credentials, query, fragment and .git; reads scp-like addresses; refuses local paths', () => {
    expect(publicRepositoryUrl('https://alice:ghp_token@github.com/acme/widgets.git')).toBe(
      'https://github.com/acme/widgets',
    );
    expect(publicRepositoryUrl('https://github.com/acme/widgets?x=1#y')).toBe('https://github.com/acme/widgets');
    expect(publicRepositoryUrl('git@github.com:acme/widgets.git')).toBe('https://github.com/acme/widgets');
    expect(publicRepositoryUrl('ssh://git@gitlab.example:2222/team/app.git')).toBe(
      'ssh://gitlab.example:2222/team/app',
    );
    expect(publicRepositoryUrl('file:///srv/repos/app.git')).toBeUndefined();
    expect(publicRepositoryUrl('../app')).toBeUndefined();
  });
});

describe('remoteOfGitConfig and repositoryOfFolder', () => {
  const config =
    '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://github.com/up/app.git\n[remote "origin"]\n\turl = git@github.com:me/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n';

  it('takes origin first, else the first remote', () => {
    expect(remoteOfGitConfig(config)).toBe('git@github.com:me/app.git');
    expect(remoteOfGitConfig('[remote "a"]\n url = https://x/a\n')).toBe('https://x/a');
    expect(remoteOfGitConfig('[core]\n')).toBeUndefined();
  });

  it('finds the repository of a folder deep inside it, and of a linked worktree', () => {
    const repo = join(root, 'repo');
    mkdirSync(join(repo, '.git', 'worktrees', 'wt'), { recursive: true });
    writeFileSync(join(repo, '.git', 'config'), config);
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    expect(repositoryOfFolder(join(repo, 'src', 'deep'))).toBe('https://github.com/me/app');
    const worktree = join(root, 'wt');
    mkdirSync(worktree);
    writeFileSync(join(worktree, '.git'), `gitdir: ${join(repo, '.git', 'worktrees', 'wt')}\n`);
    writeFileSync(join(repo, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    expect(repositoryOfFolder(worktree)).toBe('https://github.com/me/app');
    expect(repositoryOfFolder(join(root, 'nowhere'))).toBeUndefined();
  });
});

describe('teamAttributes', () => {
  it('names the user, the recorded or looked-up repository and the branch (not a detached HEAD), looking each folder up once', () => {
    let lookups = 0;
    const team = teamAttributes('alice', () => {
      lookups += 1;
      return 'https://github.com/acme/widgets';
    });
    expect(team(undefined)).toEqual({ 'user.name': 'alice' });
    expect(team({ cwd: '/w', branch: 'feature/x' })).toEqual({
      'user.name': 'alice',
      'vcs.repository.url.full': 'https://github.com/acme/widgets',
      'vcs.ref.head.name': 'feature/x',
    });
    expect(team({ cwd: '/w', branch: 'HEAD' })).toEqual({
      'user.name': 'alice',
      'vcs.repository.url.full': 'https://github.com/acme/widgets',
    });
    expect(lookups).toBe(1);
    expect(team({ cwd: '/w', repositoryUrl: 'https://bob:pw@example.com/r.git' })['vcs.repository.url.full']).toBe(
      'https://example.com/r',
    );
  });
});
