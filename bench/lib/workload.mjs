/**
 * Deterministic workloads for the benchmarks: dsh session events of a long
 * agent run (chunk generation, docs/PROTOCOLS.md section 2), the same run in the
 * embedded generation, SDK `session.event` notification NDJSON, and many
 * short runs. Everything comes from a seeded generator, so every run of the
 * bench sees the same bytes.
 *
 * A run looks like what a runtime writes: `turn/start`, `user/message`,
 * `request/context`, then steps of `step/start`, streamed chunks (mostly
 * `text-delta`; some reasoning and tool-call deltas; `block-start`,
 * `block-end`, `usage`, `finish`), the step's `assistant/message` (its
 * content repeats the streamed text), tool calls and results (some of them
 * large), `step/end`; it ends like the seed's case, with a max-tokens step
 * whose message is empty, then `turn/end`. Imports nothing from the
 * package: the workload does not share code with what it measures.
 *
 * @module subagent-otel/bench/lib/workload
 */

/**
 * A seeded 32-bit generator (mulberry32).
 * @returns a function giving floats in [0, 1); the same seed gives the same sequence.
 */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LETTERS = 'etaoinshrdlcumwfgypbvkjxqz';
const NON_ASCII = ['é', 'ü', 'ß', '中', '文', '→', '…'];

/** A fixed vocabulary: short words, some with non-ASCII letters (UTF-8 decoding is part of the work). */
function vocabulary(random, size) {
  const words = [];
  for (let i = 0; i < size; i += 1) {
    const length = 1 + Math.floor(random() * 8);
    let word = '';
    for (let k = 0; k < length; k += 1) word += LETTERS[Math.floor(random() * random() * LETTERS.length)];
    if (random() < 0.05) word += NON_ASCII[Math.floor(random() * NON_ASCII.length)];
    words.push(word);
  }
  return words;
}

/** The one vocabulary every workload draws from (built once, from its own seed). */
const WORDS = vocabulary(seededRandom(1), 4096);

/** Text pieces of a generator: deltas of 1 to 4 words, as model streams deliver them. */
class TextSource {
  constructor(random) {
    this.random = random;
    this.words = WORDS;
  }

  delta() {
    const n = 1 + Math.floor(this.random() * 4);
    let text = '';
    for (let i = 0; i < n; i += 1) text += ` ${this.words[Math.floor(this.random() * this.words.length)]}`;
    return text;
  }

  /** About `bytes` characters of text (for tool results and long messages). */
  blob(bytes) {
    const parts = [];
    let length = 0;
    while (length < bytes) {
      const d = this.delta();
      parts.push(d);
      length += d.length;
      if (this.random() < 0.02) parts.push('\n');
    }
    return parts.join('');
  }
}

/**
 * Options of {@link runEvents}.
 * - `seed`: generator seed (default 7).
 * - `events`: how many session events the chunk generation of the run has
 *   (default 1,000,000); exact when it exceeds about 100 per step.
 * - `steps`: about how many steps the run has (default 200); the deltas per step follow.
 * - `turn`: the turn number (default 0); `seqStart`, `timeStart` where the envelope counters begin.
 * - `largeEvery`: every n-th step has a tool result of `largeBytes` characters (default 0: never).
 */
const RUN_DEFAULTS = {
  seed: 7,
  events: 1_000_000,
  steps: 200,
  turn: 0,
  seqStart: 0,
  timeStart: 1_764_400_000_000,
  largeEvery: 0,
  largeBytes: 128 * 1024,
};

/**
 * Generates one run (one turn) of the chunk generation: every streamed chunk
 * is its own `assistant/chunk` event. Lazy: nothing is held but the current
 * step's text, so a million-event run can be streamed.
 *
 * @yields session event objects `{ type, seq, time, data }` in log order.
 */
