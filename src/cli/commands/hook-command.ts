/**
 * `subagent-otel hook`: a help topic only. The agents run it at a subagent's
 * end, and `cli/bin` hands it to `hooks/run-hook` before the CLI loads
 * (decision 0123), so it has no parser or handler in the command table and
 * is no command `main` knows; `help hook` prints this page.
 *
 * @module subagent-otel/cli/commands/hook-command
 */
import type { HelpTopic } from '../command-spec.js';

export const hookTopic: HelpTopic = {
  name: 'hook',
  help: `Usage: subagent-otel hook <claude-code|codex>

What the agents run at SubagentStop, Stop and SessionEnd once 'subagent-otel setup' added it:
reads the hook's JSON on stdin, tells the background watcher which transcript holds a run that
just ended (starting the watcher when none runs), prints nothing and exits 0 at once, whatever
happens (problems go to $XDG_STATE_HOME/subagent-otel/daemon/watch.log).`,
};
