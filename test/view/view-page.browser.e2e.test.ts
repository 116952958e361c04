/**
 * `subagent-otel view` in a real browser (Debian's headless Chromium driven
 * by playwright-core): the built command serves the demo's telemetry, the
 * telemetry of the real Claude Code sessions replayed with `--out`, and
 * their transcript folder directly; the page shows the runs, filters them
 * to max-tokens, opens a run and shows its subagent under the tool call
 * that delegated it; an output holding `<script>` and `javascript:` links
 * shows as text and runs nothing. A screenshot of each view is kept under
 * test-artifacts/view/ (ignored by git).
 */
import { requireFolder, SHARED_TRANSCRIPTS, SHARED_TRANSCRIPTS_HOW } from '../helpers/required-folder.js';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { finished, runCli, spawnCli, waitForLine } from '../helpers/cli.js';
import { ROOT } from '../helpers/paths.js';

const ARTIFACTS = join(ROOT, 'test-artifacts', 'view');
const REAL = join(SHARED_TRANSCRIPTS, 'claude-code', 'real');

/** An element's `dataset`, as the page's rows carry it (the test's TypeScript has no DOM types). */
interface Dataset {
  readonly dataset: Record<string, string | undefined>;
}

interface Served {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
}

const servers: ChildProcessWithoutNullStreams[] = [];