export function* runEvents(options = {}) {
  const o = { ...RUN_DEFAULTS, ...options };
  const random = seededRandom(o.seed);
  const text = new TextSource(random);
  let seq = o.seqStart;
  let time = o.timeStart;
  const turn = o.turn;
  const at = (type, data) => {
    time += random() < 0.5 ? 0 : 1 + Math.floor(random() * 3);
    return { type, seq: seq++, time, data };
  };
  const perStep = Math.max(8, Math.floor(o.events / o.steps) - 10);
  yield at('turn/start', { turn });
  yield at('user/message', {
    id: `u${turn}`,
    role: 'user',
    content: [{ type: 'text', text: text.blob(200) }],
    source: 'sdk',
  });
  yield at('request/context', { provider: 'deepseek', model: 'deepseek-chat' });
  const limit = o.seqStart + o.events;
  let step = 0;
  for (; seq < limit - 40; step += 1) {
    yield at('step/start', { turn, step });
    const chunk = (c) => at('assistant/chunk', { turn, step, chunk: c });
    const content = [];
    let index = 0;
    let budget = Math.min(perStep, limit - 40 - seq);
    if (random() < 0.1 && budget > 24) {
      // A reasoning block of a few deltas.
      const n = 3 + Math.floor(random() * 16);
      let thought = '';
      yield chunk({ type: 'block-start', index, blockType: 'reasoning' });
      for (let i = 0; i < n; i += 1) {
        const d = text.delta();
        thought += d;
        yield chunk({ type: 'reasoning-delta', index, text: d });
      }
      yield chunk({ type: 'block-end', index, block: { type: 'reasoning', text: thought } });
      content.push({ type: 'reasoning', text: thought });
      budget -= n + 2;
      index += 1;
    }
    const hasTool = random() < 0.3;
    const deltas = Math.max(1, budget - (hasTool ? 12 : 4));
    let said = '';
    yield chunk({ type: 'block-start', index, blockType: 'text' });
    for (let i = 0; i < deltas; i += 1) {
      const d = text.delta();
      said += d;
      yield chunk({ type: 'text-delta', index, text: d });
    }
    yield chunk({ type: 'block-end', index, block: { type: 'text', text: said } });
    content.push({ type: 'text', text: said });
    index += 1;
    const callId = `call-${turn}-${step}`;
    if (hasTool) {
      const args = JSON.stringify({ path: `src/${text.delta().trim()}.ts`, limit: 200 });
      yield chunk({ type: 'block-start', index, blockType: 'tool-call' });
      for (let i = 0; i < args.length; i += 12) {
        yield chunk({
          type: 'tool-call-delta',
          index,
          id: callId,
          ...(i === 0 ? { name: 'read_file' } : {}),
          argumentsDelta: args.slice(i, i + 12),
        });
      }
      const block = { type: 'tool-call', id: callId, name: 'read_file', arguments: args };
      yield chunk({ type: 'block-end', index, block });
      content.push(block);
    }
    const usage = { inputTokens: 1200 + step, outputTokens: 40 + deltas, cacheReadTokens: 800 };
    yield chunk({ type: 'usage', usage });
    yield chunk({ type: 'finish', reason: { kind: hasTool ? 'tool-calls' : 'stop' } });
    yield at('assistant/message', {
      turn,
      step,
      message: { id: `m${turn}-${step}`, role: 'assistant', content },
      usage,
    });
    if (hasTool) {
      const large = o.largeEvery > 0 && step % o.largeEvery === o.largeEvery - 1;
      yield at('tool/call', {
        turn,
        step,
        callId,
        name: 'read_file',
        arguments: content[content.length - 1].arguments,
      });
      const result = text.blob(large ? o.largeBytes : 300);
      yield at('tool/result', {
        turn,
        step,
        message: { content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: result }] }] },
      });
    }
    yield at('step/end', { turn, step });
  }
  // The seed's case: a max-tokens step that assembled only a truncated tool call leaves an empty, usage-only message.
  // Reasoning deltas pad the run to exactly `events` events (7 more close it); reasoning is never output.
  yield at('step/start', { turn, step });
  while (seq < limit - 6)
    yield at('assistant/chunk', { turn, step, chunk: { type: 'reasoning-delta', index: 1, text: text.delta() } });
  yield at('assistant/chunk', { turn, step, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } });
  yield at('assistant/chunk', {
    turn,
    step,
    chunk: {
      type: 'tool-call-delta',
      index: 0,
      id: `call-${turn}-${step}`,
      name: 'write_file',
      argumentsDelta: '{"path":',
    },
  });
  yield at('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: 'max-tokens' } } });
  yield at('assistant/message', {
    turn,
    step,
    message: { id: `m${turn}-${step}`, role: 'assistant', content: [] },
    usage: { inputTokens: 900, outputTokens: 4096 },
  });
  yield at('step/end', { turn, step });
  yield at('turn/end', { turn, reason: { kind: 'max-tokens' } });
}

