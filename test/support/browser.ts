import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

// Debian's Chromium, driven headless. .ci/run installs it, so a missing browser is a failure with
// instructions, never a skipped test; vitest.config.ts leaves test/browser out where there is none.
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const SHOTS = join(process.cwd(), 'test-output');

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** A full-page screenshot into test-output/<name>.png. */
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** One browser per test file: a fresh profile, one page. */
export async function launchBrowser(viewport = { width: 1400, height: 900 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does).`,
    );
  }
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    acceptDownloads: true,
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
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async shot(name) {
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
