/** Paths of the built artefacts tests spawn (`npm test` builds first). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI as it ships: the bundle `npm run build` writes, the package's `bin`. */
export const CLI = join(ROOT, 'dist', 'cli', 'subagent-otel.js');
export const FIXTURE_SDK_RUNTIME = join(ROOT, 'dist', 'fixtures', 'sdk-runtime.js');
export const FIXTURE_ACP_AGENT = join(ROOT, 'dist', 'fixtures', 'acp-agent.js');

if (!existsSync(FIXTURE_SDK_RUNTIME)) {
  throw new Error(`${FIXTURE_SDK_RUNTIME} is missing: run 'npm run build' (npm test does it first)`);
}
