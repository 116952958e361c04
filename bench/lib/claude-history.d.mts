/** Types of claude-history.mjs (plain JavaScript, run by `node` without a build). */
export interface ClaudeHistoryOptions {
  readonly minBytes?: number;
  readonly copies?: number;
  readonly latestTime?: number;
}
export interface ClaudeHistory {
  readonly bytes: number;
  readonly files: number;
  readonly copies: number;
  readonly sessions: number;
}
export function writeClaudeHistory(sourceDir: string, targetDir: string, options: ClaudeHistoryOptions): ClaudeHistory;
