/**
 * The watch checkpoint as a file: a damaged one refused with what to do;
 * its file states (decision 0134) written and read back whole, a damaged
 * entry or a damaged field dropped rather than refusing the checkpoint (they
 * are a cache: the file is classified again), a checkpoint without them
 * read as before. Restarts of the watch from it (runs neither lost nor
 * repeated, versions 1 and 2, files not classified again) are tested with
 * the watch loop in watcher.test.ts and end to end in
 * test/cli/watch.e2e.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCheckpoint, saveCheckpoint, type Checkpoint } from '../../src/watch/checkpoint.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function checkpointPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'watch-checkpoint-'));
  dirs.push(dir);
  return join(dir, 'checkpoint.json');
}

const session = {
  size: 1200,
  mtimeMs: 1_700_000_000_123.5,
  ino: 42,
  info: { format: 'claude-code', kind: 'session', facts: { session: 's1', parent: 'p1' } },
} as const;
const sidecar = {
  size: 80,
  mtimeMs: 1_700_000_000_000,
  ino: 43,
  info: { format: 'claude-code', kind: 'sidecar', what: 'a subagent description', facts: { agent: 'a1' } },
} as const;
const notes = { size: 10, mtimeMs: 1_700_000_000_000, ino: 44, info: null } as const;

const base = { version: 2, dirs: ['/agents'], since: 5, reported: { r1: { end: 7 } } } as const;

describe('the checkpoint file states', () => {
  it('are written and read back as they were', async () => {
    const path = checkpointPath();
    const checkpoint: Checkpoint = {
      ...base,
      read: { k: { signature: '/agents/a.jsonl:1200:1', at: 9 } },
      files: {
        classifier: '1:claude-code',
        states: { '/agents/a.jsonl': session, '/agents/a.meta.json': sidecar, '/agents/n': notes },
      },
    };
    await saveCheckpoint(path, checkpoint);
    expect(await loadCheckpoint(path)).toEqual({ ok: true, checkpoint });
  });

  it('drop a damaged entry and keep the others and the rest of the checkpoint', async () => {
    const path = checkpointPath();
    const damaged = {
      '/agents/size': { ...session, size: 'big' },
      '/agents/format': { ...session, info: { ...session.info, format: 'vim' } },
      '/agents/facts': { ...session, info: { ...session.info, facts: { session: 3 } } },
      '/agents/none': null,
    };
    writeFileSync(
      path,
      JSON.stringify({ ...base, files: { classifier: 'c', states: { '/agents/a.jsonl': session, ...damaged } } }),
    );
    const loaded = await loadCheckpoint(path);
    expect(loaded).toEqual({
      ok: true,
      checkpoint: { ...base, files: { classifier: 'c', states: { '/agents/a.jsonl': session } } },
    });
  });

  it('are dropped whole when the field is damaged, the rest of the checkpoint kept', async () => {
    const path = checkpointPath();
    for (const files of [7, { states: {} }, { classifier: 'c', states: [] }]) {
      writeFileSync(path, JSON.stringify({ ...base, files }));
      const loaded = await loadCheckpoint(path);
      expect(loaded.ok && loaded.checkpoint).toEqual(base);
      expect(loaded.ok && loaded.checkpoint?.files).toBeUndefined();
    }
  });

  it('are absent from a checkpoint written before them, which still reads', async () => {
    const path = checkpointPath();
    writeFileSync(path, JSON.stringify({ ...base, read: { k: { signature: 's', at: 1 } } }));
    const loaded = await loadCheckpoint(path);
    expect(loaded).toEqual({ ok: true, checkpoint: { ...base, read: { k: { signature: 's', at: 1 } } } });
    expect(loaded.ok && loaded.checkpoint?.files).toBeUndefined();
  });
});

describe('the checkpoint', () => {
  it('refuses a damaged file, naming it and what to do', async () => {
    const path = checkpointPath();
    writeFileSync(path, '{"version":1,"dirs":[');
    const loaded = await loadCheckpoint(path);
    expect(loaded.ok).toBe(false);
    expect(!loaded.ok && loaded.message).toContain(`the checkpoint ${path} is not JSON`);
    writeFileSync(path, '{"version":2}');
    const wrong = await loadCheckpoint(path);
    expect(!wrong.ok && wrong.message).toContain('is not a subagent-otel watch checkpoint');
    writeFileSync(path, '{"version":2,"dirs":[],"since":0,"reported":{"r1":"x"}}');
    const field = await loadCheckpoint(path);
    expect(!field.ok && field.message).toContain('(reported.r1: Invalid input: expected object, received string)');
    writeFileSync(path, '{"version":3,"dirs":[],"since":0,"reported":{}}');
    const newer = await loadCheckpoint(path);
    expect(!newer.ok && newer.message).toContain(
      '(version 3, this subagent-otel reads 1 and 2); move it away to start over, or give another with --checkpoint',
    );
    expect(await loadCheckpoint(join(dirname(path), 'none.json'))).toEqual({ ok: true, checkpoint: undefined });
  });
});
