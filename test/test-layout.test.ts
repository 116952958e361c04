/**
 * Every module of `src/` has a test at its path (issue 39): `src/a/b.ts` is
 * tested by `test/a/b.test.ts`, or by its `.e2e.test.ts`, `.prop.test.ts` or
 * `.browser.e2e.test.ts` variant, so the test of a module is found without
 * searching. The modules without one are {@link EXCEPTIONS}, each with its
 * reason; one covered elsewhere names the tests that cover it, and they must
 * exist. The test fails on a new module without a test, and on an exception
 * that no longer applies (the module got a test, or is gone: remove it then).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/paths.js';

const SRC = join(ROOT, 'src');

/** The suffixes a test at a module's path may have, after the module's path without `.ts`. */
const TEST_SUFFIXES = ['.test.ts', '.e2e.test.ts', '.prop.test.ts', '.browser.e2e.test.ts'] as const;

/** Why a module has no test at its path. */
type Exception =
  /** Declares types (and at most constants) only: nothing runs that a test could check. */
  | { readonly kind: 'types'; readonly reason: string }
  /** Re-exports other modules' names; the list of names is checked where named. */
  | { readonly kind: 're-export'; readonly reason: string; readonly coveredBy: readonly string[] }
  /** Its behaviour is checked through another module or process, by the tests named (paths from the root). */
  | { readonly kind: 'covered'; readonly reason: string; readonly coveredBy: readonly string[] };

const COMMAND_TABLE = ['test/cli/command-table.test.ts', 'test/cli/args.test.ts'];

/**
 * The modules (paths relative to `src/`) without a test at their path, each
 * with its reason. Add a test rather than an entry; an entry is for a
 * module whose behaviour only shows through others (a command's wiring, a
 * pipeline's assembly) or that has none (types).
 */
