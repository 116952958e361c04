#!/usr/bin/env node
/**
 * CI gate (#31): the packed command's exports arrive. Packs the repository
 * (`dist/` must be built: `npm run build`), installs the tarball into a
 * temporary prefix (`scripts/packed-install.mjs`), starts the single-tier
 * stack on free loopback ports (the project's collector distribution,
 * Jaeger, Prometheus 3, Alertmanager; engines from `npm run stack -- build`),
 * and runs the installed `subagent-otel check` and `subagent-otel proxy` (in
 * front of the scripted SDK runtime it ships, two prompts) over
 * `OTEL_EXPORTER_OTLP_PROTOCOL` `grpc`, `http/protobuf` and `http/json`.
 *
 * A case passes when the command exited 0 and, within 300 s, the collector
 * counted every span it sent as accepted on the protocol's transport
 * (`otelcol_receiver_accepted_spans{receiver="otlp",transport=...}`: decoded,
 * taken) and its Prometheus exporter shows the command's counter for the
 * case's service (`subagent_checks_total` 1, `subagent_runs_total` 2).
 * test/stack/packed-command.e2e.test.ts checks more (every command, TLS,
 * Jaeger); this is the short gate `.ci/run` runs before the test command.
 *
 *   node scripts/packed-export-check.mjs
 *
 * Prints one line per case with what arrived; exits 1 when anything did not
 * arrive, with the command's output. Stops what it started and removes its
 * directory.
 *
 * @module subagent-otel/scripts/packed-export-check
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT, exportingEnvironment, installPackedCommand, packPackage } from './packed-install.mjs';
import { scrapeSum, waitFor } from './stack/probes.mjs';
import { startStack } from './stack/stack.mjs';

const PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'];

/** One prompt line of the SDK runtime protocol. */
const prompt = (id, scenario) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId: `ci-${id}`, contentBlocks: [{ type: 'text', text: `scenario:${scenario}` }] } })}\n`;

/** The commands, what they send, and the counter that must show it. */
const COMMANDS = [
  { name: 'check', args: () => ['check'], input: '', spans: 1, counter: 'subagent_checks_total', count: 1 },
  {
    name: 'proxy',
    args: (packageDir) => [
      'proxy',
      '--agent-name',
      'ci-packed',
      '--',
      process.execPath,
      join(packageDir, 'dist', 'fixtures', 'sdk-runtime.js'),
    ],
    input: prompt(1, 'completed') + prompt(2, 'empty-message'),
    // Two runs: each its invoke_agent span and one chat span.
    spans: 4,
    counter: 'subagent_runs_total',
    count: 2,
  },
];

/** Runs the installed bin by its own `#!` line, this Node first on PATH; resolves with its exit code and output. */
function run(bin, args, input, env) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      env: { ...process.env, ...env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => resolve({ code: -1, output: `${output}${error.message}\n` }));
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.on('error', () => undefined); // EPIPE when the command exits before reading all; its exit code says why
    child.stdin.end(input);
  });
}

if (!existsSync(join(PACKAGE_ROOT, 'dist', 'cli', 'subagent-otel.js'))) {
  process.stderr.write('packed-export-check: dist/ is not built; run `npm run build` first\n');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-packed-check-'));
let stack;
const failures = [];
try {
  const { bin, packageDir } = installPackedCommand(packPackage(work), mkdtempSync(join(work, 'prefix-')));
  process.stdout.write(`packed-export-check: installed ${bin}\n`);
  stack = await startStack({ dir: join(work, 'stack'), tiers: 1, ports: 'free' });
  const telemetry = stack.urls.collectors.collector.telemetry;
  const exporter = stack.urls.collectors.collector.metrics;
  for (const protocol of PROTOCOLS) {
    for (const command of COMMANDS) {
      const service = `ci-packed-${command.name}-${protocol.replace('/', '-')}`;
      const receiver = { receiver: 'otlp', transport: protocol === 'grpc' ? 'grpc' : 'http' };
      const endpoint = protocol === 'grpc' ? stack.urls.otlpGrpc : stack.urls.otlpHttp;
      const before = await scrapeSum(telemetry, 'otelcol_receiver_accepted_spans', receiver);
      const args = command.args(packageDir);
      const r = await run(bin, args, command.input, exportingEnvironment({ endpoint, protocol, service }));
      const label = `${protocol.padEnd(13)} subagent-otel ${args.slice(0, 1).join(' ')}`;
      const arrival = { spans: 0, counter: 0 };
      const complete = async () => {
        arrival.spans = (await scrapeSum(telemetry, 'otelcol_receiver_accepted_spans', receiver)) - before;
        arrival.counter = await scrapeSum(exporter, command.counter, { job: service });
        return arrival.spans >= command.spans && arrival.counter >= command.count ? true : undefined;
      };
      // A command that failed, or reported dropped data itself, has sent all it will: look once, do not wait.
      const gaveUp = r.code !== 0 || /dropped/.test(r.output);
      const arrived = gaveUp
        ? (await complete()) === true
        : await waitFor(`${label}: ${command.spans} span(s) and ${command.counter} ${command.count}`, complete).catch(
            () => false,
          );
      const exact = arrived && arrival.spans === command.spans && arrival.counter === command.count;
      const line = `${label}: exit ${r.code}; the collector accepted ${arrival.spans} span(s) over ${receiver.transport} (${command.spans} sent); ${command.counter}{job="${service}"} = ${arrival.counter}`;
      process.stdout.write(`${r.code === 0 && exact ? 'ok     ' : 'FAILED '} ${line}\n`);
      if (r.code !== 0 || !exact) failures.push(`${line}\n${r.output}`);
    }
  }
} catch (error) {
  failures.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
} finally {
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
}

if (failures.length > 0) {
  process.stderr.write(
    `packed-export-check: the packed command's exports did not all arrive:\n${failures.join('\n')}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `packed-export-check: every export of the packed command arrived (${PROTOCOLS.length * COMMANDS.length} cases)\n`,
);
