/**
 * A real browser for the UI tests: `playwright-core` (a dev dependency; `AGENT_HARNESS_PLAYWRIGHT_CORE` may name
 * another install's package directory) driving the system's Chromium (Debian's `chromium`, which `.ci/run` installs;
 * `AGENT_HARNESS_CHROMIUM` names another). Playwright never downloads a browser here. When either is missing the
 * tests are skipped with a message that says what to install.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { scaled } from './load-scaled.js';

/** The part of playwright-core's Page these tests use. */
export interface BrowserPage {
  goto(url: string, options?: { timeout?: number }): Promise<unknown>;
  click(selector: string, options?: { timeout?: number }): Promise<void>;
  selectOption(selector: string, value: string): Promise<unknown>;
  fill(selector: string, value: string): Promise<void>;
  press(selector: string, key: string): Promise<void>;
  textContent(selector: string, options?: { timeout?: number }): Promise<string | null>;
  getAttribute(selector: string, name: string): Promise<string | null>;
  waitForSelector(selector: string, options?: { timeout?: number; state?: string }): Promise<unknown>;
  waitForFunction(fn: string, arg?: unknown, options?: { timeout?: number }): Promise<unknown>;
  evaluate<T>(fn: string): Promise<T>;
  locator(selector: string): { count(): Promise<number>; allTextContents(): Promise<string[]> };
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
  on(event: 'dialog', listener: (dialog: { message(): string; dismiss(): Promise<void> }) => void): void;
  on(event: 'request', listener: (request: { url(): string }) => void): void;
  on(event: 'pageerror', listener: (error: Error) => void): void;
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
  setDefaultTimeout(ms: number): void;
  close(): Promise<void>;
}

/** The part of playwright-core's Browser these tests use. */
export interface BrowserHandle {
  newPage(): Promise<BrowserPage>;
  close(): Promise<void>;
}

interface PlaywrightCore {
  chromium: {
    launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<BrowserHandle>;
  };
}

/** Where the system's Chromium is, or null. */
export function findChromium(): string | null {
  const candidates = [process.env.AGENT_HARNESS_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((file): file is string => !!file && fs.existsSync(file)) ?? null;
}

async function loadPlaywright(): Promise<PlaywrightCore | null> {
  const dir = process.env.AGENT_HARNESS_PLAYWRIGHT_CORE;
  try {
    if (dir) return createRequire(path.join(path.resolve(dir), 'package.json'))(path.resolve(dir)) as PlaywrightCore;
    // A variable, so that tsc does not need the package's types to check this file.
    const name = 'playwright-core';
    return (await import(name)) as PlaywrightCore;
  } catch {
    return null;
  }
}

/** Why the browser tests cannot run here (null: they can). */
export async function browserUnavailable(): Promise<string | null> {
  if (!findChromium())
    return 'Chromium is not installed (apt-get install chromium, as .ci/run does; or set AGENT_HARNESS_CHROMIUM)';
  if (!(await loadPlaywright())) return 'playwright-core is not installed (npm ci installs it as a dev dependency)';
  return null;
}

/** Launches headless Chromium (no sandbox: CI runs as root; no background networking: nothing leaves the machine). */
export async function launchBrowser(): Promise<BrowserHandle> {
  const playwright = await loadPlaywright();
  const chromium = findChromium();
  if (!playwright || !chromium) throw new Error((await browserUnavailable()) ?? 'no browser');
  const browser = await playwright.chromium.launch({
    executablePath: chromium,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  return {
    // Playwright's own 30 s default for a wait with no timeout given grows with the load like every other wait.
    newPage: async () => {
      const page = await browser.newPage();
      page.setDefaultTimeout(scaled(30_000));
      return page;
    },
    close: () => browser.close(),
  };
}
