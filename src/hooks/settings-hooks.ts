/**
 * The hooks this project adds to an agent's settings, and their removal, as
 * pure edits of the parsed settings. Claude Code (`settings.json`) and Codex
 * (`hooks.json`) share the shape: `hooks.<Event>` is a list of groups
 * (`matcher`, `hooks`), each hook `{ "type": "command", "command", "timeout" }`
 * (Claude Code: code.claude.com/docs/en/hooks, "Configuration"; Codex
 * 0.166: codex-rs/hooks/src/engine/discovery.rs, `load_hooks_json`).
 *
 * Ours are told by their command (`... subagent-otel... hook <agent>`): an
 * edit never changes a hook it did not write, and removing takes out exactly
 * ours, with the groups, events and `hooks` object that held nothing else.
 *
 * @module subagent-otel/hooks/settings-hooks
 */
import { END_EVENTS } from './hook-message.js';
import type { HookedAgent } from './locations.js';
import { isJsonObject, type JsonObject } from '../wire/json-values.js';

/** The bound the agent puts on our hook (seconds); the hook itself finishes in milliseconds. */
export const HOOK_TIMEOUT_SECONDS = 10;

/** A settings file whose shape this edit cannot follow (the user's to fix). */
export class SettingsShapeError extends Error {}

/** Quotes `word` for a POSIX shell (the agents run command hooks with `sh -c`). */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command our hook runs: this Node, this command's script, `hook <agent>`. */
export function hookCommand(nodePath: string, scriptPath: string, agent: HookedAgent): string {
  return `${shellQuote(nodePath)} ${shellQuote(scriptPath)} hook ${agent}`;
}

/** Whether a hook entry is one this project wrote (for any agent). */
export function isOurHook(hook: unknown): boolean {
  if (!isJsonObject(hook) || typeof hook['command'] !== 'string') return false;
  const command = hook['command'].trim();
  return command.includes('subagent-otel') && /\shook (claude-code|codex)$/.test(command);
}

/** `settings.hooks`, checked: absent is empty; anything but an object of lists is the user's to fix. */
function hooksOf(settings: JsonObject, file: string): JsonObject {
  const hooks = settings['hooks'];
  if (hooks === undefined) return {};
  if (!isJsonObject(hooks))
    throw new SettingsShapeError(`${file}: "hooks" is not an object; fix it by hand, then run setup again`);
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups))
      throw new SettingsShapeError(`${file}: "hooks.${event}" is not a list; fix it by hand, then run setup again`);
  }
  return hooks;
}

/**
 * `settings` with our hook (running `command`) on every end event. Hooks of
 * ours already there are brought to `command`; nothing else changes.
 * @returns the new settings (a copy) and whether anything changed.
 * @throws SettingsShapeError when `hooks` is not the documented shape.
 */
export function withOurHooks(
  settings: JsonObject,
  command: string,
  file: string,
): { readonly settings: JsonObject; readonly changed: boolean } {
  const next = structuredClone(settings);
  const hooks = hooksOf(next, file);
  let changed = false;
  for (const event of END_EVENTS) {
    const groups = (hooks[event] as unknown[] | undefined) ?? [];
    let present = false;
    for (const group of groups) {
      if (!isJsonObject(group) || !Array.isArray(group['hooks'])) continue;
      for (const hook of group['hooks'] as unknown[]) {
        if (!isOurHook(hook) || !isJsonObject(hook)) continue;
        if (present) continue;
        present = true;
        if (hook['command'] !== command) {
          hook['command'] = command;
          changed = true;
        }
      }
    }
    if (!present) {
      groups.push({ hooks: [{ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS }] });
      hooks[event] = groups;
      changed = true;
    }
  }
  if (changed) next['hooks'] = hooks;
  return { settings: next, changed };
}

/**
 * `settings` without any hook of ours; a group, an event's list and the
 * `hooks` object that held only ours go with them.
 * @returns the new settings (a copy) and how many hooks were removed.
 * @throws SettingsShapeError when `hooks` is not the documented shape.
 */
export function withoutOurHooks(
  settings: JsonObject,
  file: string,
): { readonly settings: JsonObject; readonly removed: number } {
  const next = structuredClone(settings);
  if (next['hooks'] === undefined) return { settings: next, removed: 0 };
  const hooks = hooksOf(next, file);
  let removed = 0;
  for (const [event, value] of Object.entries(hooks)) {
    const groups = value as unknown[];
    const kept = groups.filter((group) => {
      if (!isJsonObject(group) || !Array.isArray(group['hooks'])) return true;
      const all = group['hooks'] as unknown[];
      const others = all.filter((hook) => !isOurHook(hook));
      if (others.length === all.length) return true;
      removed += all.length - others.length;
      group['hooks'] = others;
      return others.length > 0;
    });
    if (kept.length === groups.length) continue;
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (removed > 0 && Object.keys(hooks).length === 0) delete next['hooks'];
  return { settings: next, removed };
}
