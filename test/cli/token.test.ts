import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo } from '../helpers/repo.ts';
import { runCli, startServer } from '../helpers/server.ts';

const tokens = suite('svc token');

tokens('create prints a token once, stores only its hash, and the running server accepts it until revoked', async () => {
  const repo = makeRepo();
  const srv = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  try {
    const made = await runCli(['token', 'create', '--role', 'viewer', '--json'], { cwd: repo.dir });
    assert.is(made.code, 0, made.stderr);
    const { token, id } = JSON.parse(made.stdout) as { token: string; id: string };
    const stored = readFileSync(join(repo.dir, '.sdd', 'secrets', 'tokens.json'), 'utf8');
    assert.not.ok(stored.includes(token), 'plaintext never stored');
    assert.is(statSync(join(repo.dir, '.sdd', 'secrets', 'tokens.json')).mode & 0o777, 0o600);
    const get = (t: string) => fetch(`${srv.url}/tasks?limit=1`, { headers: { authorization: `Bearer ${t}` } });
    assert.is((await get(token)).status, 200);
    const post = await fetch(`${srv.url}/tasks`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"title":"x"}' });
    assert.is(post.status, 403, 'a viewer cannot create');
    const list = await runCli(['token', 'list', '--json'], { cwd: repo.dir });
    assert.ok((JSON.parse(list.stdout) as { id: string }[]).some((r) => r.id === id));
    assert.is((await runCli(['token', 'revoke', id], { cwd: repo.dir })).code, 0);
    assert.is((await get(token)).status, 401, 'revoked tokens are refused at once');
    // Issue and revoke were queued for the server's chain; after its drain the chain verifies and names both.
    await new Promise((r) => setTimeout(r, 1500));
    const v = await runCli(['audit', 'verify'], { cwd: repo.dir });
    assert.is(v.code, 0, v.stdout + v.stderr);
    const audit = readFileSync(join(repo.dir, '.sdd', 'audit', `${new Date().toISOString().slice(0, 10)}.jsonl`), 'utf8');
    assert.ok(audit.includes('"token.issue"') && audit.includes('"token.revoke"'));
  } finally { await srv.kill(); repo.cleanup(); }
});

tokens('bad role is a usage error (exit 2); unknown id to revoke exits 3 naming the tokens file', async () => {
  const repo = makeRepo();
  try {
    assert.is((await runCli(['token', 'create', '--role', 'root'], { cwd: repo.dir })).code, 2);
    const r = await runCli(['token', 'revoke', 'tok_nope'], { cwd: repo.dir });
    assert.is(r.code, 3);
    assert.ok(r.stderr.includes('tok_nope'));
    assert.ok(r.stderr.includes('.sdd/secrets/tokens.json'), r.stderr);
  } finally { repo.cleanup(); }
});

tokens.run();