/**
 * The embedded generation of a chunk-generation event list: each step's
 * `assistant/chunk` events travel inside the next `assistant/message` as its
 * `stream` (chunks not followed by a message become an `assistant/attempt`).
 * Envelope `seq` numbers are renumbered contiguously.
 *
 * @yields the embedded-generation events; the chunks are the same objects.
 */
export function* embedStreams(events) {
  let pending = [];
  let seq = 0;
  let last;
  for (const event of events) {
    if (event.type === 'assistant/chunk') {
      pending.push(event.data.chunk);
      last = event;
      continue;
    }
    if (event.type === 'assistant/message') {
      yield { type: event.type, seq: seq++, time: event.time, data: { ...event.data, stream: pending } };
      pending = [];
      continue;
    }
    if (pending.length > 0) {
      yield {
        type: 'assistant/attempt',
        seq: seq++,
        time: last.time,
        data: {
          turn: last.data.turn,
          step: last.data.step,
          stream: pending,
          failure: { message: 'cancelled', code: 'aborted' },
        },
      };
      pending = [];
    }
    yield { ...event, seq: seq++ };
  }
}

/**
 * Logical size of an event list: envelope events plus the stream chunks
 * embedded in them. The same run has the same logical size in both
 * generations, so events per second compare across generations.
 */
export function logicalEventCount(events) {
  let n = 0;
  for (const event of events) {
    n += 1;
    const stream = event.data?.stream;
    if (stream !== undefined) n += stream.length;
  }
  return n;
}

/** One `session.event` notification line (without its newline). */
export function notificationLine(sessionId, event) {
  return JSON.stringify({ jsonrpc: '2.0', method: 'session.event', params: { sessionId, event } });
}

/**
 * The agent-to-client NDJSON of an SDK runtime streaming several prompt
 * turns: `session.status` around each turn and one `session.event`
 * notification per event (chunk generation, so mostly `text-delta`
 * notifications), with a large tool result every `largeEvery` steps.
 *
 * @param options `{ seed, bytes, largeEvery, largeBytes, stepsPerTurn, deltasPerStep }`.
 * @yields NDJSON text pieces (whole lines, each ending in `\n`) until at least `bytes` characters were produced.
 */
export function* sdkNotificationStream(options = {}) {
  const o = {
    seed: 11,
    bytes: 64 * 1024 * 1024,
    largeEvery: 6,
    largeBytes: 96 * 1024,
    stepsPerTurn: 30,
    deltasPerStep: 300,
    ...options,
  };
  let produced = 0;
  let seq = 0;
  let time = 1_764_400_000_000;
  for (let turn = 0; produced < o.bytes; turn += 1) {
    const sessionId = `session-${turn % 4}`;
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', method: 'session.status', params: { sessionId, status: 'running' } }),
    ];
    for (const event of runEvents({
      seed: o.seed + turn,
      events: o.stepsPerTurn * o.deltasPerStep,
      steps: o.stepsPerTurn,
      turn,
      seqStart: seq,
      timeStart: time,
      largeEvery: o.largeEvery,
      largeBytes: o.largeBytes,
    })) {
      lines.push(notificationLine(sessionId, event));
      seq = event.seq + 1;
      time = event.time;
      if (lines.length >= 256) {
        const piece = `${lines.join('\n')}\n`;
        produced += piece.length;
        yield piece;
        lines.length = 0;
      }
    }
    lines.push(JSON.stringify({ jsonrpc: '2.0', method: 'session.status', params: { sessionId, status: 'idle' } }));
    const piece = `${lines.join('\n')}\n`;
    produced += piece.length;
    yield piece;
  }
}
