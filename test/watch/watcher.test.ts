/**
 * The watch loop against real files in a temporary directory, with a
 * scripted transcript format as its peer (the real formats are tested with
 * their own files in test/transcripts/ and end to end in
 * test/cli/watch.e2e.test.ts). Each test scripts the files pass by pass
 * (`onPass` runs between two passes) on a clock it sets, so no verdict
 * depends on the machine's speed: files appear, grow, are cut mid-line,
 * replaced and deleted; the watcher is stopped and started again from its
 * checkpoint; every run must be reported exactly once.
 *
 * The scripted format: a file whose line 1 is `{"scripted":"<session>"}`,
 * then one line per record `{"run":"<id>","t":<ms>,"end":<bool>}` (with
 * `"u":<n>`: the call reported n input tokens); a run ends at its
 * `end: true` record, or when its file has been quiet for the idle bound.
 */
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TranscriptRunBuilder } from '../../src/transcripts/transcript-run.js';
import type { RunListener, RunRecord } from '../../src/observe/run-record.js';
import { fileChunks } from '../../src/wire/file-chunks.js';
import { readLines } from '../../src/wire/input-lines.js';
import { HOOK_SETTLE_MS, type TranscriptFormat, type TranscriptProblem } from '../../src/transcripts/format.js';
import { loadCheckpoint, type Checkpoint } from '../../src/watch/checkpoint.js';
import { startChangeFeed } from '../../src/watch/change-feed.js';
import { watchTranscripts, type WatchPass } from '../../src/watch/watcher.js';
import { EndNotices } from '../../src/watch/end-notices.js';
import { isQuietFile } from '../../src/transcripts/record-loop.js';

/** Every path the scripted format was asked to classify, in order (the watch classifies a file it has no state of). */
const classified: string[] = [];

