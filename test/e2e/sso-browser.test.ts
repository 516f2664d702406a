// The sign-in and device pages in real headless Chromium against the in-process OpenID provider:
// sign in, land on the signed-in page, approve a CLI code, /auth/me shows the user, sign out.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startSsoWorld, type SsoWorld } from '../helpers/sso.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
/** Screenshots land here (SVC_SCREENSHOT_DIR to keep them). */
const SHOTS = process.env.SVC_SCREENSHOT_DIR ?? join(tmpdir(), 'svc-sso-shots');

const test = suite('sso in Chromium');
let w: SsoWorld;
let profile: string;
let browser: BrowserContext;
test.before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: .ci/run installs chromium (apt-get install -y chromium)`);
  w = await startSsoWorld();
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 900, height: 640 } });
});
test.after(async () => {
  await browser?.close();
  await w?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('alice signs in through the IdP pages, lands signed in, approves a CLI code, /auth/me shows her, signs out', async () => {
  const page = await browser.newPage();
  await page.goto(`${w.url}/auth/device`);
  await page.screenshot({ path: join(SHOTS, 'sign-in.png') });
  assert.ok(await page.getByText('Sign in with SAML').isVisible(), 'both providers offered');
  await page.getByText('Sign in with OIDC').click();
  await page.locator('input[name=login]').fill('alice');
  await page.locator('input[name=password]').fill('any');
  await page.locator('button[type=submit]').click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${w.url}/auth/device`);
  const who = await page.locator('#who').innerText();
  assert.match(who, 'Alice Admin');
  assert.match(who, 'alice@example.test');
  assert.match(who, 'admin');
  assert.match(await page.content(), `svc login --server ${w.url}`);
  await page.screenshot({ path: join(SHOTS, 'signed-in.png') });

  const dc = await (await fetch(`${w.url}/auth/cli/device`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
  await page.locator('input[name=user_code]').fill(dc.user_code.toLowerCase());
  await page.getByRole('button', { name: 'Authorize' }).click();
  await page.getByText('Device authorized').waitFor();
  await page.screenshot({ path: join(SHOTS, 'device-authorized.png') });
  const poll = await (await fetch(`${w.url}/auth/cli/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_code: dc.device_code }) })).json();
  assert.is(poll.status, 'complete');
  assert.ok(poll.access_token);

  await page.goto(`${w.url}/auth/me`);
  const me = JSON.parse(await page.locator('body').innerText());
  assert.is(me.email, 'alice@example.test');
  assert.is(me.role, 'admin');

  await page.goto(`${w.url}/auth/device`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('Sign in with OIDC').waitFor();
  const after = await page.goto(`${w.url}/auth/me`);
  assert.is(after?.status(), 401, 'signed out: the cookie no longer works');
});

test('the device page with a code in its link carries it through sign-in', async () => {
  await browser.clearCookies(); // another person at the IdP too
  const page = await browser.newPage();
  await page.goto(`${w.url}/auth/device?user_code=bcdf-ghjk`);
  await page.getByText('Sign in with OIDC').click();
  await page.locator('input[name=login]').fill('bob');
  await page.locator('input[name=password]').fill('any');
  await page.locator('button[type=submit]').click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(/\/auth\/device\?user_code=BCDF-GHJK$/);
  assert.is(await page.locator('input[name=user_code]').inputValue(), 'BCDF-GHJK');
  assert.match(await page.locator('#who').innerText(), 'operator');
});

test.run();
