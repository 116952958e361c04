/**
 * Headless Chromium from Debian's package (`apt-get install chromium`),
 * driven by playwright-core; no browser is ever downloaded. Each launch has
 * a fresh profile directory and no network of its own (no sync, updates or
 * background requests). In CI a missing browser fails with how to get it;
 * elsewhere the caller reports its tests skipped.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const GET_CHROMIUM =
  'apt-get update && apt-get install -y --no-install-recommends chromium (.ci/run does it when chromium is missing)';

/** Whether Debian's Chromium is installed; in CI its absence throws with how to install it. */
export function hasChromium(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`${CHROMIUM} is missing: ${GET_CHROMIUM}`);
  return false;
}

/** A headless browser context with a fresh profile; `close` removes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'subagent-otel-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