const scripted: TranscriptFormat = {
  name: 'claude-code',
  classify: (head) => {
    classified.push(head.path);
    const line = head.firstLine as { scripted?: unknown } | undefined;
    return typeof line?.scripted === 'string'
      ? { format: 'claude-code', kind: 'session', facts: { session: line.scripted } }
      : undefined;
  },
  group: (files) =>
    files.map((file) => ({
      format: 'claude-code',
      key: `scripted:${file.info.facts['session'] ?? file.path}`,
      files: [file],
    })),
  async read(session, context) {
    const file = session.files[0];
    if (file === undefined) return [];
    const runs = new Map<string, { builder: TranscriptRunBuilder; ended: boolean }>();
    let records = 0;
    for await (const item of readLines(fileChunks(file.path))) {
      if (item.kind === 'problem') {
        context.onProblem({
          file: file.path,
          line: item.line,
          code: item.code,
          scope: 'record',
          message: item.message,
        });
        continue;
      }
      if (item.line === 1) continue;
      records += 1;
      const record = JSON.parse(Buffer.from(item.bytes).toString('utf8')) as {
        run: string;
        t: number;
        end: boolean;
        u?: number;
      };
      let run = runs.get(record.run);
      if (run === undefined) {
        run = {
          builder: new TranscriptRunBuilder({
            runId: record.run,
            source: 'claude-code',
            agentName: 'scripted',
            startTime: record.t,
            traceKey: session.key,
          }),
          ended: false,
        };
        runs.set(record.run, run);
      }
      run.builder.call({
        time: record.t,
        content: [{ type: 'text', text: `at ${record.t}` }],
        ...(record.u !== undefined ? { usage: { inputTokens: record.u, outputTokens: 1 } } : {}),
      });
      if (record.end) {
        run.ended = true;
        run.builder.noteStop({ reason: 'completed', inferredFrom: 'scripted:end' });
      }
    }
    let reported = 0;
    const live = context.live;
    // The real formats' rule: quiet at the idle bound, or once an end hook's notice settled.
    const quiet = live !== undefined && isQuietFile(file, context);
    for (const [runId, run] of runs) {
      if (live !== undefined && !run.ended && !quiet) continue;
      const record = run.builder.finish();
      if (live?.isReported(runId, record.endTime) === true) continue;
      context.listener.onRunStart(record);
      context.listener.onRunEnd(record);
      reported += 1;
    }
    return [{ path: file.path, records, runs: reported, isSkipped: false }];
  },
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace(): { dir: string; state: string; checkpoint: string } {
  const dir = mkdtempSync(join(tmpdir(), 'watch-agents-'));
  const state = mkdtempSync(join(tmpdir(), 'watch-state-'));
  dirs.push(dir, state);
  return { dir, state, checkpoint: join(state, 'checkpoint.json') };
}

const line = (run: string, t: number, end = false, u?: number): string =>
  `${JSON.stringify({ run, t, end, ...(u !== undefined ? { u } : {}) })}\n`;
/** The checkpoint's digest of a scripted run's output (`at <t>`), computed here as its format is documented: the first 32 hex of SHA-256 of the output's JSON. */
const digestOf = (t: number): string =>
  createHash('sha256')
    .update(JSON.stringify([{ type: 'text', text: `at ${t}` }]))
    .digest('hex')
    .slice(0, 32);
const header = (session: string): string => `${JSON.stringify({ scripted: session })}\n`;
/** Sets a file's mtime (seconds since the epoch from ms) so that "quiet" is decided by the test's clock. */
const touch = (path: string, ms: number): void => utimesSync(path, ms / 1000, ms / 1000);

interface Script {
  /** Steps run after pass n (1-based), given the clock to move; the watch stops after the last. */
  readonly steps: ReadonlyArray<(clock: { t: number }) => void>;
  readonly checkpoint?: Checkpoint;
  readonly history?: boolean;
  readonly startAt: number;
  /** What each flush answers, in order (default: safe). */
  readonly flushAnswers?: readonly boolean[];
  /** Files written before the first pass. */
  readonly before?: () => void;
  /** What the agents' end hooks told the watch (decision 0123). */
  readonly notices?: EndNotices;
}

async function watch(ws: ReturnType<typeof workspace>, script: Script) {
  const reported: RunRecord[] = [];
  const problems: TranscriptProblem[] = [];
  const passes: WatchPass[] = [];
  const clock = { t: script.startAt };
  const stop = new AbortController();
  let flushes = 0;
  const listener: RunListener = { onRunStart: () => undefined, onRunEnd: (r) => reported.push(r) };
  script.before?.();
  const summary = await watchTranscripts({
    dirs: [ws.dir],
    listener,
    idleMs: 60_000,
    intervalMs: 1,
    checkpointPath: ws.checkpoint,
    ...(script.checkpoint !== undefined ? { checkpoint: script.checkpoint } : {}),
    history: script.history ?? false,
    flush: async () => {
      flushes += 1;
      return script.flushAnswers?.[flushes - 1] ?? true;
    },
    onProblem: (p) => problems.push(p),
    onPass: (pass) => {
      passes.push(pass);
      const step = script.steps[pass.pass - 1];
      if (step === undefined) stop.abort();
      else step(clock);
    },
    signal: stop.signal,
    now: () => clock.t,
    formats: [scripted],
    ...(script.notices !== undefined ? { notices: script.notices } : {}),
  });
  return { reported: reported.map((r) => r.runId), records: reported, problems, passes, summary, flushes };
}

/** The test's clock starts now, so that files written in a step and stamped with the clock (`put`, `add`) agree with it. */
const T0 = Math.floor(Date.now() / 1000) * 1000;
/** Writes `text` to `path` and stamps it with the clock's time (the agent wrote it now). */
const put = (path: string, text: string, clock: { t: number }): void => {
  writeFileSync(path, text);
  touch(path, clock.t);
};
const add = (path: string, text: string, clock: { t: number }): void => {
  appendFileSync(path, text);
  touch(path, clock.t);
};

/**
 * Steps: r1 begins in `file` (no end record), its Stop hook is heard 100 ms later, and the clock moves to
 * the notice's settle point: the pass after the last step reads r1 as closed by the notice.
 */
const hookedRun = (file: string, notices: EndNotices): Script['steps'] => [
  (clock) => put(file, header('s1') + line('r1', T0 + 1), clock),
  (clock) => {
    clock.t += 100;
    notices.add(file, clock.t);
  },
  (clock) => {
    clock.t += HOOK_SETTLE_MS;
  },
];

describe('watch', () => {
  it('reports a run once, when its end record arrives, as the file appears and grows', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const r = await watch(ws, {
      startAt: T0,
      steps: [
        (c) => put(file, header('s1') + line('r1', T0 + 1), c),
        (c) => add(file, line('r1', T0 + 2), c),
        (c) => add(file, line('r1', T0 + 3, true) + line('r2', T0 + 4), c),
        (c) => add(file, line('r2', T0 + 5), c),
      ],
    });
    expect(r.reported).toEqual(['r1']);
    expect(r.passes.map((p) => p.runsReported)).toEqual([0, 0, 0, 1, 0]);
    expect(r.records[0]?.steps).toHaveLength(3);
    expect(r.problems).toEqual([]);
    const saved = await loadCheckpoint(ws.checkpoint);
    expect(saved.ok && saved.checkpoint?.reported).toEqual({
      r1: { end: T0 + 3, output: digestOf(T0 + 3), emptyMessages: 0 },
    });
    expect(r.flushes).toBe(1);
  });

  it('reads nothing while nothing changes, also with two copies of one session in two folders', async () => {
    const ws = workspace();
    mkdirSync(join(ws.dir, 'a'));
    mkdirSync(join(ws.dir, 'b'));
    const first = join(ws.dir, 'a', 's1.jsonl');
    const copy = join(ws.dir, 'b', 's1.jsonl');
    const text = header('s1') + line('r1', T0 + 1) + line('r1', T0 + 2, true);
    const r = await watch(ws, {
      startAt: T0 + 10,
      history: true,
      steps: [
        (c) => (c.t += 1),
        (c) => (c.t += 1),
        (c) => add(first, line('r2', T0 + 13, true), c),
        (c) => (c.t += 1),
        (c) => (c.t += 1),
      ],
      before: () => {
        put(first, text, { t: T0 + 5 });
        put(copy, text, { t: T0 + 5 });
      },
    });
    // Both copies once at the start, the grown one once after it grew, and no other read.
    expect(r.passes.map((p) => p.sessionsRead)).toEqual([2, 0, 0, 1, 0, 0]);
    // One run id, reported once whichever copy was read first; the new run of the grown copy once.
    expect(r.reported).toEqual(['r1', 'r2']);
  });

  it('reports a run again, with its id, when the telemetry of the pass that reported it was lost, and checkpoints it only then', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const r = await watch(ws, {
      startAt: T0,
      flushAnswers: [false, true],
      steps: [
        (c) => put(file, header('s1') + line('r1', T0 + 1) + line('r1', T0 + 2, true), c),
        () => undefined,
        () => undefined,
      ],
    });
    expect(r.reported).toEqual(['r1', 'r1']);
    expect(r.flushes).toBe(2);
    expect(r.summary.repeated).toBe(1);
    const saved = await loadCheckpoint(ws.checkpoint);
    expect(saved.ok && Object.keys(saved.checkpoint?.reported ?? {})).toEqual(['r1']);
  });

  it('closes a run without an end once its file has been quiet for the idle bound, as the file says (unknown)', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const r = await watch(ws, {
      startAt: T0,
      steps: [
        (clock) => put(file, header('s1') + line('r1', T0 + 1), clock),
        (clock) => {
          clock.t += 59_000;
        },
        (clock) => {
          clock.t += 2_000;
        },
        (clock) => {
          clock.t += 120_000;
        },
      ],
    });
    expect(r.reported).toEqual(['r1']);
    expect(r.passes.map((p) => p.runsReported)).toEqual([0, 0, 0, 1, 0]);
    expect(r.records[0]?.stopReason).toBe('unknown');
  });

  it('closes the run an end hook named once its file settles, and leaves the next turn, written soon after, to its own hook', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const notices = new EndNotices();
    const r = await watch(ws, {
      startAt: T0,
      notices,
      steps: [
        ...hookedRun(file, notices),
        (clock) => {
          clock.t += 200;
          add(file, line('r2', clock.t), clock); // the next turn starts, well within the late-write window
        },
        (clock) => {
          clock.t += 1000; // r2's file has not changed for more than the settle time: still no end for r2
        },
        (clock) => {
          clock.t += 1000;
          notices.add(file, clock.t); // r2's own Stop hook
        },
        (clock) => {
          clock.t += HOOK_SETTLE_MS;
        },
      ],
    });
    expect(r.reported).toEqual(['r1', 'r2']);
    expect(r.passes.map((p) => p.runsReported)).toEqual([0, 0, 0, 1, 0, 0, 0, 1]);
  });

  it('keeps a settled notice while the pass that read by it is undone (telemetry lost), and reports the run again at the settle', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const notices = new EndNotices();
    const r = await watch(ws, {
      startAt: T0,
      notices,
      flushAnswers: [false, true],
      steps: [...hookedRun(file, notices), () => undefined],
    });
    expect(r.reported).toEqual(['r1', 'r1']);
    expect(r.passes.map((p) => p.runsReported)).toEqual([0, 0, 0, 1, 1]);
  });

  it('says nothing of a half-written last line while the file is being written, and reads it once complete', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const whole = line('r1', T0 + 2, true);
    const r = await watch(ws, {
      startAt: T0,
      steps: [
        (clock) => put(file, header('s1') + line('r1', T0 + 1) + whole.slice(0, 10), clock),
        (clock) => {
          clock.t += 1_000;
          add(file, whole.slice(10), clock);
        },
      ],
    });
    expect(r.problems).toEqual([]);
    expect(r.reported).toEqual(['r1']);
    expect(r.records[0]?.steps).toHaveLength(2);
  });

  it('neither repeats nor loses a run across a stop and a restart from the checkpoint', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const first = await watch(ws, {
      startAt: T0,
      steps: [(c) => put(file, header('s1') + line('r1', T0 + 1, true) + line('r2', T0 + 2), c)],
    });
    expect(first.reported).toEqual(['r1']);
    // While the watch is down, r2 ends and r3 starts and ends.
    add(file, line('r2', T0 + 3, true) + line('r3', T0 + 4, true), { t: T0 + 5 });
    const saved = await loadCheckpoint(ws.checkpoint);
    expect(saved.ok).toBe(true);
    const second = await watch(ws, {
      startAt: T0 + 10,
      checkpoint: saved.ok ? saved.checkpoint : undefined,
      steps: [],
    });
    expect(second.reported).toEqual(['r2', 'r3']);
    const third = await watch(ws, {
      startAt: T0 + 20,
      checkpoint: ((await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint }).checkpoint,
      steps: [],
    });
    expect(third.reported).toEqual([]);
  });

  it('reads again after a restart only the sessions whose files changed while it was down', async () => {
    const ws = workspace();
    const files = ['a', 'b', 'c'].map((name) => join(ws.dir, `${name}.jsonl`));
    const first = await watch(ws, {
      startAt: T0,
      steps: [(c) => files.forEach((file, i) => put(file, header(`s${i}`) + line(`r${i}`, T0 + 1, true), c))],
    });
    expect(first.reported.sort()).toEqual(['r0', 'r1', 'r2']);
    const saved = (await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint };
    expect(Object.keys(saved.checkpoint.read ?? {})).toHaveLength(3);
    // Nothing changed: the restart reads no session.
    const quiet = await watch(ws, { startAt: T0 + 10, checkpoint: saved.checkpoint, steps: [] });
    expect(quiet.passes[0]?.sessionsRead).toBe(0);
    // One file grew while the watch was down: only its session is read, and its new run reported.
    add(files[1] ?? '', line('r9', T0 + 20, true), { t: T0 + 20 });
    const grown = await watch(ws, {
      startAt: T0 + 30,
      checkpoint: ((await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint }).checkpoint,
      steps: [],
    });
    expect(grown.passes[0]?.sessionsRead).toBe(1);
    expect(grown.reported).toEqual(['r9']);
  });

  it('classifies again after a restart only the files that changed, and still reports each run once', async () => {
    const ws = workspace();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => join(ws.dir, `${name}.jsonl`));
    const notes = join(ws.dir, 'notes.jsonl');
    if (a === undefined || b === undefined || c === undefined || d === undefined) throw new Error('four files');
    const first = await watch(ws, {
      startAt: T0,
      steps: [
        (k) => {
          for (const [i, file] of [a, b, c].entries()) put(file, header(`s${i}`) + line(`r${i}`, T0 + 1, true), k);
          put(notes, '{"not":"a transcript"}\n', k);
        },
      ],
    });
    expect(first.reported.sort()).toEqual(['r0', 'r1', 'r2']);
    const saved = (await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint };
    expect(Object.keys(saved.checkpoint.files?.states ?? {}).sort()).toEqual([a, b, c, notes].sort());
    expect(saved.checkpoint.files?.states[notes]?.info).toBeNull();
    // While the watch is down: b grows, c is replaced by another session under its name, d appears.
    add(b, line('r3', T0 + 20, true), { t: T0 + 20 });
    const replacement = `${c}.new`;
    put(replacement, header('s9') + line('r9', T0 + 21, true), { t: T0 + 21 });
    renameSync(replacement, c);
    put(d, header('s4') + line('r4', T0 + 22, true), { t: T0 + 22 });
    classified.length = 0;
    const second = await watch(ws, { startAt: T0 + 30, checkpoint: saved.checkpoint, steps: [] });
    // a and notes are unchanged and b only grew: not classified; c (another inode) and d (new) are.
    expect(classified.sort()).toEqual([c, d].sort());
    expect(second.passes[0]?.sessionsRead).toBe(3);
    expect(second.reported.sort()).toEqual(['r3', 'r4', 'r9']);
    // A third start with nothing changed classifies nothing, reads nothing and reports nothing.
    classified.length = 0;
    const third = await watch(ws, {
      startAt: T0 + 40,
      checkpoint: ((await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint }).checkpoint,
      steps: [],
    });
    expect(classified).toEqual([]);
    expect(third.passes[0]).toMatchObject({ files: 4, sessionsRead: 0 });
    expect(third.reported).toEqual([]);
  });

  it('classifies every file again when the checkpoint has no file states, or those of another classifier', async () => {
    const ws = workspace();
    const files = ['a', 'b'].map((name) => join(ws.dir, `${name}.jsonl`));
    await watch(ws, {
      startAt: T0,
      steps: [(k) => files.forEach((file, i) => put(file, header(`s${i}`) + line(`r${i}`, T0 + 1, true), k))],
    });
    const saved = (await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint };
    const states = saved.checkpoint.files?.states ?? {};
    expect(Object.keys(states)).toHaveLength(2);
    const { files: _dropped, ...older } = saved.checkpoint;
    const other = { ...saved.checkpoint, files: { classifier: 'another build', states } };
    for (const checkpoint of [older, other]) {
      writeFileSync(ws.checkpoint, JSON.stringify(checkpoint));
      classified.length = 0;
      const r = await watch(ws, { startAt: T0 + 10, checkpoint, steps: [] });
      expect(classified.sort()).toEqual([...files].sort());
      expect(r.passes[0]).toMatchObject({ files: 2, sessionsRead: 0 });
      expect(r.reported).toEqual([]);
      // Nothing was read, yet the states it made are written for the next start.
      const after = (await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint };
      expect(after.checkpoint.files).toEqual(saved.checkpoint.files);
    }
  });

  it('reports the later part of a run closed at the idle bound when its file grows again, once, across a restart', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const TAKEN_UP = T0 + 61_000;
    const first = await watch(ws, {
      startAt: T0,
      steps: [
        (c) => put(file, header('s1') + line('r1', T0 + 1, false, 10), c),
        (c) => {
          c.t += 61_000; // quiet: r1 closes as the file says
        },
        (c) => add(file, line('r1', TAKEN_UP, false, 20), c), // the user comes back to the session
        (c) => {
          c.t += 61_000;
        },
      ],
    });
    expect(first.reported).toEqual(['r1', `r1@${new Date(T0 + 1).toISOString()}`]);
    expect(first.passes.map((p) => p.runsReported)).toEqual([0, 0, 1, 0, 1]);
    const [whole, later] = first.records;
    expect([whole?.usage.inputTokens, whole?.steps.length, whole?.output]).toEqual([
      10,
      1,
      [{ type: 'text', text: `at ${T0 + 1}` }],
    ]);
    expect([
      later?.continuesRunId,
      later?.usage.inputTokens,
      later?.steps.length,
      later?.startTime,
      later?.endTime,
    ]).toEqual(['r1', 20, 1, TAKEN_UP, TAKEN_UP]);
    expect([later?.output, later?.stopReason, later?.traceKey]).toEqual([
      [{ type: 'text', text: `at ${TAKEN_UP}` }],
      'unknown',
      'scripted:s1',
    ]);
    const saved = await loadCheckpoint(ws.checkpoint);
    expect(saved.ok && saved.checkpoint?.reported).toEqual({
      r1: { end: TAKEN_UP, output: digestOf(TAKEN_UP), emptyMessages: 0 },
    });

    // A restart reads the session again: nothing new.
    const second = await watch(ws, {
      startAt: T0 + 200_000,
      checkpoint: saved.ok ? saved.checkpoint : undefined,
      steps: [],
    });
    expect(second.reported).toEqual([]);
    // Taken up once more while the watch was down: the part after the last report, once.
    add(file, line('r1', T0 + 300_000, false, 30), { t: T0 + 300_000 });
    const third = await watch(ws, {
      startAt: T0 + 400_000,
      checkpoint: ((await loadCheckpoint(ws.checkpoint)) as { checkpoint: Checkpoint }).checkpoint,
      steps: [],
    });
    expect(third.reported).toEqual([`r1@${new Date(TAKEN_UP).toISOString()}`]);
    expect([third.records[0]?.usage.inputTokens, third.records[0]?.steps.length]).toEqual([30, 1]);
  });

  it('reads a version 1 checkpoint (end times only) and reports only what came after those ends', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    put(
      file,
      header('s1') + line('r1', T0 + 1, true, 10) + line('r2', T0 + 2, false, 10) + line('r2', T0 + 5, true, 7),
      { t: T0 + 5 },
    );
    writeFileSync(
      ws.checkpoint,
      JSON.stringify({ version: 1, dirs: [ws.dir], since: T0, reported: { r1: T0 + 1, r2: T0 + 2 } }),
    );
    const loaded = await loadCheckpoint(ws.checkpoint);
    expect(loaded.ok && loaded.checkpoint).toEqual({
      version: 2,
      dirs: [ws.dir],
      since: T0,
      reported: { r1: { end: T0 + 1 }, r2: { end: T0 + 2 } },
    });
    const r = await watch(ws, { startAt: T0 + 10, checkpoint: loaded.ok ? loaded.checkpoint : undefined, steps: [] });
    expect(r.reported).toEqual([`r2@${new Date(T0 + 2).toISOString()}`]);
    expect(r.records[0]?.usage.inputTokens).toBe(7);
    const saved = await loadCheckpoint(ws.checkpoint);
    expect(saved.ok && saved.checkpoint?.version).toBe(2);
  });

  it('skips the history on a first start unless asked for it', async () => {
    const ws = workspace();
    writeFileSync(join(ws.dir, 'old.jsonl'), header('s0') + line('old', T0 - 5_000, true));
    const without = await watch(ws, { startAt: T0, steps: [] });
    expect(without.reported).toEqual([]);
    rmSync(ws.checkpoint);
    const withHistory = await watch(ws, { startAt: T0, history: true, steps: [] });
    expect(withHistory.reported).toEqual(['old']);
  });

  it('survives a file truncated, replaced under its name and deleted, reporting what is new once', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const r = await watch(ws, {
      startAt: T0,
      steps: [
        (c) => put(file, header('s1') + line('r1', T0 + 1, true) + line('r2', T0 + 2, true), c),
        // Truncated: the agent rewrote the file shorter, with a new run.
        (c) => put(file, header('s1') + line('r3', T0 + 3, true), c),
        // Replaced: another file renamed over it (a new inode).
        (c) => {
          put(`${file}.new`, header('s1') + line('r3', T0 + 3, true) + line('r4', T0 + 4, true), c);
          renameSync(`${file}.new`, file);
        },
        () => rmSync(file),
        (c) => put(join(ws.dir, 'b.jsonl'), header('s2') + line('r5', T0 + 5, true), c),
      ],
    });
    expect(r.reported).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(r.problems).toEqual([]);
  });

  it('never writes into the watched directory', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    const before = header('s1') + line('r1', T0 + 1, true);
    await watch(ws, { startAt: T0, steps: [(c) => put(file, before, c)] });
    expect(readFileSync(file, 'utf8')).toBe(before);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(ws.dir)).toEqual(['a.jsonl']);
    expect(readdirSync(ws.state)).toEqual(['checkpoint.json']);
  });
});

