// Containment suite: a fake agent in its sandbox tries every attack of the security review (read the
// server's secrets, plant git config and hooks, rewrite the audit log, move refs, reach other tasks'
// routes), and a table calls every route of /openapi.json as a task token of another task, as another
// tenant and as a viewer. Everything is refused, and nothing of the victim's on disk or in git changes.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeOwner } from '../../src/agents/index.ts';
import { addTenant, createToken, revokeToken } from '../../src/auth/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { verifyAudit } from '../../src/observe/index.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { fake, writeFakeAgentConfig } from '../e2e/fake-config.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { rawRequest, report, waitFor, walk } from './lib.ts';

const test = suite('containment');
let repo: TempRepo;
let s: RunningServer | undefined;
let marks: string;
test.before.each(() => {
  repo = makeRepo('svc-contain-');
  marks = mkdtempSync(join(tmpdir(), 'svc-contain-marks-'));
});
test.after.each(async () => {
  await s?.kill();
  s = undefined;
  repo.cleanup();
  rmSync(marks, { recursive: true, force: true });
});

const digest = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
// Every file under a folder with its hash: what "nothing changed" compares.
const tree = (dir: string) => (existsSync(dir) ? walk(dir).sort().map((f) => `${f} ${digest(join(dir, f))}`).join('\n') : '');

