/**
 * The change feed on real files (the platform's notifications, one watch per
 * directory a listing entered): it says a change came for files created,
 * appended to, renamed and deleted in any listed folder and for a new
 * folder, follows the new folder once a listing gave it, says nothing when
 * nothing moved, notices a missing root being created, and gives up (saying
 * why) where it cannot watch instead of claiming that nothing changed.
 * Notifications arrive asynchronously: each check waits for its condition
 * (bounded), never for a fixed time.
 */
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expandPaths } from '../../src/replay/input-files.js';
import { startChangeFeed, type ChangeFeed } from '../../src/watch/change-feed.js';

const dirs: string[] = [];
const feeds: ChangeFeed[] = [];
afterEach(() => {
  for (const feed of feeds.splice(0)) feed.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'change-feed-'));
  dirs.push(dir);
  return dir;
}

function feedFor(roots: readonly string[]): ChangeFeed {
  const feed = startChangeFeed(roots);
  feeds.push(feed);
  return feed;
}

/** Lists `root` as the watch does and has the feed follow what the listing entered. */
async function listAndFollow(feed: ChangeFeed, root: string): Promise<string[]> {
  const { dirs: entered } = await expandPaths([root]);
  feed.follow(entered);
  return entered;
}

/** Resolves once the feed says a change came; rejects after 120 s with `what` (a bound for a stuck feed, not a speed verdict). */
async function changeArrives(feed: ChangeFeed, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!feed.takeChanged()) {
    if (Date.now() > deadline) throw new Error(`no notification within 120 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** How many of `looks` looks, 10 ms apart, saw a change. */
async function changesIn(feed: ChangeFeed, looks: number): Promise<number> {
  let changes = 0;
  for (let look = 0; look < looks; look += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (feed.takeChanged()) changes += 1;
  }
  return changes;
}

describe('the change feed', () => {
  it('notifies files created, appended to, renamed and deleted in a listed folder, and a new folder, then follows it', async () => {
    const root = tempDir();
    const nested = join(root, 'project', 'session', 'subagents');
    mkdirSync(nested, { recursive: true });
    const feed = feedFor([root]);
    expect(feed.takeChanged()).toBe(true);
    const entered = await listAndFollow(feed, root);
    expect(entered).toEqual([root, join(root, 'project'), join(root, 'project', 'session'), nested]);
    // New watches ask for one more listing (a write before they existed was not notified), then quiet.
    expect(feed.takeChanged()).toBe(true);
    expect(await changesIn(feed, 5)).toBe(0);

    const file = join(nested, 'agent-1.jsonl');
    writeFileSync(file, '{"a":1}\n');
    await changeArrives(feed, 'a file created');
    appendFileSync(file, '{"a":2}\n');
    await changeArrives(feed, 'an append');
    renameSync(file, `${file}.old`);
    await changeArrives(feed, 'a rename');
    rmSync(`${file}.old`);
    await changeArrives(feed, 'a deletion');

    const later = join(nested, 'workflows');
    mkdirSync(later);
    await changeArrives(feed, 'a new folder');
    await listAndFollow(feed, root);
    feed.takeChanged();
    writeFileSync(join(later, 'agent-2.jsonl'), '{}\n');
    await changeArrives(feed, 'a file in the new folder, once listed');
    expect(feed.watching).toBe(true);
  });

  it('says nothing changed while nothing moves', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'a.jsonl'), '{}\n');
    const feed = feedFor([root]);
    await listAndFollow(feed, root);
    expect(feed.takeChanged()).toBe(true);
    // Counted looks, not a timed verdict: 20 looks with no write in between.
    expect(await changesIn(feed, 20)).toBe(0);
  });

  it('notices a root that does not exist yet being created', async () => {
    const parent = tempDir();
    const root = join(parent, 'projects');
    const feed = feedFor([root]);
    expect(await listAndFollow(feed, root)).toEqual([]);
    feed.takeChanged();
    mkdirSync(root);
    await changeArrives(feed, 'the root created');
    await listAndFollow(feed, root);
    feed.takeChanged();
    writeFileSync(join(root, 's.jsonl'), '{}\n');
    await changeArrives(feed, 'a file in the new root');
  });

  it('stops following a folder the listing no longer gives', async () => {
    const root = tempDir();
    const gone = join(root, 'old');
    mkdirSync(gone);
    const feed = feedFor([root]);
    await listAndFollow(feed, root);
    feed.follow([root]);
    feed.takeChanged();
    writeFileSync(join(gone, 'a.jsonl'), '{}\n');
    expect(await changesIn(feed, 20)).toBe(0);
  });

  it('gives up where it cannot watch, saying which folder and that every pass lists', () => {
    const root = tempDir();
    const loop = join(root, 'loop');
    symlinkSync(loop, loop);
    const heard: string[] = [];
    const feed = startChangeFeed([root], (why) => heard.push(why));
    feeds.push(feed);
    feed.follow([root, loop]);
    feed.follow([root, loop]);
    // Said once, when it happened.
    expect(heard).toEqual([feed.failure]);
    expect(feed.watching).toBe(false);
    expect(feed.failure).toContain(loop);
    expect(feed.failure).toContain('listing the directories every pass instead');
    expect(feed.takeChanged()).toBe(true);
    feed.close();
    feed.close();
  });
});
