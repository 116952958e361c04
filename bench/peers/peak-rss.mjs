/**
 * Benchmark preload (`node --import bench/peers/peak-rss.mjs ...`): when the
 * process exits, writes its peak resident set size in bytes and the CPU time
 * it used (user + system, its own, not its children's) in microseconds,
 * separated by a space, to `<BENCH_PEAK_RSS_PREFIX>.<pid>`. Lets the harness read the peak RSS of a
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
    const usage = process.resourceUsage();
    writeFileSync(`${prefix}.${process.pid}`, `${usage.maxRSS * 1024} ${usage.userCPUTime + usage.systemCPUTime}`);
  });
}
