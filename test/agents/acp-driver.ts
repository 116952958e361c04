/**
 * An editor-side ACP client for the real-agent tests, built on the official
 * SDK's client connection over the real stdio pipes of a spawned agent (or of
 * `subagent-otel proxy` in front of it). It keeps one process for many
 * sessions, collects each turn's updates, permission requests and answer or
 * JSON-RPC error, allows every permission request once, and records every
 * frame in both directions (for the captures and for normalised comparison).
 *
 * Owns the child it spawns, in a process group of its own: `close()` ends
 * stdin and goes on reading until the agent exits, as a client that is done
 * would (all three pinned agents exit on stdin EOF, with code 0: claude and
 * gemini within tens of milliseconds, codex in about 2 s), and sends SIGTERM
 * to the group only when it has not exited within {@link EXIT_GRACE_MS}; a
 * group still running when the test process exits is killed then.
 *
 * @module subagent-otel/test/agents/acp-driver
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Readable } from 'node:stream';
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from '@agentclientprotocol/sdk';

/** One recorded JSON-RPC frame. */
export interface Frame {
  readonly dir: 'client->agent' | 'agent->client';
  readonly frame: unknown;
}

/** What the editor saw of one prompt turn. */
export interface Turn {
  readonly sessionId: string;
  readonly updates: unknown[];
  readonly permissions: unknown[];
  /** The `session/prompt` result, when the agent answered one. */
  readonly response?: unknown;
  /** The JSON-RPC error, when the agent answered with one. */
  readonly error?: { code: number; message: string; data?: unknown };
  /** Frames of this turn only (from the prompt request to its answer). */
  readonly frames: Frame[];
  /** The text the editor received: every `agent_message_chunk` text, in order. */
  readonly text: string;
}

/** A running agent with an SDK client connected to it. */
export interface AcpPeer {
  readonly initialize: unknown;
  readonly frames: Frame[];
  readonly stderr: () => string;
  newSession(cwd: string): Promise<string>;
  prompt(sessionId: string, text: string): Promise<Turn>;
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * As an editor closes an agent: ends its input, and when the process has not exited `graceMs` later sends
   * `signal` to that process (not its group: what it spawned is its own to end), then waits for the exit.
   */
  closeThenSignal(
    graceMs: number,
    signal: NodeJS.Signals,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; signalled: boolean }>;
  /** Sends `signal` to the process now (not its group). */
  signal(signal: NodeJS.Signals): void;
  /** Sends the ACP `session/cancel` notification for `sessionId` (the editor's stop button). */
  cancel(sessionId: string): Promise<void>;
  /** Asks the agent to switch `sessionId` to the session mode `modeId` (`session/set_mode`). */
  setMode(sessionId: string, modeId: string): Promise<void>;
}

const STDERR_KEEP = 64 * 1024;

/**
 * How long `close()` waits for the agent to exit on stdin EOF before it sends SIGTERM: thirty times codex's 2 s.
 * A budget, not a verdict. Closing the client's reading side or signalling at once would race the agent's
 * background writes after its last turn (claude's title and prompt-suggestion updates): a write after the client
 * stopped reading breaks the agent's pipe, which it meets on that write when direct, one write later behind a
 * relay, so the two paths could exit differently by chance.
 */
const EXIT_GRACE_MS = 60_000;

function lineSplitter(onLine: (line: string) => void): (chunk: Buffer | Uint8Array) => void {
  let buffered = '';
  return (chunk) => {
    buffered += Buffer.from(chunk).toString('utf8');
    let nl = buffered.indexOf('\n');
    while (nl !== -1) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line !== '') onLine(line);
      nl = buffered.indexOf('\n');
    }
  };
}

function parsed(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return { unparsed: line };
  }
}

function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false; // ESRCH: nothing left in the group
  }
}

/** Waits (at most 5 s, then SIGKILL) until no process of `group` is left, so their files can be removed. */
async function groupGone(group: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (signalGroup(group, 0)) {
    if (Date.now() > deadline) {
      signalGroup(group, 'SIGKILL');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Process groups started here and not yet closed. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Ends every group still running when the test process exits (a timed-out hook never reached `close()`). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const group of liveGroups) signalGroup(group, 'SIGKILL');
  });
}

