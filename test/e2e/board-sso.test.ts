// The board with a single sign-on session (the svc_session cookie, no token pasted) in real Chromium: an
// operator acts on a task with the cookie alone; a viewer sees the board read-only.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sessionFor, startSsoWorld, type SsoWorld } from '../helpers/sso.ts';

const BROWSER = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
const SHOTS = process.env.SVC_SCREENSHOT_DIR ?? join(tmpdir(), 'svc-board-shots');
const T = suite('e2e: the board with a single sign-on session');
if (!BROWSER && process.env.CI) throw new Error('Chromium not found (set CHROMIUM_PATH); .ci/run installs the Debian package');
const test = BROWSER ? T : T.skip;

let w: SsoWorld;
let profile: string;
let ctx: BrowserContext;
T.before(async () => {
  if (!BROWSER) return;
  mkdirSync(SHOTS, { recursive: true });
  w = await startSsoWorld({ saml: false });
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  ctx = await chromium.launchPersistentContext(profile, { executablePath: BROWSER, headless: true, viewport: { width: 1280, height: 800 }, args: FLAGS });
});
T.after(async () => {
  await ctx?.close();
  await w?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('bob (operator, signed in) prioritizes and blocks with his cookie; carol (viewer) reads only', async () => {
  const t = (await w.svc.api('POST', '/tasks', { title: 'Needs a person', priority: 5 })).body;
  await ctx.addCookies([{ name: 'svc_session', value: await sessionFor(w, 'bob'), url: w.url, httpOnly: true, sameSite: 'Lax' }]);
  const page = await ctx.newPage();
  await page.goto(`${w.url}/board`);
  await page.locator('#live.on').waitFor({ timeout: 10_000 });
  assert.match(await page.locator('#who').innerText(), /operator · signed in/);
  assert.ok(await page.locator('#token-form').isHidden(), 'no token box for a signed-in person');
  await page.locator(`.card[data-id="${t.id}"]`).click();
  await page.click('#d-actions button[data-action="prioritize"]');
  await page.locator('#d-fields dd[data-field="priority"]', { hasText: '0' }).waitFor();
  await page.fill('#d-reason', 'waiting for legal');
  await page.click('#d-actions button[data-action="block"]');
  await page.locator(`.column[data-status="blocked"] .card[data-id="${t.id}"]`).waitFor();
  const after = (await w.svc.api('GET', `/tasks/${t.id}`)).body;
  assert.equal([after.priority, after.status, after.status_reason], [0, 'blocked', 'waiting for legal']);
  await page.screenshot({ path: join(SHOTS, 'board-signed-in.png') });
  await page.close();

  await ctx.clearCookies();
  await ctx.addCookies([{ name: 'svc_session', value: await sessionFor(w, 'carol'), url: w.url, httpOnly: true, sameSite: 'Lax' }]);
  const viewer = await ctx.newPage();
  await viewer.goto(`${w.url}/board`);
  await viewer.locator('#live.on').waitFor({ timeout: 10_000 });
  assert.match(await viewer.locator('#who').innerText(), /viewer · signed in/);
  await viewer.locator(`.card[data-id="${t.id}"]`).click();
  assert.ok(await viewer.locator('#d-actions button[data-action="unblock"]').isDisabled(), 'a viewer cannot act');
  assert.match(await viewer.locator('#d-action-note').innerText(), /read only/);
  await viewer.close();
});

T.run();
