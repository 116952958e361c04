/**
 * The text of a caught error: for a message a person reads (`errorText`,
 * `errorMessage`) and as an `Error` for an API that wants one (`asError`).
 *
 * @module subagent-otel/wire/error-text
 */

/**
 * One line describing `error`: an `Error`'s message, prefixed with its
 * system error code (e.g. `ENOENT: `) when the message does not start with
 * it, else the value as a string; never throws for an `Error`.
 */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * An `Error`'s message exactly as it is (no code prefix), else
 * `String(error)`; throws only when `String()` of a non-`Error` throws.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `error` itself when it is an `Error`, else a new `Error` whose message is `String(error)`. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
