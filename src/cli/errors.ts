/**
 * The typed errors the command line maps to exit codes, in one place
 * (`main.ts`): a `UsageError` (exit 2, bad arguments) and an `ExitError`
 * (a chosen exit code with a message).
 *
 * @module subagent-otel/cli/errors
 */

/** Bad command-line input. The message names the input and what to do. Exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command failed in a way the user should read; exits with `code`. */
export class ExitError extends Error {
  override readonly name = 'ExitError';
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}
