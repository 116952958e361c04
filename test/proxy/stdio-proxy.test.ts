/**
 * The bridge's forwarding of the child's stdout (`runStdioProxy`), in
 * process, between real processes and real pipes: a child (`cat` of a file
 * of random bytes) writes through the bridge into another child that reads
 * its stdin fast or slowly (hashing every chunk many times, so the pipe
 * fills and the bridge's writes queue). The bridge reads into memory it
 * reuses only when a write left nothing queued and the observer keeps
 * nothing (decision 0042); whatever it does, the reader gets exactly the
 * file's bytes, the observer sees exactly them in order, and chunks an
 * observer keeps stay intact when it did not promise to keep none.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runStdioProxy } from '../../src/proxy/stdio-proxy.js';

const work = mkdtempSync(join(tmpdir(), 'subagent-otel-forwarding-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const BYTES = 6 * 1024 * 1024 + 12_345;
const file = join(work, 'random.bin');
const source = randomBytes(BYTES);
writeFileSync(file, source);
const sourceDigest = createHash('sha256').update(source).digest('hex');

/** A reader process: hashes its stdin (each chunk `rounds` extra times when slow) and prints the digest of the bytes and their count. */
function reader(rounds: number): { stdin: Writable; result: Promise<string> } {
  const script = `
    const { createHash } = require('node:crypto');
    const digest = createHash('sha256');
    let bytes = 0;
    process.stdin.on('data', (chunk) => {
      digest.update(chunk);
      bytes += chunk.length;
      for (let i = 0; i < ${rounds}; i += 1) createHash('sha256').update(chunk).digest();
    });
    process.stdin.on('end', () => process.stdout.write(digest.digest('hex') + ' ' + bytes));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    out += text;
  });
  return { stdin: child.stdin, result: new Promise((resolve) => child.once('close', () => resolve(out))) };
}

async function forward(
  rounds: number,
  borrowed: boolean,
): Promise<{ received: string; observedDigest: string; keptDigest: string; chunks: number }> {
  const { stdin, result } = reader(rounds);
  const observed = createHash('sha256');
  const kept: Buffer[] = [];
  let chunks = 0;
  const exit = await runStdioProxy({
    command: 'cat',
    args: [file],
    signals: [],
    stdout: stdin,
    onChunk: (direction, chunk) => {
      if (direction !== 'agent->client') return;
      chunks += 1;
      observed.update(chunk);
      // Without the promise, the observer may keep what it is handed: it must stay as it was.
      if (!borrowed) kept.push(chunk);
    },
    ...(borrowed ? { borrowedChunks: true } : {}),
  });
  expect(exit).toMatchObject({ code: 0, signal: null });
  stdin.end();
  return {
    received: await result,
    observedDigest: observed.digest('hex'),
    keptDigest: borrowed ? sourceDigest : createHash('sha256').update(Buffer.concat(kept)).digest('hex'),
    chunks,
  };
}

describe('runStdioProxy forwarding of the child stdout', () => {
  it.each([
    ['a fast reader, borrowed chunks', 0, true],
    ['a slow reader (writes queue), borrowed chunks', 40, true],
    ['a fast reader, chunks the observer keeps', 0, false],
    ['a slow reader, chunks the observer keeps', 40, false],
  ])('hands on and shows exactly the bytes the child wrote: %s', async (_name, rounds, borrowed) => {
    const run = await forward(rounds, borrowed);
    expect(run.received).toBe(`${sourceDigest} ${BYTES}`);
    expect(run.observedDigest).toBe(sourceDigest);
    expect(run.keptDigest).toBe(sourceDigest);
    expect(run.chunks).toBeGreaterThan(1);
  });
});
