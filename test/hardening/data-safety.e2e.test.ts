/**
 * Data safety of everything the observer writes:
 *
 * - with content capture off, capped or redacted, the raw output text never
 *   reaches an exported byte (OTLP request bodies, `traces.jsonl`,
 *   `metrics.jsonl`); the hash and length of the full output still do;
 * - secrets in the environment, in the agent's command-line arguments and in
 *   `OTEL_EXPORTER_OTLP_HEADERS` never appear in telemetry, the capture file
 *   (which holds the protocol lines only) or the proxy's diagnostics log;
 *   the header secret is used only as an HTTP header;
 * - file exports are written a line per write: lines of concurrent writers
 *   never interleave, and a proxy killed mid-export leaves complete lines only.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { runSdkSubagent } from '../../src/backend/sdk-backend.js';
import { createTraceFileExporter } from '../../src/telemetry/otlp-json-file-exporter.js';
import {
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_SUBAGENT_OUTPUT,
  ATTR_SUBAGENT_OUTPUT_LENGTH,
  ATTR_SUBAGENT_OUTPUT_SHA256,
  ATTR_SUBAGENT_OUTPUT_TRUNCATED,
} from '../../src/telemetry/semconv.js';
import { createTelemetry } from '../../src/telemetry/setup.js';
import { attributes, finished, isIdleLine, rpc, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { FIXTURE_SDK_RUNTIME } from '../helpers/paths.js';
import { ECHO, allBytesUnder, fileSpans, logLines, scriptedRun } from './workload.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'data-safety-'));
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});
async function healthyReceiver(): Promise<OtlpReceiver> {
  const receiver = await startOtlpReceiver({ kind: 'healthy' });
  receivers.push(receiver);
  return receiver;
}

/** Every byte the receiver was sent, bodies only. */
const bodies = (receiver: OtlpReceiver): Buffer => Buffer.concat(receiver.requests.map((r) => r.body));

const CONFIDENTIAL = `CONFIDENTIAL-${'abcdefghij'.repeat(30)}`;
const CONFIDENTIAL_JSON = `[{"type":"text","text":"${CONFIDENTIAL}"}]`;

/** Runs one scripted run answering CONFIDENTIAL through the proxy, exporting to `receiver` and to `--out`. */
async function confidentialRun(receiver: OtlpReceiver, flags: string[], env: NodeJS.ProcessEnv = {}) {
  const dir = tmp();
  const out = join(dir, 'otel');
  const r = await runCli(
    ['proxy', ...flags, '--out', out, '--', process.execPath, ECHO, join(dir, 'rec')],
    scriptedRun(1, CONFIDENTIAL),
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '10',
      ...env,
    },
  );
  expect(r.code).toBe(0);
  const run = fileSpans(out).find((s) => s.name.startsWith('invoke_agent'));
  expect(run).toBeDefined();
  return { out, run: attributes(run!), exported: Buffer.concat([bodies(receiver), allBytesUnder(out)]) };
}

