/** What a hook keeps of the agent's payload, and what the watcher accepts. */
import { describe, expect, it } from 'vitest';
import { endedTranscript, hookMessageOf } from '../../src/hooks/hook-message.js';
import { parseHookMessage } from '../../src/hooks/hook-message-schema.js';

// Claude Code's SubagentStop input (code.claude.com/docs/en/hooks, "SubagentStop input");
// Codex 0.166's is the same (codex-rs/hooks/schema/generated/subagent-stop.command.input.schema.json) plus model and turn_id.
const SUBAGENT_STOP = {
  session_id: 'abc123',
  transcript_path: '/home/u/.claude/projects/p/abc123.jsonl',
  cwd: '/home/u/p',
  permission_mode: 'default',
  hook_event_name: 'SubagentStop',
  stop_hook_active: false,
  agent_id: 'def456',
  agent_type: 'Explore',
  agent_transcript_path: '/home/u/.claude/projects/p/abc123/subagents/agent-def456.jsonl',
  last_assistant_message: 'Analysis complete. Found 3 potential issues...',
};

describe('hookMessageOf', () => {
  it('keeps the ids and paths, never the assistant message', () => {
    const message = hookMessageOf('claude-code', JSON.stringify(SUBAGENT_STOP), 1000);
    expect(message).toEqual({
      v: 1,
      agent: 'claude-code',
      at: 1000,
      event: 'SubagentStop',
      sessionId: 'abc123',
      transcriptPath: '/home/u/.claude/projects/p/abc123.jsonl',
      agentTranscriptPath: '/home/u/.claude/projects/p/abc123/subagents/agent-def456.jsonl',
      agentId: 'def456',
      agentType: 'Explore',
    });
    expect(JSON.stringify(message)).not.toContain('Analysis complete');
    expect(endedTranscript(message as Exclude<typeof message, string>)).toBe(
      '/home/u/.claude/projects/p/abc123/subagents/agent-def456.jsonl',
    );
  });

  it('names the session transcript at Stop and SessionEnd, nothing for other events', () => {
    const stop = hookMessageOf('codex', JSON.stringify({ ...SUBAGENT_STOP, hook_event_name: 'Stop' }), 1);
    const start = hookMessageOf('codex', JSON.stringify({ ...SUBAGENT_STOP, hook_event_name: 'SubagentStart' }), 1);
    expect(typeof stop !== 'string' && endedTranscript(stop)).toBe('/home/u/.claude/projects/p/abc123.jsonl');
    expect(typeof start !== 'string' && endedTranscript(start)).toBeUndefined();
  });

  it('says why a payload is unusable, and drops a field that is no short string', () => {
    expect(hookMessageOf('codex', 'not json', 1)).toMatch(/^the hook's input is not JSON/);
    expect(hookMessageOf('codex', '[1]', 1)).toBe("the hook's input is not a JSON object");
    expect(hookMessageOf('codex', '{"session_id":"x"}', 1)).toBe("the hook's input has no hook_event_name");
    const odd = hookMessageOf(
      'codex',
      JSON.stringify({ hook_event_name: 'Stop', transcript_path: 7, session_id: 'x'.repeat(5000) }),
      1,
    );
    expect(odd).toEqual({ v: 1, agent: 'codex', at: 1, event: 'Stop' });
  });
});

describe('parseHookMessage', () => {
  it('accepts what a hook sends and refuses anything else, naming the field', () => {
    const line = JSON.stringify(hookMessageOf('claude-code', JSON.stringify(SUBAGENT_STOP), 5));
    expect(parseHookMessage(line)).toEqual(JSON.parse(line));
    expect(parseHookMessage('{"v":1,"agent":"gemini","at":1,"event":"Stop"}')).toMatch(/^not a hook message \(agent:/);
    expect(parseHookMessage('{"v":2,"agent":"codex","at":1,"event":"Stop"}')).toMatch(/^not a hook message \(v:/);
    expect(parseHookMessage('{')).toMatch(/^not JSON/);
  });
});
