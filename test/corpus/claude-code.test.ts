/** What the corpus check drops of a Claude Code parent's tool result before comparing (`withoutAgentTrailer`). */
import { describe, expect, it } from 'vitest';
import { withoutAgentTrailer } from '../../src/corpus/claude-code.js';

describe('withoutAgentTrailer', () => {
  it("drops Claude Code's agentId trailer and its usage block", () => {
    expect(withoutAgentTrailer('The answer.\nagentId: a1 (for resuming)\n<usage>total_tokens: 5</usage>')).toBe(
      'The answer.',
    );
    expect(withoutAgentTrailer('agentId: a1 (for resuming)')).toBe('');
    expect(withoutAgentTrailer('No trailer; agentId: a1 mid-line stays.')).toBe(
      'No trailer; agentId: a1 mid-line stays.',
    );
  });
});