describe('content policy: the raw output never leaves when capture is off, capped or redacted', () => {
  it.each([
    ['the --no-content flag', ['--no-content'], {}],
    [
      'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=NO_CONTENT',
      [],
      { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'NO_CONTENT' },
    ],
  ])('with %s, exports hash and length of the output but none of its text', async (_name, flags, env) => {
    const receiver = await healthyReceiver();
    const { run, exported } = await confidentialRun(receiver, flags, env);

    expect(exported.includes('CONFIDENTIAL')).toBe(false);
    expect(run[ATTR_SUBAGENT_OUTPUT]).toBeUndefined();
    expect(run[ATTR_GEN_AI_OUTPUT_MESSAGES]).toBeUndefined();
    expect(run[ATTR_SUBAGENT_OUTPUT_SHA256]).toBe(sha256(CONFIDENTIAL_JSON));
    expect(run[ATTR_SUBAGENT_OUTPUT_LENGTH]).toBe(340);
    expect(receiver.acceptedSpans().length).toBeGreaterThan(0);
  });

  it('with --max-content-length, keeps every content attribute within the cap and never exports the full text', async () => {
    const receiver = await healthyReceiver();
    const { run, exported } = await confidentialRun(receiver, ['--max-content-length', '100']);

    expect(exported.includes(CONFIDENTIAL)).toBe(false);
    expect(run[ATTR_SUBAGENT_OUTPUT]).toBe(
      '[{"type":"text","text":"CONFIDENTIAL-abcdefghijabcdefghijabcdefghijabcdefghijabcdef...[truncated]"}]',
    );
    expect(String(run[ATTR_SUBAGENT_OUTPUT]).length).toBeLessThanOrEqual(100);
    expect(String(run[ATTR_GEN_AI_OUTPUT_MESSAGES]).length).toBeLessThanOrEqual(100);
    expect(run[ATTR_SUBAGENT_OUTPUT_TRUNCATED]).toBe(true);
    expect(run[ATTR_SUBAGENT_OUTPUT_SHA256]).toBe(sha256(CONFIDENTIAL_JSON));
  });

  it('with a redaction hook, exports only the redacted text, and nothing at all when the hook throws', async () => {
    const spansFor = async (redact: (json: string) => string) => {
      const out = join(tmp(), 'otel');
      const telemetry = createTelemetry({ env: {}, out, content: { redact } });
      const outcome = await runSdkSubagent({
        command: process.execPath,
        args: [FIXTURE_SDK_RUNTIME],
        provider: 'deepseek',
        model: 'deepseek-chat',
        prompt: 'go',
        listener: telemetry.runs,
      });
      await telemetry.shutdown(5000);
      expect(outcome.result.output).toEqual([{ type: 'text', text: 'The answer is 42.' }]);
      return {
        run: attributes(fileSpans(out).find((s) => s.name.startsWith('invoke_agent'))!),
        exported: allBytesUnder(out),
      };
    };

    const redacted = await spansFor((json) => json.replace(/\d+/g, '#'));
    expect(redacted.run[ATTR_SUBAGENT_OUTPUT]).toBe('[{"type":"text","text":"The answer is #."}]');
    expect(redacted.exported.includes('The answer is 42')).toBe(false);
    expect(redacted.run[ATTR_SUBAGENT_OUTPUT_SHA256]).toBe(sha256('[{"type":"text","text":"The answer is 42."}]'));

    const failed = await spansFor(() => {
      throw new Error('redactor unavailable');
    });
    expect(failed.exported.includes('The answer is')).toBe(false);
    expect(failed.run[ATTR_SUBAGENT_OUTPUT]).toBeUndefined();
    expect(failed.run[ATTR_SUBAGENT_OUTPUT_SHA256]).toBe(sha256('[{"type":"text","text":"The answer is 42."}]'));
  });
});

describe('secrets never reach telemetry, the capture or the diagnostics log', () => {
  it('keeps environment, argument and header secrets out of every exported byte', async () => {
    const receiver = await healthyReceiver();
    const dir = tmp();
    const out = join(dir, 'otel');
    const capture = join(dir, 'capture.ndjson');
    const log = join(dir, 'proxy.log');
    const child = spawnCli(
      [
        'proxy',
        '--out',
        out,
        '--capture',
        capture,
        '--',
        process.execPath,
        FIXTURE_SDK_RUNTIME,
        '--api-key=sk-test-SECRET456',
      ],
      {
        OPENAI_API_KEY: 'sk-test-SECRET123',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer sk-test-SECRET789',
        OTEL_BSP_SCHEDULE_DELAY: '10',
        SUBAGENT_OTEL_LOG_FILE: log,
        FAKE_STDERR_NOISE: '1',
      },
    );
    const done = finished(child);
    const input = [
      rpc(1, 'initialize', { cwd: '/', provider: 'deepseek', model: 'deepseek-chat' }),
      rpc(2, 'session/prompt', { sessionId: 's1', contentBlocks: [{ type: 'text', text: 'go' }] }),
    ];
    const idle = waitForLine(child, isIdleLine('s1'));
    child.stdin.write(input.join(''));
    await idle;
    input.push(rpc(3, 'shutdown'));
    child.stdin.end(input[2]);
    const r = await done;
    expect(r.code).toBe(0);

    // The header secret was used as the HTTP header it was configured as ...
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((q) => q.headers['authorization'] === 'Bearer sk-test-SECRET789')).toBe(true);
    // ... and no secret is in any body, file, capture line or diagnostic.
    const everything = Buffer.concat([
      bodies(receiver),
      allBytesUnder(out),
      readFileSync(capture),
      Buffer.from(logLines(log).join('\n')),
    ]);
    for (const secret of ['SECRET123', 'SECRET456', 'SECRET789', 'sk-test'])
      expect(everything.includes(secret)).toBe(false);
    expect(receiver.acceptedSpans().filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(1);

    // The capture holds its header and the protocol lines exchanged, nothing else.
    const [header, ...records] = readFileSync(capture, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(header ?? {}).sort()).toEqual(['id', 'protocol', 'startedAt', 'type', 'version']);
    const wire = new Set([...input.map((l) => l.trimEnd()), ...r.stdout.toString().trimEnd().split('\n')]);
    expect(records.length).toBe(wire.size);
    expect(records.every((rec) => typeof rec['l'] === 'string' && wire.has(rec['l']))).toBe(true);
  });
});