describe('watch with the change feed', () => {
  it('lists nothing while nothing moves, and reports a run written later once its change is notified', async () => {
    const ws = workspace();
    const file = join(ws.dir, 'a.jsonl');
    writeFileSync(file, header('s1') + line('r1', T0 + 1));
    const changes = startChangeFeed([ws.dir]);
    const passes: WatchPass[] = [];
    const reported: string[] = [];
    const stop = new AbortController();
    let wroteAt: number | undefined;
    await watchTranscripts({
      dirs: [ws.dir],
      listener: { onRunStart: () => undefined, onRunEnd: (r) => reported.push(r.runId) },
      idleMs: 60_000,
      intervalMs: 5,
      checkpointPath: ws.checkpoint,
      history: true,
      flush: () => Promise.resolve(true),
      signal: stop.signal,
      // The clock stands still: the listing at least every 60 s never comes due; only notifications make a pass list.
      now: () => T0 + 10,
      formats: [scripted],
      changes,
      onPass: (pass) => {
        passes.push(pass);
        // Ten quiet passes, then the run's end is written; stop once it is reported (or after 24,000 passes: a bound for a lost notification, 2 min or more).
        if (pass.pass === 10) {
          appendFileSync(file, line('r1', T0 + 2, true));
          wroteAt = pass.pass;
        }
        if (reported.length > 0 || pass.pass >= 24_000) stop.abort();
      },
    });
    changes.close();
    expect(reported).toEqual(['r1']);
    expect(passes[0]?.listed).toBe(true);
    // Between the first listing and the write, the notifications of the first listing's own reads aside, nothing listed.
    expect(passes.slice(1, 10).filter((p) => p.listed).length).toBeLessThanOrEqual(1);
    expect(passes.slice(2, 10).every((p) => !p.listed && p.sessionsRead === 0)).toBe(true);
    // The write was noticed through a notification: some pass after it listed and read the session.
    const after = passes.slice(wroteAt ?? 0);
    expect(after.some((p) => p.listed && p.sessionsRead === 1)).toBe(true);
  });

  it('lists on every pass once notifications cannot be had', async () => {
    const ws = workspace();
    const loop = join(ws.dir, 'loop');
    symlinkSync(loop, loop);
    const changes = startChangeFeed([ws.dir]);
    const passes: WatchPass[] = [];
    const stop = new AbortController();
    await watchTranscripts({
      dirs: [ws.dir],
      listener: { onRunStart: () => undefined, onRunEnd: () => undefined },
      idleMs: 60_000,
      intervalMs: 1,
      checkpointPath: ws.checkpoint,
      history: false,
      flush: () => Promise.resolve(true),
      signal: stop.signal,
      now: () => T0,
      formats: [scripted],
      changes,
      onPass: (pass) => {
        passes.push(pass);
        // The loop is no folder the listing enters: make the feed meet it as one.
        if (pass.pass === 1) changes.follow([ws.dir, loop]);
        if (pass.pass >= 5) stop.abort();
      },
    });
    changes.close();
    expect(changes.watching).toBe(false);
    expect(passes.map((p) => p.listed)).toEqual([true, true, true, true, true]);
  });
});
