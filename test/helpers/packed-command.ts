/**
 * The commands that export, as the end-to-end tests of the shipped command
 * run them (#31): `check`, `demo`, `proxy` in front of the scripted SDK
 * runtime the package ships, and `replay` of a capture of the real runtime,
 * each with what must arrive at the receiver (span names with counts, and
 * the metric the command counts, by stop reason): literals from the
 * scenarios, never computed by the code under test. Also the two ways the
 * command is run: installed from the packed tarball, and the clone's
 * `dist/`, and the environment a case runs with. Owns no assertion and
 * starts nothing but the command.
 *
 * @module subagent-otel/test/helpers/packed-command
 */
import { dirname, join } from 'node:path';
import { exportingEnvironment, type ExportDestination, type InstalledCommand } from '../../scripts/packed-install.mjs';
import { METRIC_SUBAGENT_CHECKS, METRIC_SUBAGENT_RUNS, SPAN_NAME_CHECK } from '../../src/telemetry/semconv.js';
import { rpc, runCommand, type Finished } from './cli.js';
import { CLI, FIXTURE_SDK_RUNTIME, ROOT } from './paths.js';

/** The OTLP protocols of the specification, as `OTEL_EXPORTER_OTLP_PROTOCOL` spells them. */
export const PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** One way to start the command. */
export interface CommandInstall {
  /** For test names: `installed tarball` or `clone dist`. */
  readonly label: string;
  /** The executable and the arguments before the command's own. */
  readonly file: string;
  readonly leadingArgs: readonly string[];
  /** The scripted SDK runtime of the same install (what `proxy --` starts). */
  readonly fixtureRuntime: string;
  /** Environment the install needs: the installed bin is `#!/usr/bin/env node`, so the test's Node goes first on PATH. */
  readonly env: NodeJS.ProcessEnv;
}

/** The `subagent-otel` bin npm installed from the tarball, run as a user runs it (by its own `#!` line). */
export function installedCommand(installed: InstalledCommand): CommandInstall {
  return {
    label: 'installed tarball',
    file: installed.bin,
    leadingArgs: [],
    fixtureRuntime: join(installed.packageDir, 'dist', 'fixtures', 'sdk-runtime.js'),
    env: { PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` },
  };
}

/** `node dist/cli/subagent-otel.js` of this clone. */
export function cloneCommand(): CommandInstall {
  return {
    label: 'clone dist',
    file: process.execPath,
    leadingArgs: [CLI],
    fixtureRuntime: FIXTURE_SDK_RUNTIME,
    env: {},
  };
}

/** A command that exports, and what it must deliver. */
export interface ExportingCommand {
  readonly name: 'check' | 'demo' | 'proxy' | 'replay';
  /** The command's arguments for `install`. */
  args(install: CommandInstall): string[];
  /** Bytes on stdin (then EOF). */
  readonly input: string;
  /** Spans by name that must arrive, exactly (the runs' `invoke_agent` spans, or check's test span). */
  readonly spans: Readonly<Record<string, number>>;
  /** Every span the command sends. */
  readonly spanCount: number;
  /** The counter the command adds to, and its sum by `subagent.stop_reason` (`all` when it has none). */
  readonly metric: { readonly name: string; readonly byStopReason: Readonly<Record<string, number>> };
}

/** The agent name the proxy's runs carry. */
const PROXY_AGENT = 'packed-e2e';

/** A capture of the real SDK runtime: one run stopped at max-tokens behind an empty message (test/captures/README.md). */
export const CAPTURE = join(ROOT, 'test', 'captures', 'dsh-runtime-max-tokens-empty-message.ndjson');

export const EXPORTING_COMMANDS: readonly ExportingCommand[] = [
  {
    name: 'check',
    args: () => ['check'],
    input: '',
    spans: { [SPAN_NAME_CHECK]: 1 },
    spanCount: 1,
    metric: { name: METRIC_SUBAGENT_CHECKS, byStopReason: { all: 1 } },
  },
  {
    name: 'proxy',
    args: (install) => ['proxy', '--agent-name', PROXY_AGENT, '--', process.execPath, install.fixtureRuntime],
    input:
      rpc(1, 'session/prompt', {
        sessionId: 'packed-1',
        contentBlocks: [{ type: 'text', text: 'scenario:completed' }],
      }) +
      rpc(2, 'session/prompt', {
        sessionId: 'packed-2',
        contentBlocks: [{ type: 'text', text: 'scenario:empty-message' }],
      }),
    // Each run: its invoke_agent span and one chat span per model call (the fixture's scenarios make one each).
    spans: { [`invoke_agent ${PROXY_AGENT}`]: 2 },
    spanCount: 4,
    metric: { name: METRIC_SUBAGENT_RUNS, byStopReason: { completed: 1, 'max-tokens': 1 } },
  },
  {
    name: 'replay',
    args: () => ['replay', CAPTURE],
    input: '',
    // The run, its two model calls and the bash tool call of the first.
    spans: { 'invoke_agent dsh': 1, 'chat deepseek-v4-flash': 2, 'execute_tool bash': 1 },
    spanCount: 4,
    metric: { name: METRIC_SUBAGENT_RUNS, byStopReason: { 'max-tokens': 1 } },
  },
  {
    name: 'demo',
    args: () => ['demo'],
    input: '',
    // 35 runs, 11 at max-tokens (README): 23 of the SDK runtime (provider deepseek), 12 of the ACP agent; 82 spans.
    spans: { 'invoke_agent deepseek': 23, 'invoke_agent fake-acp-agent': 12 },
    spanCount: 82,
    metric: {
      name: METRIC_SUBAGENT_RUNS,
      byStopReason: { completed: 17, 'max-tokens': 11, aborted: 3, error: 3, refusal: 1 },
    },
  },
];

/** Where a case sends. */
export interface Destination extends ExportDestination {
  readonly protocol: Protocol;
}

/** Runs `command` from `install` sending to `destination` only; resolves when it exited and its streams closed. */
export function runExporting(
  install: CommandInstall,
  command: ExportingCommand,
  destination: Destination,
): Promise<Finished> {
  return runCommand(install.file, [...install.leadingArgs, ...command.args(install)], command.input, {
    ...exportingEnvironment(destination),
    ...install.env,
  });
}
