/**
 * Reading what a running stack took, for the stack tests (through
 * test/stack/observed.ts) and for scripts/packed-export-check.mjs: polling a
 * condition with a budget, and summing a metric family of a Prometheus text
 * exposition (a collector's own telemetry or its Prometheus exporter). Polls
 * conditions, never sleeps for a fixed time before a check.
 *
 * @module subagent-otel/scripts/stack/probes
 */

/**
 * Calls `probe` every 500 ms until it returns something other than undefined.
 * @returns that value; rejects with `what` and the last probe error after `timeoutMs`.
 */
export async function waitFor(what, probe, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Sum of a metric family over every series matching `labels` in a Prometheus text exposition. */
export async function scrapeSum(url, name, labels = {}) {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m === null || m[1] !== name) continue;
    const lbl = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => lbl.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}