const EXCEPTIONS: Readonly<Record<string, Exception>> = {
  // Types only.
  'cli/command-spec.ts': { kind: 'types', reason: "the command table's entry types" },
  'observe/frame-observer.ts': { kind: 'types', reason: 'the interface trackers offer to frame carriers' },
  'observe/run-record.ts': { kind: 'types', reason: 'the RunRecord and listener types' },
  'telemetry/pipeline-context.ts': { kind: 'types', reason: 'what the pipeline builders are handed' },
  'view/api-types.ts': { kind: 'types', reason: "the view server's JSON types and the list of sort keys" },
  'transcripts/format.ts': {
    kind: 'types',
    reason: 'the TranscriptFormat interface every reader implements, and one timing constant',
  },
  'corpus/facts.ts': {
    kind: 'types',
    reason: "the corpus check's vocabulary; its two helpers (addTokens, isUnchecked) are one line each",
  },

  // Re-exports.
  'index.ts': { kind: 're-export', reason: 'the public API', coveredBy: ['test/api.test.ts', 'test/package.test.ts'] },
  'types.ts': { kind: 're-export', reason: 'the public types', coveredBy: ['test/api.test.ts'] },
  'replay/replay-worker.ts': {
    kind: 'covered',
    reason: "a worker thread's entry: runs session jobs the pool sends it",
    coveredBy: ['test/replay/transcript-pool.e2e.test.ts', 'test/cli/replay-jobs.e2e.test.ts'],
  },
  'replay/session-job.ts': {
    kind: 'covered',
    reason:
      "one session's reading in a worker, replayed to the main thread's listener; compared with one-thread reading",
    coveredBy: ['test/replay/transcript-pool.e2e.test.ts'],
  },
  'transcripts/transcript-jobs.ts': {
    kind: 'covered',
    reason: 'the part of transcript reading a worker needs (no price tables); same outcome with 1 and 2 threads',
    coveredBy: ['test/replay/transcript-pool.e2e.test.ts', 'test/cli/replay-jobs.e2e.test.ts'],
  },
  'transcripts/formats.ts': {
    kind: 're-export',
    reason: 'the list of transcript formats, in the order they classify a file',
    coveredBy: ['test/transcripts/transcripts.test.ts'],
  },

  // The command line's wiring: each *-command.ts is a command-table entry (options, help, parser, lazy load).
  'cli/bin.ts': {
    kind: 'covered',
    reason: "the package's bin: the Node version floor and the compile cache, before main loads",
    coveredBy: ['test/cli/node-floor.e2e.test.ts', 'test/cli/start-path.test.ts'],
  },
  'cli/main.ts': {
    kind: 'covered',
    reason: 'parses argv, runs the command and maps its outcome to an exit code; every test of the built CLI runs it',
    coveredBy: [...COMMAND_TABLE, 'test/cli/commands/check.e2e.test.ts'],
  },
  'cli/errors.ts': {
    kind: 'covered',
    reason: 'two error classes (a name, an exit code), thrown and mapped by the parsers tested there',
    coveredBy: [...COMMAND_TABLE, 'test/cli/options.test.ts'],
  },
  'cli/commands/check-command.ts': {
    kind: 'covered',
    reason: "check's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/cli/commands/check.e2e.test.ts'],
  },
  'cli/commands/demo-command.ts': {
    kind: 'covered',
    reason: "demo's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/cli/demo.e2e.test.ts'],
  },
  'cli/commands/hook-command.ts': {
    kind: 'covered',
    reason: "hook's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/hooks/setup-hooks.e2e.test.ts'],
  },
  'cli/commands/proxy-command.ts': {
    kind: 'covered',
    reason: "proxy's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/cli/proxy.e2e.test.ts'],
  },
  'cli/commands/replay-command.ts': {
    kind: 'covered',
    reason: "replay's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/cli/replay.e2e.test.ts'],
  },
  'cli/commands/setup-command.ts': {
    kind: 'covered',
    reason: "setup's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/hooks/setup-codex.e2e.test.ts'],
  },
  'cli/commands/view-command.ts': {
    kind: 'covered',
    reason: "view's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/cli/commands/view.e2e.test.ts'],
  },
  'cli/commands/watch-command.ts': {
    kind: 'covered',
    reason: "watch's command-table entry",
    coveredBy: [...COMMAND_TABLE, 'test/cli/watch.e2e.test.ts'],
  },
  'cli/commands/setup.ts': {
    kind: 'covered',
    reason: '`setup <agent>` and `--remove` as users run them; its parts are tested at hooks/setup-files',
    coveredBy: ['test/hooks/setup-codex.e2e.test.ts', 'test/hooks/setup-hooks.e2e.test.ts'],
  },
  'cli/commands/watch.ts': {
    kind: 'covered',
    reason:
      'the watch command around watch/watcher (tested at its path); end to end with a killed and restarted watcher',
    coveredBy: ['test/cli/watch.e2e.test.ts', 'test/transcripts/generated-watch.e2e.test.ts'],
  },
  'cli/commands/watch-daemon.ts': {
    kind: 'covered',
    reason: 'the watcher the hooks start: lock, socket and hand-over, end to end',
    coveredBy: ['test/hooks/setup-hooks.e2e.test.ts'],
  },

  // The corpus check: a command over real transcripts; its parts with logic of their own have tests at their paths.
  'corpus/main.ts': { kind: 'covered', reason: 'the command', coveredBy: ['test/corpus/corpus.e2e.test.ts'] },
  'corpus/check.ts': {
    kind: 'covered',
    reason: 'runs the built replay and reads back what it wrote',
    coveredBy: ['test/corpus/corpus.e2e.test.ts'],
  },
  'corpus/invariants.ts': {
    kind: 'covered',
    reason: 'the invariants, each shown to fail on a defective replay',
    coveredBy: ['test/corpus/corpus.e2e.test.ts', 'test/corpus/issue-36.e2e.test.ts'],
  },
  'corpus/codex.ts': {
    kind: 'covered',
    reason: "the check's own reading of Codex rollouts, over the stored ones",
    coveredBy: ['test/corpus/corpus.e2e.test.ts'],
  },
  'corpus/gemini-cli.ts': {
    kind: 'covered',
    reason: "the check's own reading of Gemini CLI recordings, over the stored ones",
    coveredBy: ['test/corpus/corpus.e2e.test.ts'],
  },
  'corpus/records.ts': {
    kind: 'covered',
    reason: "the check's minimal line reader, used on a real session there",
    coveredBy: ['test/corpus/corpus.test.ts', 'test/corpus/corpus.e2e.test.ts'],
  },

  // Parts shown through the module that assembles them.
  'backend/outcome.ts': {
    kind: 'covered',
    reason: "the backends' result shapes, built from the observed run",
    coveredBy: ['test/backend/sdk-backend.e2e.test.ts', 'test/backend/acp-backend.e2e.test.ts'],
  },
  'hooks/hook-sender.ts': {
    kind: 'covered',
    reason: "the hook's side of the socket, sent through against the real listener",
    coveredBy: ['test/hooks/hook-listener.test.ts'],
  },
  'observe/agent-telemetry-join.ts': {
    kind: 'covered',
    reason: "the join of the agent's own telemetry to runs, the engine of agent-turn-reports",
    coveredBy: ['test/observe/agent-turn-reports.test.ts'],
  },
  'proxy/agent-telemetry.ts': {
    kind: 'covered',
    reason: "the proxy's start of the agent-telemetry receiver and its waits",
    coveredBy: ['test/proxy/agent-telemetry-receiver.test.ts', 'test/cli/proxy-agent-telemetry.e2e.test.ts'],
  },
  'proxy/close-stdout.ts': {
    kind: 'covered',
    reason: "closes the proxy's own stdout (fd 1) when the agent's closes: only observable from outside the process",
    coveredBy: ['test/hardening/proxy-pipes.e2e.test.ts'],
  },
  'proxy/proxy-observation.ts': {
    kind: 'covered',
    reason: "the proxy's observation of a conversation: protocol, capture, telemetry",
    coveredBy: ['test/cli/proxy.e2e.test.ts', 'test/cli/proxy-acp.e2e.test.ts'],
  },
  'telemetry/counting-exporters.ts': {
    kind: 'covered',
    reason: "the exporters' books, read through the shutdown report of a real pipeline",
    coveredBy: ['test/telemetry/setup.test.ts', 'test/telemetry/otlp-protocols-isolation.test.ts'],
  },
  'telemetry/metric-pipelines.ts': {
    kind: 'covered',
    reason: 'assembles the metric readers and exporters createTelemetry starts',
    coveredBy: ['test/telemetry/setup.test.ts', 'test/telemetry/prometheus-endpoint.test.ts'],
  },
  'telemetry/trace-pipelines.ts': {
    kind: 'covered',
    reason: 'assembles the span processors and exporters createTelemetry starts',
    coveredBy: ['test/telemetry/setup.test.ts', 'test/telemetry/otlp-pipeline.test.ts'],
  },
  'telemetry/pipeline-control.ts': {
    kind: 'covered',
    reason: 'the flush and bounded shutdown of the pipelines createTelemetry returns',
    coveredBy: ['test/telemetry/setup.test.ts'],
  },
  'telemetry/outbox/exporter.ts': {
    kind: 'covered',
    reason: 'the exporters that spill to the outbox, against a real collector that goes away and comes back',
    coveredBy: ['test/stack/outbox.e2e.test.ts', 'test/telemetry/setup.test.ts'],
  },
  'telemetry/outbox/outboxes.ts': {
    kind: 'covered',
    reason: 'the outbox folders of a state directory, as check --deliver and the pipelines open them',
    coveredBy: ['test/stack/outbox.e2e.test.ts'],
  },
  'telemetry/semconv.ts': {
    kind: 'covered',
    reason: 'attribute and metric names only; the names emitted are spelled out by hand there',
    coveredBy: ['test/telemetry/semconv-stability.test.ts', 'test/collector-config/metric-names.test.ts'],
  },
  'view/server.ts': {
    kind: 'covered',
    reason: "view's HTTP server: read-only, same-host, locked-down answers over a real socket",
    coveredBy: ['test/cli/commands/view.e2e.test.ts', 'test/view/view-page.browser.e2e.test.ts'],
  },
  'view/sources.ts': {
    kind: 'covered',
    reason: "view's paths told apart and transcript folders replayed in process",
    coveredBy: ['test/cli/commands/view.e2e.test.ts'],
  },
  'view/page/main.ts': {
    kind: 'covered',
    reason: 'browser code, built apart; run in a real browser',
    coveredBy: ['test/view/view-page.browser.e2e.test.ts'],
  },
  'view/page/charts.ts': {
    kind: 'covered',
    reason: 'browser code, built apart; run in a real browser',
    coveredBy: ['test/view/view-page.browser.e2e.test.ts'],
  },
  'view/page/dom.ts': {
    kind: 'covered',
    reason: 'browser code, built apart; run in a real browser',
    coveredBy: ['test/view/view-page.browser.e2e.test.ts'],
  },
  'view/page/waterfall.ts': {
    kind: 'covered',
    reason: 'browser code, built apart; run in a real browser',
    coveredBy: ['test/view/view-page.browser.e2e.test.ts'],
  },
  // Modules other work is changing now (issue 39 left them for after): tested through their callers meanwhile.
  'transcripts/claude-code/files.ts': {
    kind: 'covered',
    reason: "Claude Code's file classification and grouping, over the stored sessions",
    coveredBy: ['test/transcripts/claude-code/replay.e2e.test.ts'],
  },
  'transcripts/codex/files.ts': {
    kind: 'covered',
    reason: "Codex's file classification and grouping, over the stored rollouts",
    coveredBy: ['test/transcripts/codex/replay.e2e.test.ts'],
  },

  // Fixtures: scripted peers the tests spawn (src/fixtures/README.md).
  'fixtures/acp-agent.ts': {
    kind: 'covered',
    reason: 'the scripted ACP agent, the peer of every ACP test',
    coveredBy: ['test/cli/proxy-acp.e2e.test.ts', 'test/backend/acp-backend.e2e.test.ts'],
  },
  ...Object.fromEntries(
    ['channel', 'config', 'runtime', 'scenarios', 'turn', 'types'].map((part) => [
      `fixtures/sdk-runtime/${part}.ts`,
      {
        kind: 'covered',
        reason: 'a part of the scripted SDK runtime, tested as the one executable it builds',
        coveredBy: ['test/fixtures/sdk-runtime.e2e.test.ts'],
      } satisfies Exception,
    ]),
  ),
};

