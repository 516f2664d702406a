import { existsSync, readFileSync, statSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createToken, ensureAdminToken, hashToken, listTokens, parseDuration, readAdminTokenFile, revokeToken, tokenState, TASK_TOKEN_KEEP_MS, type TokenRecord,
} from '../../src/auth/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { HttpError } from '../../src/lib/http-error.ts';
import { sddLayout, type SddLayout } from '../../src/store/layout.ts';
import { makeTempDir } from '../helpers/repo.ts';

let tmp: { dir: string; cleanup(): void };
let layout: SddLayout;
const T = suite('tokens file');
T.before.each(() => { tmp = makeTempDir('svc-tokens-'); layout = sddLayout(tmp.dir); });
T.after.each(() => tmp.cleanup());

const mode = (p: string) => statSync(p).mode & 0o777;

T('create → plaintext once, only its SHA-256 on disk, file 0600 in a 0700 dir', async () => {
  const clock = manualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const { token, record } = await createToken(layout, { role: 'operator', tenant: 'acme', label: 'ci', expiresIn: '30d' }, clock);
  assert.match(token, /^svc_[A-Za-z0-9_-]{43}$/);
  assert.is(record.hash, hashToken(token));
  assert.match(record.id, /^tok_[0-9a-f]{12}$/);
  assert.is(record.expires_at, '2026-03-31T00:00:00.000Z');
  assert.is(record.created_at, '2026-03-01T00:00:00.000Z');
  const text = readFileSync(layout.tokens, 'utf8');
  assert.not.ok(text.includes(token), 'plaintext never stored');
  assert.ok(text.endsWith('}\n'));
  const file = JSON.parse(text);
  assert.is(file.version, 1);
  assert.equal(file.tokens, [record]);
  assert.is(mode(layout.tokens), 0o600);
  assert.is(mode(layout.secrets), 0o700);
});

T('list and revoke (idempotent; unknown id → 404)', async () => {
  const clock = manualClock();
  const a = await createToken(layout, { role: 'agent', taskId: 'task1' }, clock);
  const b = await createToken(layout, { role: 'viewer' }, clock);
  assert.equal((await listTokens(layout)).map((t) => t.id), [a.record.id, b.record.id]);
  assert.is(a.record.task_id, 'task1');
  clock.advance(5000);
  const revoked = await revokeToken(layout, a.record.id, clock);
  assert.is(revoked.revoked_at, clock.iso());
  clock.advance(5000);
  assert.is((await revokeToken(layout, a.record.id, clock)).revoked_at, revoked.revoked_at);
  const err = await revokeToken(layout, 'tok_nope', clock).catch((e) => e);
  assert.instance(err, HttpError);
  assert.is(err.status, 404);
  assert.is((await listTokens(layout)).filter((t) => t.revoked_at).length, 1);
});

T('an agent session token is pruned a day after it ended; other tokens stay', async () => {
  const clock = manualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const run1 = await createToken(layout, { role: 'agent', taskId: 'task1', label: 'agent session s1' }, clock);
  const short = await createToken(layout, { role: 'agent', taskId: 'task2', expiresIn: '1h' }, clock);
  const human = await createToken(layout, { role: 'viewer' }, clock);
  await revokeToken(layout, run1.record.id, clock);
  await revokeToken(layout, human.record.id, clock);
  clock.advance(TASK_TOKEN_KEEP_MS - 1000);
  await createToken(layout, { role: 'agent', taskId: 'task3' }, clock);
  assert.is((await listTokens(layout)).length, 4, 'within a day every token is still listed');
  clock.advance(2000);
  const live = await createToken(layout, { role: 'agent', taskId: 'task4' }, clock);
  const ids = (await listTokens(layout)).map((t) => t.id);
  assert.not.ok(ids.includes(run1.record.id), 'the revoked session token went with the next write');
  assert.ok(ids.includes(short.record.id), 'expired an hour in: kept until a day after its expiry');
  assert.ok(ids.includes(human.record.id), 'a revoked token that is not task-scoped stays');
  assert.ok(ids.includes(live.record.id));
  clock.advance(3_600_000);
  await createToken(layout, { role: 'viewer' }, clock);
  assert.not.ok((await listTokens(layout)).some((t) => t.id === short.record.id), 'expired task token pruned a day after expiry');
});

T('concurrent creates all land (the file is updated under its lock)', async () => {
  const clock = manualClock();
  const made = await Promise.all(Array.from({ length: 12 }, () => createToken(layout, { role: 'viewer' }, clock)));
  const ids = (await listTokens(layout)).map((t) => t.id).sort();
  assert.equal(ids, made.map((m) => m.record.id).sort());
});

T('unknown role and bad durations are refused', async () => {
  const clock = manualClock();
  const e = await createToken(layout, { role: 'root' as never }, clock).catch((x: Error) => x);
  assert.match(String(e), /unknown role 'root'/);
  assert.not.ok(existsSync(layout.tokens));
  assert.is(parseDuration('30d'), 30 * 86_400_000);
  assert.is(parseDuration('12h'), 12 * 3_600_000);
  assert.is(parseDuration('45m'), 45 * 60_000);
  for (const bad of ['', '30', 'd', '1y', '-5m', '0d', '3.5h']) assert.throws(() => parseDuration(bad), /invalid duration/, bad);
});

T('token state: revoked beats expired; expiry is exclusive at the instant', () => {
  const rec: TokenRecord = { id: 'tok_x', hash: '0'.repeat(64), role: 'viewer', tenant: null, label: null, created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-02T00:00:00.000Z', revoked_at: null };
  const exp = Date.parse('2026-01-02T00:00:00.000Z');
  assert.is(tokenState(rec, exp - 1), 'active');
  assert.is(tokenState(rec, exp), 'expired');
  assert.is(tokenState({ ...rec, revoked_at: '2026-01-01T01:00:00.000Z' }, 0), 'revoked');
  assert.is(tokenState({ ...rec, expires_at: null }, 1e15), 'active');
});

T('ensureAdminToken creates admin.token (0600) only when no admin credential exists', async () => {
  const clock = manualClock();
  assert.equal(await ensureAdminToken(layout, clock, { envToken: 'from-env' }), { path: layout.adminToken, created: false });
  assert.not.ok(existsSync(layout.adminToken));
  const first = await ensureAdminToken(layout, clock);
  assert.equal(first, { path: layout.adminToken, created: true });
  assert.is(mode(layout.adminToken), 0o600);
  const token = await readAdminTokenFile(layout);
  assert.match(token ?? '', /^svc_/);
  assert.is((await ensureAdminToken(layout, clock)).created, false);
  assert.is(await readAdminTokenFile(layout), token, 'never overwritten');
});

T('an active admin token in tokens.json counts; a revoked one does not', async () => {
  const clock = manualClock();
  const { record } = await createToken(layout, { role: 'admin' }, clock);
  assert.is((await ensureAdminToken(layout, clock)).created, false);
  await revokeToken(layout, record.id, clock);
  assert.is((await ensureAdminToken(layout, clock)).created, true);
});

T.run();
