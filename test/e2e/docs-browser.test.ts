// /docs in a real Chromium (the Debian package; .ci/run installs it): a token typed into the box is kept in the
// browser and "Try it out" sends it, so an authorised call answers 200; the published description is unchanged.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const BROWSER = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
const T = suite('e2e: Swagger UI at /docs in Chromium');
// Without Chromium (a developer machine) the test is reported as skipped; CI installs it, so there it must run.
if (!BROWSER && process.env.CI) throw new Error('Chromium not found (set CHROMIUM_PATH); .ci/run installs the Debian package');
const test = BROWSER ? T : T.skip;

let repo: TempRepo;
let server: RunningServer;
let profile: string;
let ctx: BrowserContext;
T.before(async () => {
  if (!BROWSER) return;
  repo = makeRepo('svc-docs-');
  server = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  ctx = await chromium.launchPersistentContext(profile, {
    executablePath: BROWSER, headless: true, viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
});
T.after(async () => {
  await ctx?.close();
  await server?.stop();
  repo?.cleanup();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

// Open GET /tasks/counts, press "Try it out" and "Execute"; the status code Swagger UI shows.
async function tryCounts(page: Page): Promise<string> {
  const op = page.locator('#operations-tasks-count_tasks');
  await op.locator('.opblock-summary').click();
  await op.locator('button.try-out__btn').click();
  await op.locator('button.execute').click();
  const status = op.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 20_000 });
  return (await status.innerText()).trim().split(/\s+/)[0]!;
}

test('a token saved in the box is kept in the browser and makes "Try it out" answer 200; without it 401', async () => {
  const page = await ctx.newPage();
  await page.goto(`${server.url}/docs`);
  await page.locator('#operations-tasks-count_tasks').waitFor({ timeout: 30_000 });
  assert.match(await page.locator('#svc-token-state').innerText(), /no token/);
  assert.is(await tryCounts(page), '401', 'no token: the API refuses');

  await page.fill('#svc-token', server.token);
  await page.click('#svc-token-save');
  assert.match(await page.locator('#svc-token-state').innerText(), /token saved in this browser/);
  await page.goto(`${server.url}/docs`);
  await page.locator('#operations-tasks-count_tasks').waitFor({ timeout: 30_000 });
  assert.match(await page.locator('#svc-token-state').innerText(), new RegExp(`…${server.token.slice(-4)}\\)`), 'kept across a new load of the page');
  assert.is(await tryCounts(page), '200', 'the saved token is sent as a bearer header');
  // For people to look at: the answer under "Try it out", and the token box at the top of the page.
  await page.locator('#operations-tasks-count_tasks .live-responses-table').screenshot({ path: join(tmpdir(), 'svc-docs-try-it-out.png') });
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(tmpdir(), 'svc-docs-token-box.png') });

  await page.click('#svc-token-forget');
  assert.match(await page.locator('#svc-token-state').innerText(), /no token/);
  assert.is(await page.evaluate('localStorage.getItem("svc.docs.token")'), null);
  const doc = await (await fetch(`${server.url}/openapi.json`)).json() as { components?: { securitySchemes?: unknown }; security?: unknown };
  assert.is(doc.components?.securitySchemes, undefined, 'the published description declares no security schemes');
  assert.is(doc.security, undefined);
  await page.close();
});

T.run();
