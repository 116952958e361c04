/**
 * An ES module that does nothing: `bench/spawn.mjs` starts it (with the same
 * preload as every other variant) to measure Node's own start for an ES
 * module entry, which the `subagent-otel` bin is, in the same run as the
 * sessions.
 *
 * @module subagent-otel/bench/peers/empty-entry
 */
export {};
