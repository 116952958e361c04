/**
 * The proxy gives the agent real pipes, and the agent does not outlive it:
 * a reader that stops makes the agent die of SIGPIPE exactly as without the
 * proxy (status 141 through a shell), the agent sees a FIFO on stdin and
 * stdout, and on Linux an agent whose proxy is killed with SIGKILL dies too.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { CLI } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'proxy-pipes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The state letter of a process from /proc (`R`, `S`, `Z`, ...), or `gone`. */
function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    // ENOENT: the process was reaped.
    return 'gone';
  }
}

/** Runs a shell pipeline and resolves with the exit statuses of its stages. */
function shell(script: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.once('close', () => resolve(Buffer.concat(out).toString()));
  });
}

describe('proxy stdio', () => {
  it('propagates a broken pipe as the bare command does (SIGPIPE, status 141)', async () => {
    const node = process.execPath;
    const out = join(dir, 'otel');
    const bare = await shell(`yes | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`);
    const proxied = await shell(
      `"${node}" "${CLI}" proxy --out "${out}" -- yes | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`,
    );
    expect(bare).toBe('141\n');
    expect(proxied).toBe('141\n');
  });

  it('gives the agent FIFOs on stdin and stdout', async () => {
    const probe =
      "const fs=require('fs');process.stdout.write(JSON.stringify([fs.fstatSync(0).isFIFO(),fs.fstatSync(1).isFIFO()])+'\\n')";
    const done = await runCli(['proxy', '--out', join(dir, 'otel2'), '--', process.execPath, '-e', probe]);
    expect(done.code).toBe(0);
    expect(done.stdout.toString()).toBe('[true,true]\n');
  });

  it('gives the client EOF when the agent closes its stdout, while the agent still runs', async () => {
    // The agent says goodbye, closes its stdout, and runs on until its stdin ends.
    const agent = "process.stdout.write('bye\\n',()=>{require('fs').closeSync(1);process.stdin.resume();})";
    const proxy = spawnCli(['proxy', '--out', join(dir, 'otel-eof'), '--', process.execPath, '-e', agent]);
    const out: Buffer[] = [];
    proxy.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const exited = new Promise<number | null>((resolve) => proxy.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => proxy.stdout.once('end', () => resolve()));
    expect(proxy.exitCode).toBeNull();
    expect(Buffer.concat(out).toString()).toBe('bye\n');
    proxy.stdin.end();
    expect(await exited).toBe(0);
  }, 30_000);

  it.runIf(process.platform === 'linux')(
    'takes the agent down when the proxy is killed with SIGKILL',
    async () => {
      // The agent opens a FIFO the test reads, prints its pid and waits forever: the test's read
      // end sees EOF exactly when the agent is gone (it is the only writer).
      const fifo = join(dir, 'alive');
      execFileSync('mkfifo', [fifo]);
      const agent = `require('fs').openSync(${JSON.stringify(fifo)},'w');process.stdout.write(process.pid+'\\n');setInterval(()=>{},1000)`;
      const alive = createReadStream(fifo);
      const gone = new Promise<void>((resolve) => {
        alive.on('data', () => undefined);
        alive.once('end', () => resolve());
      });
      const proxy = spawnCli(['proxy', '--out', join(dir, 'otel3'), '--', process.execPath, '-e', agent]);
      const agentPid = Number(await waitForLine(proxy, (line) => /^\d+$/.test(line)));
      expect(agentPid).toBeGreaterThan(0);
      proxy.kill('SIGKILL');
      await gone;
      // EOF on the FIFO means the agent's descriptor closed: it never closes it, so it is exiting. The kernel
      // closes files before the process turns zombie: yield to the event loop until /proc shows it gone or a zombie.
      let state = processState(agentPid);
      for (let turn = 0; turn < 1_000_000 && state !== 'gone' && state !== 'Z'; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        state = processState(agentPid);
      }
      expect(state).toMatch(/^(gone|Z)$/);
    },
    30_000,
  );
});