/** Every TypeScript module under `src/`, relative to it. */
function modules(dir = SRC): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modules(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [relative(SRC, path)] : [];
  });
}

/** The tests at `module`'s path that exist, relative to the root. */
function testsAt(module: string): string[] {
  const base = join('test', module.replace(/\.ts$/, ''));
  return TEST_SUFFIXES.map((suffix) => `${base}${suffix}`).filter((path) => existsSync(join(ROOT, path)));
}

describe('the test layout', () => {
  const all = modules();

  it('finds the modules (a guard against a walk that finds nothing)', () => {
    expect(all).toContain('observe/run-builder.ts');
    expect(all.length).toBeGreaterThan(100);
  });

  it('has a test at the path of every module but the exceptions', () => {
    const untested = all.filter((module) => testsAt(module).length === 0 && EXCEPTIONS[module] === undefined);
    expect(untested, 'add a test at test/<module path>.test.ts').toEqual([]);
  });

  it('lists no exception that no longer applies', () => {
    const stale = Object.keys(EXCEPTIONS).filter((module) => !all.includes(module) || testsAt(module).length > 0);
    expect(stale, 'remove these from EXCEPTIONS').toEqual([]);
  });

  it('names only tests that exist for the exceptions covered elsewhere', () => {
    const named = Object.values(EXCEPTIONS).flatMap((exception) =>
      exception.kind === 'types' ? [] : exception.coveredBy,
    );
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});
