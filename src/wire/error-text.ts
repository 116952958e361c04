/**
 * The text of a caught error for a message a person reads: an `Error`'s
 * message (prefixed with its system error code, e.g. `ENOENT`, when the
 * message does not start with it), else the value as a string.
 *
 * @module subagent-otel/wire/error-text
 */

/** One line describing `error`; never throws. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