describe('file exports are complete lines', () => {
  it('never interleaves the lines of two writers appending large spans to the same file at once', async () => {
    const dir = tmp();
    const providers = [0, 1].map(
      () =>
        new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: createTraceFileExporter(dir) })] }),
    );
    const big = (writer: number, n: number): string => `${writer}:${n}:`.padEnd(700 * 1024, writer === 0 ? 'a' : 'b');
    for (let n = 0; n < 4; n += 1) {
      providers.forEach((provider, writer) =>
        provider
          .getTracer('t')
          .startSpan(`span ${writer}-${n}`, { attributes: { payload: big(writer, n) } })
          .end(),
      );
    }
    await Promise.all(providers.map((p) => p.shutdown()));

    const spans = fileSpans(dir);
    expect(spans.map((s) => s.name).sort()).toEqual([
      'span 0-0',
      'span 0-1',
      'span 0-2',
      'span 0-3',
      'span 1-0',
      'span 1-1',
      'span 1-2',
      'span 1-3',
    ]);
    for (const span of spans) {
      const [writer, n] = span.name.slice(5).split('-').map(Number);
      expect(attributes(span)['payload']).toBe(big(writer!, n!));
    }
  });

  it('loses at most the line being written when the proxy is killed while exporting, and the next writer starts a new line', async () => {
    const dir = tmp();
    const out = join(dir, 'otel');
    const child = spawnCli(['proxy', '--out', out, '--', process.execPath, ECHO, join(dir, 'rec')]);
    const done = finished(child);
    const runs = Array.from({ length: 40 }, (_, i) => scriptedRun(i + 1, `${i + 1}:`.padEnd(300 * 1024, 'z')));
    child.stdin.on('error', () => undefined); // EPIPE after the kill: expected, the test is about the files
    child.stdin.write(runs.join(''));
    await waitForLine(child, (l) => l.includes('"id":20,"result"'));
    child.kill('SIGKILL');
    await done;

    const parses = (l: string): boolean => {
      try {
        JSON.parse(l);
        return true;
      } catch {
        // SyntaxError: a torn line.
        return false;
      }
    };
    // The kernel ends a write at SIGKILL, so the line being written can be cut short; every line before it is whole.
    const killed = readFileSync(join(out, 'traces.jsonl'), 'utf8').split('\n');
    const tail = killed.pop() ?? '';
    expect(killed.length).toBeGreaterThan(0);
    expect(killed.every(parses)).toBe(true);
    expect(tail === '' || !parses(tail)).toBe(true);

    // The next proxy writing to the same file starts on a line of its own: its lines stay whole, and only the cut one (if any) is lost.
    const next = await runCli(
      ['proxy', '--out', out, '--', process.execPath, ECHO, join(dir, 'rec2')],
      scriptedRun(41, 'after the kill'),
    );
    expect(next.code).toBe(0);
    const after = readFileSync(join(out, 'traces.jsonl'), 'utf8');
    expect(after.endsWith('\n')).toBe(true);
    const lines = after.slice(0, -1).split('\n');
    expect(lines.filter((l) => !parses(l))).toEqual(tail === '' ? [] : [tail]);
    const added = lines.slice(killed.length + (tail === '' ? 0 : 1));
    expect(added.length).toBeGreaterThan(0);
    expect(added.every(parses)).toBe(true);
    expect(added.some((l) => l.includes('"run-41"'))).toBe(true);
  });
});
