/**
 * Plain text of what a run span records as JSON: the selected output
 * (`subagent.output`, `ContentBlock[]` JSON) and the prompt
 * (`gen_ai.input.messages`, GenAI messages JSON). Every value is untrusted
 * transcript text: these functions only extract strings, they never
 * interpret them. Never throws: JSON that does not parse (a capped
 * attribute, say) is returned as it is.
 *
 * @module subagent-otel/view/run-fields
 */

import { asJsonObject } from '../wire/json-values.js';

/**
 * The output as text: each text (and reasoning) block's text, other blocks
 * as `[type name]` (e.g. `[tool-call Read]`), joined by blank lines.
 */
export function outputText(json: unknown): string {
  if (typeof json !== 'string' || json === '') return '';
  let blocks: unknown;
  try {
    blocks = JSON.parse(json);
  } catch {
    return json;
  }
  if (!Array.isArray(blocks)) return json;
  const parts: string[] = [];
  for (const item of blocks) {
    const block = asJsonObject(item);
    if (block === undefined) continue;
    if (typeof block.text === 'string') parts.push(block.text);
    else if (typeof block.type === 'string')
      parts.push(`[${block.type}${typeof block.name === 'string' ? ` ${block.name}` : ''}]`);
  }
  return parts.join('\n\n');
}

/** The text parts of GenAI messages JSON (`[{ role, parts: [{ type: 'text', content }] }]`), joined by blank lines. */
export function messagesText(json: unknown): string {
  if (typeof json !== 'string' || json === '') return '';
  let messages: unknown;
  try {
    messages = JSON.parse(json);
  } catch {
    return json;
  }
  if (!Array.isArray(messages)) return json;
  const parts: string[] = [];
  for (const item of messages) {
    const message = asJsonObject(item);
    if (message === undefined || !Array.isArray(message.parts)) continue;
    for (const p of message.parts) {
      const part = asJsonObject(p);
      if (part !== undefined && typeof part.content === 'string') parts.push(part.content);
    }
  }
  return parts.join('\n\n');
}

/** `text` on one line (whitespace runs as one space), at most `max` characters with an ellipsis when cut. */
export function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
