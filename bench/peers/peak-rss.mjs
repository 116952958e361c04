/**
 * Benchmark preload (`node --import bench/peers/peak-rss.mjs ...`): when the
 * process exits, writes its peak resident set size in bytes to
 * `<BENCH_PEAK_RSS_PREFIX>.<pid>`. Lets the harness read the peak RSS of a
 * process whose last moments (telemetry flush, exit) it cannot observe from
 * outside. Does nothing when the variable is unset. Adds one tiny module
 * load to the process; every variant of a benchmark gets it alike.
 *
 * @module subagent-otel/bench/peers/peak-rss
 */
import { writeFileSync } from 'node:fs';

const prefix = process.env.BENCH_PEAK_RSS_PREFIX;
if (prefix !== undefined && prefix !== '') {
  process.on('exit', () => {
    writeFileSync(`${prefix}.${process.pid}`, String(process.resourceUsage().maxRSS * 1024));
  });
}