test('a sandboxed agent cannot read secrets, plant git config or hooks, rewrite the audit log, move refs or leave its task', async () => {
  writeFakeAgentConfig(repo.dir);
  const layout = sddLayout(repo.dir);
  const serverSecrets = { SERVICE_WEBHOOK_SECRET: 'hook-secret-value-1', DATABASE_PASSWORD: 'db-secret-value-2' };
  s = await startServer(repo.dir, { env: serverSecrets });
  await addTenant(layout, 'acme');
  const victim = (await s.api('POST', '/tasks', { title: 'acme work' }, { 'x-tenant-id': 'acme' })).body;
  const blocked = (await s.api('POST', `/tasks/${victim.id}/block?tenant=acme`, { reason: 'kept for the test' })).body;
  assert.is(blocked.status, 'blocked');
  const fsmonitor = join(marks, 'fsmonitor.sh');
  writeFileSync(fsmonitor, `#!/bin/sh\ntouch '${join(marks, 'fsmonitor-ran')}'\n`);
  chmodSync(fsmonitor, 0o755);
  const git = join(repo.dir, '.git');
  const keys = () => tree(layout.secrets).split('\n').filter((l) => !l.startsWith('tokens.json ')).join('\n');
  const before = { secrets: keys(), config: digest(join(git, 'config')), hooks: tree(join(git, 'hooks')), main: repo.git('rev-parse', 'main') };
  const http = (method: string, path: string, body?: unknown, token?: string) =>
    `http method=${method} path=${path}${body ? ` body=${JSON.stringify(body)}` : ''}${token ? ` token=${token}` : ''}`;
  // Other tokens an agent might come by: a revoked one (an earlier session's), and one of another task.
  const revoked = await createToken(layout, { role: 'agent', taskId: victim.id, tenant: 'acme' }, systemClock);
  await revokeToken(layout, revoked.record.id, systemClock);
  const otherTask = (await createToken(layout, { role: 'agent', taskId: 'another-task', tenant: 'default' }, systemClock)).token;
  const tries = [
    'sh cmd=cat ../../secrets/admin.token ../../secrets/tokens.json',
    `sh cmd=cat ${layout.auditKey}`,
    `sh cmd=ls ${layout.tasksDir} ${layout.auditDir} ${layout.worktrees}`,
    `sh cmd=for f in ${layout.auditDir}/*.jsonl; do echo forged >> $f; done; ls ${layout.auditDir}`,
    `sh cmd=git config core.fsmonitor ${fsmonitor}`,
    `sh cmd=git config core.hooksPath ${marks}`,
    `sh cmd=echo touch ${join(marks, 'hook-ran')} > ${join(git, 'hooks', 'post-merge')}`,
    'sh cmd=git update-ref refs/heads/main HEAD',
    'sh cmd=git update-ref refs/sdd/state HEAD',
    `sh cmd=kill -0 ${s.pid}`,
    'sh cmd=env',
    http('GET', '/tasks'),
    http('POST', '/tasks', { title: 'planted' }),
    http('POST', '/tasks/self-create', { title: 'planted', parent_task_id: victim.id }),
    http('POST', '/tasks/claim-batch', { task_ids: [victim.id] }),
    http('GET', '/tasks/next/backend'),
    http('POST', `/tasks/${victim.id}/unblock`, {}),
    http('POST', '/drain'),
    http('GET', '/metrics'),
    http('POST', `/tasks/${victim.id}/unblock?tenant=acme`, {}, revoked.token),
    http('GET', '/tasks/next/backend', undefined, otherTask),
    'edit file=out/result.txt content=honest work',
    'commit message=honest work',
  ];
  const attacker = (await s.api('POST', '/tasks', { title: 'attacker', description: fake(...tries, 'complete summary=done') })).body;
  // The session is sandboxed, and says so in GET /agents and in its log.
  let sid = '';
  await waitFor(async () => {
    const e = ((await s!.api('GET', '/agents')).body as any[]).find((x) => x.task_id === attacker.id && !x.synthetic);
    if (e) { sid = e.session_id; assert.is(e.sandbox, 'bwrap'); }
    return Boolean(e);
  }, 20_000);
  assert.ok(sid, s.output().slice(-2000));
  assert.ok(await waitFor(async () => (await s!.api('GET', `/tasks/${attacker.id}`)).body.status === 'closed', 40_000), s.output().slice(-3000));
  const log = readFileSync(layout.log(sid), 'utf8');
  if (process.env.DEBUG_LOG) console.log(log);
  assert.match(log, /\(sandbox: bubblewrap\)/);
  assert.is(statSync(layout.log(sid)).mode & 0o777, 0o600);
  for (const t of tries.filter((x) => x.startsWith('sh ') && !x.endsWith('cmd=env'))) {
    const cmd = t.slice('sh cmd='.length);
    assert.match(log, new RegExp(`sh-exit [1-9]\\d*: ${cmd.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), `refused: ${cmd}\n${log}`);
  }
  for (const t of tries.filter((x) => x.startsWith('http '))) {
    const [, method = '', path = ''] = /method=(\S+) path=(\S+)/.exec(t)!;
    const status = t.includes(revoked.token) ? 401 : 403;
    assert.match(log, new RegExp(`http ${method} ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} -> ${status}`), `${status} for ${method} ${path}\n${log}`);
  }
  for (const secret of [...Object.values(serverSecrets), s.token]) assert.not.ok(log.includes(secret), 'no server secret in the agent environment');
  // Nothing of the server's changed, and the honest work was merged.
  await s.settled();
  assert.is(keys(), before.secrets);
  // The token is revoked when the session retires, a moment after the task closes.
  // Left out: the hand-made tokens, and a session of the victim task, which the orchestrator (150 ms ticks) may
  // dispatch between the victim's creation and its block on a loaded machine.
  const issued = () => (JSON.parse(readFileSync(layout.tokens, 'utf8')).tokens as any[]).filter((x) => x.id !== revoked.record.id && x.task_id !== 'another-task' && x.task_id !== victim.id);
  await waitFor(async () => issued().every((x) => x.revoked_at), 40_000); // the session retires on a tick after its 2 s kill grace: slow when the suite loads the machine
  assert.ok(issued().every((x) => x.role === 'agent' && x.task_id === attacker.id && x.revoked_at), `only the session's own token, revoked at its end: ${JSON.stringify(issued().map((x) => [x.role, x.task_id === attacker.id, x.revoked_at ?? null, x.created_at ?? null]))}`);
  assert.is(digest(join(git, 'config')), before.config);
  assert.is(tree(join(git, 'hooks')), before.hooks);
  assert.not.ok(existsSync(join(marks, 'fsmonitor-ran')));
  assert.not.ok(existsSync(join(marks, 'hook-ran')));
  assert.is(repo.git('show', 'main:out/result.txt'), 'honest work');
  assert.is(repo.git('merge-base', '--is-ancestor', before.main, 'main'), '', 'main only moved forward, by the merge');
  assert.not.match(repo.git('log', '-1', '--format=%s', 'refs/sdd/state'), /honest work/);
  const audit = await verifyAudit(layout);
  assert.ok(audit.ok, JSON.stringify(audit.firstBroken));
  for (const f of readdirSync(layout.auditDir)) assert.not.match(readFileSync(join(layout.auditDir, f), 'utf8'), /forged/);
  const now = (await s.api('GET', `/tasks/${victim.id}?tenant=acme`)).body;
  assert.equal([now.status, now.version], [blocked.status, blocked.version], 'the other tenant\'s task is untouched');
  assert.is((await s.api('GET', '/tasks?limit=10')).body.total, 1, 'no task planted');
  report('containment-agent', { attacks: tries.length - 2, refused: tries.length - 2, sandbox: 'bwrap' });
});

// Bodies that pass validation, so a refusal comes from access and tenancy, never from a 422.
const BODIES: Record<string, (t: string) => unknown> = {
  create_task: () => ({ title: 'x' }), create_tasks_batch: () => ({ tasks: [{ title: 'x' }] }),
  self_create_task: (t) => ({ title: 'x', parent_task_id: t }), claim_tasks_batch: (t) => ({ task_ids: [t] }),
  complete_task: () => ({ result_summary: 'x' }), report_progress: () => ({ message: 'x' }),
  partial_merge: () => ({ files: ['README.md'] }), patch_task: () => ({ priority: 1 }),
};

test('every route × {task token of another task, another tenant, viewer}: refused, nothing of the task changes', async () => {
  s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  const layout = sddLayout(repo.dir);
  await addTenant(layout, 'acme');
  const sid = 'backend-0000aaaa';
  const t = (await s.api('POST', '/tasks', { title: 'the victim task', role: 'backend' })).body;
  assert.is((await s.api('POST', `/tasks/${t.id}/claim?claimed_by_session=${sid}`)).status, 200);
  assert.is((await s.api('POST', `/tasks/${t.id}/progress`, { message: 'working' })).status, 200);
  await writeOwner(layout, { session_id: sid, task_id: t.id, tenant: 'default' });
  writeFileSync(layout.log(sid), 'the victim session log\n');
  const other = (await s.api('POST', '/tasks', { title: 'another task', role: 'frontend' })).body;
  const tok = {
    'task token of another task': (await createToken(layout, { role: 'agent', taskId: other.id, tenant: 'default' }, systemClock)).token,
    'another tenant': (await createToken(layout, { role: 'operator', tenant: 'acme' }, systemClock)).token,
    viewer: (await createToken(layout, { role: 'viewer' }, systemClock)).token,
  };
  await s.settled();
  const before = { t: (await s.api('GET', `/tasks/${t.id}`)).body, other: (await s.api('GET', `/tasks/${other.id}`)).body, main: repo.git('rev-parse', 'main') };
  const spec = (await s.api('GET', '/openapi.json')).body;
  const ops = Object.entries<any>(spec.paths).flatMap(([path, byMethod]) => Object.entries<any>(byMethod).map(([m, op]) => ({ method: m.toUpperCase(), path, op })))
    .filter((o) => o.op['x-svc-access'] !== 'public' && o.op['x-svc-access'] !== 'hmac');
  assert.ok(ops.length >= 30, `${ops.length} operations`);
  const wrong: string[] = [];
  let calls = 0;
  for (const { method, path, op } of ops) {
    const url = path.replace('{task_id}', t.id).replace('{session_id}', sid).replace('{role}', 'backend');
    const make = BODIES[op.operationId];
    const body = method === 'GET' ? undefined : JSON.stringify(make ? make(t.id) : {});
    for (const [who, token] of Object.entries(tok)) {
      calls++;
      const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) };
      const r = await rawRequest(s.port, { method, path: url, headers, ...(body ? { body } : {}), timeoutMs: 5000 });
      // The caller names the ids itself; what must never come back is the victim's content.
      const ok = expected(who, op, path, r.status, r.text, [t.title, 'the victim session log']);
      if (!ok) wrong.push(`${who}: ${method} ${url} → ${r.status} ${r.text.slice(0, 160)}`);
    }
  }
  assert.equal(wrong, [], wrong.join('\n'));
  // Nothing of the victim changed, on the board, on disk or in git.
  await s.settled();
  assert.equal((await s.api('GET', `/tasks/${t.id}`)).body, before.t);
  assert.equal((await s.api('GET', `/tasks/${other.id}`)).body, before.other);
  assert.is(repo.git('rev-parse', 'main'), before.main);
  assert.is((await s.api('GET', '/tasks?limit=10')).body.total, 2, 'no task created in the victim tenant');
  report('containment-routes', { operations: ops.length, principals: Object.keys(tok).length, calls });
});

// What each principal may get from one route (see the test name); `secrets` must never appear in its answer.
function expected(who: string, op: any, path: string, status: number, text: string, secrets: string[]): boolean {
  const access = op['x-svc-access'];
  const onVictim = path.includes('{task_id}') || path.includes('{session_id}');
  if (status >= 500 || status === 0) return false;
  // /mcp without an MCP session answers 400; in a session each tool is contained per call (test/mcp/http.test.ts).
  if (path === '/mcp') return status === 400 && !secrets.some((x) => text.includes(x));
  if (who === 'task token of another task') return status === 403;
  if (who === 'viewer') {
    // A viewer may fetch the board over /state.git (test/state/git-http.test.ts); these bare calls lack git's headers.
    if (path.startsWith('/state.git')) return status !== 401 && !secrets.some((x) => text.includes(x));
    if (access !== 'read' || path === '/metrics') return status === 403;
    return status < 400 || status === 404;
  }
  // Another tenant: the victim's resources do not exist for it; anything else answers about its own tenant only.
  if (access === 'admin' || path === '/metrics') return status === 403;
  if (onVictim) return status === 404;
  return !secrets.some((x) => text.includes(x));
}

test.run();
