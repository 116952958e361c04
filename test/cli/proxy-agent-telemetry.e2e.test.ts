/**
 * What `proxy --agent-telemetry` changes for the agent, and what it does not
 * change without the flag: an agent that prints its environment and exits,
 * run directly and through the built CLI. Without the flag its bytes (and so
 * its environment) are identical to the direct run's; with it exactly the
 * documented variables differ (docs/AGENTS.md), pointing at a loopback
 * receiver that takes OTLP/HTTP JSON and refuses protobuf.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finished, runCli } from '../helpers/cli.js';

/** The "agent": its environment as one JSON line, keys sorted. */
const PRINT_ENV =
  "const e=process.env;process.stdout.write(JSON.stringify(Object.fromEntries(Object.keys(e).sort().map(k=>[k,e[k]])))+'\\n')";

/** An environment with the variables the flag replaces or removes already set by the user. */
const USER_ENV: NodeJS.ProcessEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector.example:4318/v1/traces',
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20secret',
  GEMINI_TELEMETRY_OUTFILE: '/tmp/gemini-telemetry.json',
  OTEL_TRACES_EXPORTER: 'none',
  OTEL_METRICS_EXPORTER: 'none',
  SOMETHING_ELSE: 'kept',
};

async function direct(): Promise<Buffer> {
  const child = spawn(process.execPath, ['-e', PRINT_ENV], {
    env: { ...process.env, ...USER_ENV },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  const done = await finished(child);
  expect(done.code).toBe(0);
  return done.stdout;
}

async function proxied(flags: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Buffer> {
  const out = mkdtempSync(join(tmpdir(), 'proxy-agent-telemetry-'));
  const done = await runCli(['proxy', ...flags, '--out', out, '--', process.execPath, '-e', PRINT_ENV], '', {
    ...USER_ENV,
    ...extraEnv,
  });
  expect(done.code, done.stderr.toString()).toBe(0);
  return done.stdout;
}

describe('proxy --agent-telemetry and the agent environment', () => {
  it('without the flag gives the agent exactly its environment: the bytes equal the direct run', async () => {
    const [a, b] = [await direct(), await proxied([])];
    expect(b.length).toBeGreaterThan(2);
    expect(b.equals(a)).toBe(true);
  });

  it('with the flag changes exactly the documented variables, pointing them at a loopback port', async () => {
    const base = JSON.parse((await direct()).toString()) as Record<string, string>;
    const env = JSON.parse(
      (await proxied(['--agent-telemetry'], { SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '0' })).toString(),
    ) as Record<string, string>;
    const origin = env.OTEL_EXPORTER_OTLP_ENDPOINT;
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
    const changed = Object.keys({ ...base, ...env })
      .filter((k) => k !== 'SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS' && base[k] !== env[k])
      .sort();
    expect(changed).toEqual(
      [
        'CLAUDE_CODE_ENABLE_TELEMETRY',
        'CLAUDE_CODE_ENHANCED_TELEMETRY_BETA',
        'GEMINI_TELEMETRY_ENABLED',
        'GEMINI_TELEMETRY_LOG_PROMPTS',
        'GEMINI_TELEMETRY_OTLP_ENDPOINT',
        'GEMINI_TELEMETRY_OTLP_PROTOCOL',
        'GEMINI_TELEMETRY_OUTFILE',
        'GEMINI_TELEMETRY_TARGET',
        'OTEL_BLRP_SCHEDULE_DELAY',
        'OTEL_BSP_SCHEDULE_DELAY',
        'OTEL_EXPORTER_OTLP_ENDPOINT',
        'OTEL_EXPORTER_OTLP_HEADERS',
        'OTEL_EXPORTER_OTLP_PROTOCOL',
        'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
        'OTEL_LOGS_EXPORTER',
        'OTEL_LOGS_EXPORT_INTERVAL',
        'OTEL_LOG_RAW_API_BODIES',
        'OTEL_LOG_TOOL_CONTENT',
        'OTEL_LOG_TOOL_DETAILS',
        'OTEL_LOG_USER_PROMPTS',
        'OTEL_METRICS_EXPORTER',
        'OTEL_METRIC_EXPORT_INTERVAL',
        'OTEL_TRACES_EXPORTER',
      ].sort(),
    );
    expect(env).toMatchObject({
      GEMINI_TELEMETRY_ENABLED: 'true',
      GEMINI_TELEMETRY_TARGET: 'local',
      GEMINI_TELEMETRY_OTLP_ENDPOINT: origin,
      GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http',
      GEMINI_TELEMETRY_LOG_PROMPTS: 'false',
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      OTEL_LOG_USER_PROMPTS: '0',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_EXPORTER: 'otlp',
      SOMETHING_ELSE: 'kept',
    });
    // The user's collector and its credentials are not the agent's destination any more: the
    // headers are the receiver's token only, and the per-signal overrides are removed, not emptied.
    expect(env.OTEL_EXPORTER_OTLP_HEADERS).toMatch(/^x-subagent-otel-token=[0-9a-f]{64}$/);
    expect('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' in env).toBe(false);
    expect('GEMINI_TELEMETRY_OUTFILE' in env).toBe(false);
  });

  it('refuses what another local process posts to the receiver: only the agent, with its token, is taken', async () => {
    // The "agent" posts one valid log export three times: without the token, with a wrong one, with its own.
    const agent = [
      'const e=process.env;const i=e.OTEL_EXPORTER_OTLP_HEADERS.indexOf("=");',
      'const k=e.OTEL_EXPORTER_OTLP_HEADERS.slice(0,i),v=e.OTEL_EXPORTER_OTLP_HEADERS.slice(i+1);',
      'const body=JSON.stringify({resourceLogs:[]});',
      'const post=(h)=>fetch(e.OTEL_EXPORTER_OTLP_ENDPOINT+"/v1/logs",{method:"POST",headers:{"content-type":"application/json",...h},body}).then(r=>r.status);',
      '(async()=>{const s=[await post({}),await post({[k]:"f".repeat(64)}),await post({[k]:v})];process.stdout.write(JSON.stringify(s)+"\\n")})();',
    ].join('');
    const out = mkdtempSync(join(tmpdir(), 'proxy-agent-telemetry-'));
    const log = join(out, 'proxy.log');
    const done = await runCli(['proxy', '--agent-telemetry', '--out', out, '--', process.execPath, '-e', agent], '', {
      SUBAGENT_OTEL_AGENT_TELEMETRY_WAIT_MS: '0',
      SUBAGENT_OTEL_LOG_FILE: log,
    });
    expect(done.code, done.stderr.toString()).toBe(0);
    expect(JSON.parse(done.stdout.toString())).toEqual([401, 401, 200]);
    const line = readFileSync(log, 'utf8')
      .split('\n')
      .find((l) => l.includes('agent telemetry: took'));
    expect(line, readFileSync(log, 'utf8')).toContain(
      'took 0 trace, 1 log and 0 metric request(s), refused 2 (2 without the token)',
    );
  });
});
