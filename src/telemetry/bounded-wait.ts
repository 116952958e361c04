/**
 * Waiting with a bound: `within` races work against a timer and never
 * rejects; `settleEach` waits for every task of a group before it says the
 * first failure. Shutdown and flush of the pipelines use them.
 *
 * @module subagent-otel/telemetry/bounded-wait
 */

/** How work given to `within` ended. */
export type Outcome =
  { readonly status: 'done' } | { readonly status: 'timeout' } | { readonly status: 'failed'; readonly error: unknown };

/** Settles `work` or times out after `ms`; never rejects, leaves no timer behind. */
export async function within(work: () => Promise<unknown>, ms: number): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'timeout' }), Math.max(0, ms));
  });
  let running: Promise<Outcome>;
  try {
    running = work().then(
      (): Outcome => ({ status: 'done' }),
      (error: unknown): Outcome => ({ status: 'failed', error }),
    );
  } catch (error) {
    running = Promise.resolve({ status: 'failed', error });
  }
  try {
    return await Promise.race([running, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts every task at once and waits for all of them to settle.
 * @returns resolves when all fulfilled; rejects with the first failure, but
 *   only after every task settled. Never rejects early.
 */
export async function settleEach(tasks: ReadonlyArray<() => Promise<unknown>>): Promise<void> {
  const results = await Promise.allSettled(
    tasks.map(async (task) => {
      await task();
    }),
  );
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}