async function serve(args: readonly string[]): Promise<Served> {
  const child = spawnCli(['view', ...args]);
  servers.push(child);
  child.stderr.resume(); // progress and problems: read so the pipe never fills
  const line = await waitForLine(child, (l) => l.startsWith('subagent-otel view: http://'));
  return { url: line.slice('subagent-otel view: '.length).trim(), child };
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Opens the run of `row`, then checks its span is shown one level under an execute_tool span (its delegating tool call). */
async function expectSubagentUnderToolCall(page: Page, runId: string): Promise<void> {
  const spanId = runId.split('-')[1] ?? '';
  const row = page.locator(`.wf-row[data-span-id="${spanId}"]`);
  await row.waitFor();
  expect(await row.getAttribute('data-operation')).toBe('invoke_agent');
  const parentId = (await row.getAttribute('data-parent-span-id')) ?? '';
  const parent = page.locator(`.wf-row[data-span-id="${parentId}"]`);
  expect(await parent.getAttribute('data-operation')).toBe('execute_tool');
  expect(Number(await row.getAttribute('data-depth'))).toBe(Number(await parent.getAttribute('data-depth')) + 1);
  // The tool call's row comes before the subagent's, which comes before the subagent's own spans.
  const order = await page
    .locator('.wf-row')
    .evaluateAll(
      (rows, ids) => ids.map((id) => rows.findIndex((r) => (r as unknown as Dataset).dataset.spanId === id)),
      [parentId, spanId],
    );
  expect(order[0]).toBeGreaterThanOrEqual(0);
  expect(order[0]).toBeLessThan(order[1] ?? -1);
}

const browserReady = hasChromium();

describe.skipIf(!browserReady)('view in a browser', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  const dir = mkdtempSync(join(tmpdir(), 'subagent-otel-view-e2e-'));

  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.context.newPage();
    // Any script the page did not bring itself would set this flag (the XSS case).
    await page.addInitScript('window.__xss = undefined;');
  });

  afterAll(async () => {
    for (const child of servers) if (child.exitCode === null) child.kill('SIGTERM');
    await browser?.close();
  });

  it("shows the demo's 35 runs, the 11 cut off one filter away, and a subagent under its tool call", async () => {
    const out = join(dir, 'demo');
    expect((await runCli(['demo', '--out', out])).code).toBe(0);
    const { url } = await serve([out]);
    await page.goto(url);
    await page.locator('.pager .total[data-total="35"]').waitFor();
    expect(await page.locator('tr.run').count()).toBe(35);
    await shot(page, 'demo-runs');

    await page.selectOption('select[name="stop"]', 'max-tokens');
    await page.locator('.pager .total[data-total="11"]').waitFor();
    const stops = await page
      .locator('tr.run')
      .evaluateAll((rows) => rows.map((r) => (r as unknown as Dataset).dataset.stop));
    expect(stops).toEqual(Array.from({ length: 11 }, () => 'max-tokens'));
    await shot(page, 'demo-max-tokens');

    // A delegated child run (↳), opened from the filtered table.
    const child = page.locator('tr.run', { hasText: '↳' }).first();
    const runId = (await child.getAttribute('data-run-id')) ?? '';
    await child.click();
    await expectSubagentUnderToolCall(page, runId);
    await page.locator('pre.output').waitFor();
    expect(await page.locator('.received').textContent()).toMatch(/parent received/);
    await shot(page, 'demo-run');

    await page.click('button[data-tab="charts"]');
    await page.locator('section.chart canvas').nth(3).waitFor();
    expect(await page.locator('section.chart').count()).toBe(4);
    await shot(page, 'demo-charts');
  });

  it("shows the real Claude Code sessions' runs, from their telemetry and from the folder itself, each subagent under its Task call", async (context) => {
    requireFolder(context, REAL, SHARED_TRANSCRIPTS_HOW);
    const out = join(dir, 'real');
    const replay = await runCli(['replay', '--no-progress', '--out', out, REAL]);
    expect(replay.code, replay.stderr.toString()).toBe(0);
    for (const source of [out, REAL]) {
      const { url } = await serve([source]);
      await page.goto(url);
      await page.locator('.pager .total[data-total="7"]').waitFor();
      const nested = page.locator('tr.run', { hasText: 'claude-code-guide' });
      expect(await nested.count()).toBe(1);
      const runId = (await nested.getAttribute('data-run-id')) ?? '';
      if (source === out) await shot(page, 'real-runs');
      await nested.click();
      await expectSubagentUnderToolCall(page, runId);
      const parentId =
        (await page
          .locator(`.wf-row[data-span-id="${runId.split('-')[1] ?? ''}"]`)
          .getAttribute('data-parent-span-id')) ?? '';
      expect(await page.locator(`.wf-row[data-span-id="${parentId}"] .label`).textContent()).toBe('execute_tool Task');
      if (source === out) await shot(page, 'real-run');
    }
  });

  it('shows an output holding <script> and javascript: links as text, and runs none of it', async () => {
    const xssDir = join(dir, 'xss');
    mkdirSync(xssDir, { recursive: true });
    const evil =
      '<script>window.__xss=1</script><img src=x onerror="window.__xss=2"> see [docs](javascript:window.__xss=3) or javascript:window.__xss=4';
    const attr = (key: string, value: string): unknown => ({ key, value: { stringValue: value } });
    const span = (spanId: string, parentSpanId: string, name: string, attributes: unknown[]): unknown => ({
      traceId: '0123456789abcdef0123456789abcdef',
      spanId,
      parentSpanId,
      name,
      kind: 1,
      startTimeUnixNano: '1764000000000000000',
      endTimeUnixNano: '1764000001000000000',
      attributes,
      status: { code: 0 },
    });
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [attr('service.name', 'subagent-otel')] },
          scopeSpans: [
            {
              scope: { name: 'subagent-otel' },
              spans: [
                span('00000000000000a1', '', 'invoke_agent <b>x</b>', [
                  attr('gen_ai.operation.name', 'invoke_agent'),
                  attr('gen_ai.agent.name', '<img src=x onerror="window.__xss=5">'),
                  attr('gen_ai.conversation.id', 'javascript:window.__xss=6'),
                  attr('subagent.stop_reason', 'max-tokens'),
                  attr('subagent.output', JSON.stringify([{ type: 'text', text: evil }])),
                  attr(
                    'gen_ai.input.messages',
                    JSON.stringify([
                      { role: 'user', parts: [{ type: 'text', content: '<script>window.__xss=7</script>' }] },
                    ]),
                  ),
                ]),
                span('00000000000000a2', '00000000000000a1', 'execute_tool <script>window.__xss=8</script>', [
                  attr('gen_ai.operation.name', 'execute_tool'),
                ]),
              ],
            },
          ],
        },
      ],
    };
    writeFileSync(join(xssDir, 'traces.jsonl'), `${JSON.stringify(request)}\n`);
    const { url } = await serve([xssDir]);
    await page.goto(url);
    await page.locator('.pager .total[data-total="1"]').waitFor();
    expect(await page.locator('tr.run .preview').textContent()).toContain('<script>window.__xss=1</script>');
    await page.fill('input[name="q"]', 'javascript:window.__xss=3');
    await page.locator('.pager .total[data-total="1"]').waitFor();
    await page.locator('tr.run').click();
    await page.locator('pre.output').waitFor();
    expect(await page.locator('pre.output').textContent()).toBe(evil);
    expect(await page.locator('pre.prompt').textContent()).toBe('<script>window.__xss=7</script>');
    expect(await page.locator('.wf-row[data-span-id="00000000000000a2"] .label').textContent()).toBe(
      'execute_tool <script>window.__xss=8</script>',
    );
    await shot(page, 'xss-run');
    // A string: this runs in the page, and the test's TypeScript has no DOM types.
    const dom = await page.evaluate(
      "({ flag: window.__xss, scripts: document.scripts.length, images: document.images.length, links: document.querySelectorAll('a[href]').length })",
    );
    // Only the page's own script element; no image, no link made from the data; the flag never set.
    expect(dom).toEqual({ flag: undefined, scripts: 1, images: 0, links: 0 });
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const { child } = await serve([join(dir, 'demo')]);
    const done = finished(child);
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });
});