/** Spawns `argv` and connects the SDK client; resolves after `initialize`. */
export async function startPeer(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<AcpPeer> {
  // Its own process group, so that close() also ends what the agent spawned (claude runs its CLI as a child).
  const child: ChildProcessWithoutNullStreams = spawn(argv[0]!, argv.slice(1), {
    stdio: ['pipe', 'pipe', 'pipe'],
    env,
    cwd,
    detached: true,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  if (child.pid !== undefined) {
    const group = child.pid;
    liveGroups.add(group);
    installExitHook();
    void exited.then(() => groupGone(group)).then(() => liveGroups.delete(group));
  }
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-STDERR_KEEP);
  });
  child.stdin.on('error', () => undefined); // EPIPE after the agent exits: close() reports the exit instead
  const frames: Frame[] = [];
  child.stdout.on(
    'data',
    lineSplitter((line) => frames.push({ dir: 'agent->client', frame: parsed(line) })),
  );
  const recordOut = lineSplitter((line) => frames.push({ dir: 'client->agent', frame: parsed(line) }));
  const toAgent = new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) => {
        recordOut(chunk);
        child.stdin.write(chunk, (error) => (error ? reject(error) : resolve()));
      }),
    close: () => {
      child.stdin.end();
    },
  });

  const sessions = new Map<string, { updates: unknown[]; permissions: unknown[] }>();
  const bucket = (id: string): { updates: unknown[]; permissions: unknown[] } => {
    let b = sessions.get(id);
    if (b === undefined) {
      b = { updates: [], permissions: [] };
      sessions.set(id, b);
    }
    return b;
  };
  const connection = client({ name: 'real-agent-tests' })
    .onNotification(methods.client.session.update, ({ params }) => {
      bucket(params.sessionId).updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      bucket(params.sessionId).permissions.push(params);
      const allow =
        params.options.find((o) => o.kind === 'allow_once') ?? params.options.find((o) => o.kind === 'allow_always');
      return {
        outcome: allow !== undefined ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' },
      };
    })
    .connect(ndJsonStream(toAgent, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));

  const initialize = await connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'real-agent-tests', version: '1.0.0' },
  });

  return {
    initialize,
    frames,
    stderr: () => stderr,
    async newSession(sessionCwd) {
      const session = await connection.agent.request(methods.agent.session.new, { cwd: sessionCwd, mcpServers: [] });
      bucket(session.sessionId);
      return session.sessionId;
    },
    async prompt(sessionId, text) {
      const b = bucket(sessionId);
      b.updates.length = 0;
      b.permissions.length = 0;
      const firstFrame = frames.length;
      let response: unknown;
      let error: Turn['error'];
      try {
        response = await connection.agent.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: 'text', text }],
        });
      } catch (e) {
        if (!(e instanceof RequestError)) throw e;
        error = { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) };
      }
      const updates = [...b.updates];
      const chunks = updates
        .map((u) => (u as { update: { sessionUpdate: string; content?: { type: string; text?: string } } }).update)
        .filter((u) => u.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text')
        .map((u) => u.content?.text ?? '');
      return {
        sessionId,
        updates,
        permissions: [...b.permissions],
        ...(response !== undefined ? { response } : {}),
        ...(error !== undefined ? { error } : {}),
        frames: frames.slice(firstFrame),
        text: chunks.join(''),
      };
    },
    signal(signal) {
      if (child.pid !== undefined) process.kill(child.pid, signal);
    },
    cancel(sessionId) {
      return connection.agent.notify(methods.agent.session.cancel, { sessionId });
    },
    async setMode(sessionId, modeId) {
      await connection.agent.request(methods.agent.session.setMode, { sessionId, modeId });
    },
    async closeThenSignal(graceMs, signal) {
      child.stdin.end();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<'grace'>((resolve) => {
        timer = setTimeout(() => resolve('grace'), graceMs);
      });
      const signalled = (await Promise.race([exited, grace])) === 'grace';
      clearTimeout(timer);
      if (signalled && child.pid !== undefined) process.kill(child.pid, signal);
      const exit = await exited;
      connection.close();
      if (child.pid !== undefined) await groupGone(child.pid);
      return { ...exit, signalled };
    },
    async close() {
      child.stdin.end();
      const group = child.pid;
      if (group !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<'grace'>((resolve) => {
          timer = setTimeout(() => resolve('grace'), EXIT_GRACE_MS);
        });
        // Still open after the grace (the agent, or something of its group holding its pipes): end the group.
        if ((await Promise.race([exited, grace])) === 'grace') signalGroup(group, 'SIGTERM');
        clearTimeout(timer);
      }
      const exit = await exited;
      connection.close();
      if (group !== undefined) await groupGone(group);
      return exit;
    },
  };
}
