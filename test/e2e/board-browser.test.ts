// The live board at /board in real headless Chromium (the Debian package; .ci/run installs it): a token pasted
// into the page, a task created over HTTP appearing within a second, moving as the fake agent claims and
// completes it, its live log; actions for people; screenshots at 20 and 10,000 tasks for people to look at.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { fake, writeFakeAgentConfig } from './fake-config.ts';

const BROWSER = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
/** Screenshots land here (SVC_SCREENSHOT_DIR to keep them somewhere else). */
const SHOTS = process.env.SVC_SCREENSHOT_DIR ?? join(tmpdir(), 'svc-board-shots');
const T = suite('e2e: the live board at /board in Chromium');
if (!BROWSER && process.env.CI) throw new Error('Chromium not found (set CHROMIUM_PATH); .ci/run installs the Debian package');
const test = BROWSER ? T : T.skip;

let live: { repo: TempRepo; server: RunningServer } | undefined;
let still: { repo: TempRepo; server: RunningServer } | undefined;
let profile: string;
let ctx: BrowserContext;
T.before(async () => {
  if (!BROWSER) return;
  mkdirSync(SHOTS, { recursive: true });
  const a = makeRepo('svc-board-live-');
  writeFakeAgentConfig(a.dir, 'observe:\n  events:\n    ping_ms: 1000\n');
  const b = makeRepo('svc-board-still-');
  mkdirSync(join(b.dir, '.sdd'), { recursive: true });
  writeFileSync(join(b.dir, '.sdd', 'config.yaml'), 'tenants:\n  default_max_tasks: 20000\n');
  const [sa, sb] = await Promise.all([startServer(a.dir, { args: ['--max-agents', '2'] }), startServer(b.dir, { args: ['--no-orchestrator'] })]);
  live = { repo: a, server: sa };
  still = { repo: b, server: sb };
  profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  ctx = await chromium.launchPersistentContext(profile, { executablePath: BROWSER, headless: true, viewport: { width: 1600, height: 900 }, args: FLAGS });
});
T.after(async () => {
  await ctx?.close();
  await live?.server.stop();
  await still?.server.stop();
  live?.repo.cleanup();
  still?.repo.cleanup();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const card = (page: Page, id: string) => page.locator(`.card[data-id="${id}"]`);
const inColumn = (page: Page, status: string, id: string) => page.locator(`.column[data-status="${status}"] .card[data-id="${id}"]`);

// Open the board and paste the token (the page keeps it in localStorage).
async function signIn(page: Page, s: RunningServer): Promise<void> {
  await page.goto(`${s.url}/board`);
  await page.locator('#signin').waitFor({ state: 'visible', timeout: 10_000 });
  await page.fill('#token', s.token);
  await page.click('#token-save');
  await page.locator('#live.on').waitFor({ timeout: 10_000 });
}

test('a pasted token opens the board; a task created over HTTP shows within 1 s, moves as the fake agent works, and its log is live', async () => {
  const s = live!.server;
  const page = await ctx.newPage();
  await signIn(page, s);
  assert.match(await page.locator('#who').innerText(), /admin · pasted token/);
  const description = fake('log lines=1 text=first line', 'sleep ms=2500', 'log lines=1 text=second line', 'sleep ms=1200', 'complete summary=done by the fake agent');
  const created = await s.api('POST', '/tasks', { title: 'Watch me on the board', description });
  assert.is(created.status, 201);
  const id = created.body.id as string;
  await card(page, id).waitFor({ timeout: 1000 });

  await inColumn(page, 'in_progress', id).waitFor({ timeout: 15_000 });
  await card(page, id).click();
  await page.locator('#detail').waitFor({ state: 'visible' });
  assert.is(await page.locator('#d-title').innerText(), 'Watch me on the board');
  await page.locator('#d-log', { hasText: 'first line' }).waitFor({ timeout: 10_000 });
  assert.not.match(await page.locator('#d-log').innerText(), /second line/, 'the line the agent writes later is not there yet');
  await page.locator('#d-log', { hasText: 'second line' }).waitFor({ timeout: 10_000 });

  await inColumn(page, 'closed', id).waitFor({ timeout: 20_000 });
  assert.is(await page.locator('#d-fields dd[data-field="status"]').innerText(), 'closed', 'the open panel follows its task');
  await page.locator('#d-history li', { hasText: 'closed' }).first().waitFor({ timeout: 10_000 });
  // Changes within one group commit share it: at least the first state seen and closed are there.
  assert.ok(await page.locator('#d-history li').count() >= 2, 'history from refs/sdd/state lists the task\'s commits');
  await page.screenshot({ path: join(SHOTS, 'board-live-detail.png') });
  await page.close();
});

// 20 tasks across the columns: open, claimed, in progress (with progress), done, blocked, failed, cancelled.
async function seedTwenty(s: RunningServer): Promise<string[]> {
  const titles = ['Add a health check', 'Fix flaky login test', 'Rate limit the export', 'Document the board', 'Upgrade TypeScript', 'Cache the dashboard',
    'Split the billing module', 'Trace agent runs', 'Migrate CI to two cores', 'Review SBOM licenses', 'Speed up task search', 'Retry webhook deliveries',
    'Remove the legacy flat list', 'Add SLO alerts', 'Harden the sandbox', 'Profile the committer', 'Translate the README', 'Tidy the CLI help',
    'Audit exports weekly', 'Show costs per role'];
  const roles = ['backend', 'frontend', 'qa', 'security'];
  const batch = await s.api('POST', '/tasks/batch', { tasks: titles.map((title, i) => ({ title, role: roles[i % 4], priority: i % 5 })) });
  assert.is(batch.status, 201, JSON.stringify(batch.body));
  const ids = (batch.body.created as { id: string }[]).map((t) => t.id);
  const post = (i: number, verb: string, body: unknown = {}) => s.api('POST', `/tasks/${ids[i]}/${verb}`, body);
  for (const i of [0, 1, 2, 3, 4, 5, 6, 7]) await post(i, 'claim', { claimed_by_session: `${roles[i % 4]}-0000000${i}` });
  for (const [i, pct] of [[0, 20], [1, 65], [2, 90]] as const) await post(i, 'progress', { message: 'working', percent: pct });
  for (const i of [3, 4]) await post(i, 'complete', { result_summary: 'done' });
  await post(5, 'block', { reason: 'needs a decision' });
  await post(6, 'fail', { reason: 'tests fail' });
  await post(19, 'cancel', { reason: 'not needed' });
  return ids;
}

test('actions for people: prioritize, block, unblock, close after a manual merge, cancel; screenshots at 20 and 10,000 tasks', async () => {
  const s = still!.server;
  const ids = await seedTwenty(s);
  const page = await ctx.newPage();
  await signIn(page, s);
  await page.locator('.card').first().waitFor();
  assert.is(await page.locator('.column[data-status="in_progress"] .count').innerText(), '3');
  await page.screenshot({ path: join(SHOTS, 'board-20-tasks.png') });

  const target = ids[11]!;
  await card(page, target).click();
  await page.click('#d-actions button[data-action="prioritize"]');
  await page.locator('#d-fields dd[data-field="priority"]', { hasText: '0' }).waitFor();
  assert.is((await s.api('GET', `/tasks/${target}`)).body.priority, 0);
  await page.fill('#d-reason', 'waiting for the design review');
  await page.click('#d-actions button[data-action="block"]');
  await inColumn(page, 'blocked', target).waitFor();
  assert.is((await s.api('GET', `/tasks/${target}`)).body.status_reason, 'waiting for the design review');
  await page.click('#d-actions button[data-action="unblock"]');
  await inColumn(page, 'open', target).waitFor();
  await page.click('#d-actions button[data-action="block"]');
  await inColumn(page, 'blocked', target).waitFor();
  await page.click('#d-actions button[data-action="close-merged"]');
  await inColumn(page, 'closed', target).waitFor();
  assert.is((await s.api('GET', `/tasks/${target}`)).body.status, 'closed');
  await card(page, ids[12]!).click();
  await page.click('#d-actions button[data-action="cancel"]');
  await inColumn(page, 'cancelled', ids[12]!).waitFor();
  await page.click('#d-close');

  // 10,000 tasks: the columns are virtualised, so the page holds only the cards in view.
  for (let n = 0; n < 9980; n += 1000) {
    const tasks = Array.from({ length: Math.min(1000, 9980 - n) }, (_, i) => ({ title: `Generated task ${n + i + 1}: refactor module ${(n + i) % 97}`, role: ['backend', 'frontend', 'qa'][(n + i) % 3], priority: (n + i) % 7 }));
    assert.is((await s.api('POST', '/tasks/batch', { tasks })).status, 201);
  }
  await page.locator('#stats', { hasText: '10000 tasks' }).waitFor({ timeout: 20_000 });
  const rendered = await page.locator('.card').count();
  assert.ok(rendered < 400, `only cards in view are in the page (${rendered})`);
  await page.locator('.column[data-status="open"] .col-body').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.locator('.column[data-status="open"] .card', { hasText: 'Generated task' }).last().waitFor();
  await page.locator('.column[data-status="open"] .col-body').evaluate((el) => { el.scrollTop = 0; });
  await page.screenshot({ path: join(SHOTS, 'board-10000-tasks.png') });
  await page.close();
});

T.run();
