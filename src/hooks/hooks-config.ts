/**
 * What `setup` writes for the watcher the hooks start: the folders to
 * follow, since when runs count, and the telemetry settings. The agents run
 * their hooks without the user's `OTEL_*` variables (Claude Code strips
 * them), so the watcher cannot take them from its environment: `setup`
 * copies them here from its own. A private file (0600: it may hold an
 * exporter's credentials), validated with zod when read, written whole
 * (temporary file, then rename).
 *
 * @module subagent-otel/hooks/hooks-config
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod';
import { errorText } from '../wire/error-text.js';
import { HOOK_EVENT_VARIABLE, HOOKED_AGENTS, type HookedAgent } from './locations.js';

/** The file's content. */
export interface HooksConfig {
  readonly version: 1;
  /** Runs that ended before this time (epoch ms: the first setup) are history, never reported. */
  readonly since: number;
  /** Per agent set up: the transcript folder its watcher follows. */
  readonly agents: Partial<Record<HookedAgent, { readonly folder: string }>>;
  /** Environment the watcher runs with (over its own): `OTEL_*` and `SUBAGENT_OTEL_*` from the setup's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** `--out`: where the OTLP JSON files go (absolute). */
  readonly out?: string;
  /** `--no-content`. */
  readonly noContent?: true;
}

const HooksConfigSchema = z.object({
  version: z.literal(1),
  since: z.number().nonnegative(),
  agents: z.partialRecord(z.enum(HOOKED_AGENTS), z.object({ folder: z.string().min(1) })),
  env: z.record(z.string(), z.string()),
  out: z.string().min(1).optional(),
  noContent: z.literal(true).optional(),
});

/** What {@link loadHooksConfig} found. */
export type LoadedHooksConfig =
  { readonly ok: true; readonly config: HooksConfig | undefined } | { readonly ok: false; readonly message: string };

/** Reads the config at `path`: `config: undefined` when there is none; a message naming the file when it is unreadable or invalid. Never rejects. */
export async function loadHooksConfig(path: string): Promise<LoadedHooksConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, config: undefined };
    return { ok: false, message: `cannot read ${path}: ${errorText(error)}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `${path} is not JSON (${errorText(error)}); run 'subagent-otel setup <agent>' again to rewrite it`,
    };
  }
  const parsed = HooksConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      message: `${path} is not a hooks configuration (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}); run 'subagent-otel setup <agent>' again to rewrite it`,
    };
  }
  const { out, noContent, ...rest } = parsed.data;
  return {
    ok: true,
    config: { ...rest, ...(out !== undefined ? { out } : {}), ...(noContent !== undefined ? { noContent } : {}) },
  };
}

/** Writes `config` to `path` (0600), whole. @throws when it cannot. */
export async function saveHooksConfig(path: string, config: HooksConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

/** The variables `setup` copies from its environment: OpenTelemetry's and this project's own. */
export function telemetryEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === HOOK_EVENT_VARIABLE) continue;
    if (name.startsWith('OTEL_') || name.startsWith('SUBAGENT_OTEL_')) kept[name] = value;
  }
  return kept;
}
