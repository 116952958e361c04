/**
 * The pipes made by a `mkfifo` process that runs while the proxy's code
 * loads (`prepareChildPipes`, decision 0039). The end-to-end behaviour (FIFOs
 * seen by the agent, SIGPIPE, EOF) is in test/hardening/proxy-pipes.
 */
import { closeSync, fstatSync, readSync, writeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prepareChildPipes, type ChildPipes } from '../../src/proxy/os-pipes.js';

function closeAll(pipes: ChildPipes): void {
  pipes.closeChildEnds();
  closeSync(pipes.stdin.ownFd);
  closeSync(pipes.stdout.ownFd);
}

describe('prepareChildPipes', () => {
  it('resolves with two real pipes (FIFOs) that carry bytes from our end to the child end and back', async () => {
    const pipes = await prepareChildPipes();
    expect(pipes).toBeDefined();
    const { stdin, stdout } = pipes as ChildPipes;
    for (const fd of [stdin.childFd, stdin.ownFd, stdout.childFd, stdout.ownFd])
      expect(fstatSync(fd).isFIFO()).toBe(true);
    writeSync(stdin.ownFd, 'to the agent\n');
    const inbound = Buffer.alloc(64);
    expect(inbound.subarray(0, readSync(stdin.childFd, inbound)).toString('utf8')).toBe('to the agent\n');
    writeSync(stdout.childFd, 'to the client\n');
    const outbound = Buffer.alloc(64);
    expect(outbound.subarray(0, readSync(stdout.ownFd, outbound)).toString('utf8')).toBe('to the client\n');
    closeAll(pipes as ChildPipes);
  });

  it('resolves with nothing when mkfifo cannot be run, so the proxy falls back to socket pairs', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent-subagent-otel-test';
    let pending: Promise<ChildPipes | undefined>;
    try {
      pending = prepareChildPipes();
    } finally {
      process.env.PATH = path;
    }
    await expect(pending).resolves.toBeUndefined();
  });
});
