// Bad-input suite: every route of /openapi.json called with generated bad inputs; the answer is always a
// 4xx with a JSON `detail`, the server stays up, and nothing outside `.sdd` changes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { leftoverTemps, liftQuota, rawRequest, readTaskFiles, report, rounds, seeded, snapshotOutsideSdd } from './lib.ts';

/** A generated request and what it must get: a 4xx with a JSON detail, or (input that may be valid) no 5xx. */
interface Case { label: string; method: string; path: string; headers?: Record<string, string>; body?: Buffer | string; expect: '4xx' | 'no5xx' }

const GHOST = 'no-such-task-00000000';
const BAD_IDS = ['..%2F..%2Fetc', '..%2F..%2F..%2Fetc%2Fpasswd', '%00', 'abc%00def', 'x'.repeat(300), '..', '%2e%2e', '%2e%2e%2f%2e%2e',
  '%ff%fe', 'ABC', '%20', 'a%2Fb', '%5C..%5Cwindows', '%E2%80%AEtxt', '-leading', 'a'.repeat(65), '%25', "'%3B--", '%0d%0aX-Injected:1'];
const GARBAGE = ['{', '{"title":', 'nul', '[1,2', '{"a":1}}', '\u0000', "'single'", '{"a":NaN}', '{"a":1,}', '\ufeff{'];
const SKIP = new Set(['/docs']);
const JSON_CT = { 'content-type': 'application/json' };

const test = suite('bad-input');
let repo: TempRepo;
let s: RunningServer;
let spec: any;
const stats = { requests: 0, five_xx: 0, wrong: 0, routes: 0, passes: 0 };

test.before(async () => {
  repo = makeRepo('svc-bad-');
  liftQuota(repo.dir);
  // With their secrets set, the signed webhook routes judge the input (401 unsigned) instead of answering 503 unconfigured.
  s = await startServer(repo.dir, { args: ['--no-orchestrator'], env: { SERVICE_WEBHOOK_SECRET: 'bad-input-secret', SERVICE_HOOK_SECRET: 'bad-input-secret' } });
  spec = (await s.api('GET', '/openapi.json')).body;
});
test.after(async () => {
  await s.kill();
  repo.cleanup();
});

test('every route answers bad input with a 4xx and a JSON detail, stays up, and touches nothing outside .sdd', async () => {
  await s.api('POST', '/tasks', { title: 'a real task' });
  const before = snapshotOutsideSdd(repo.dir);
  const rnd = seeded();
  const target = rounds(2, 20);
  const failures: string[] = [];
  for (let pass = 0; pass < target; pass++) {
    for (const [path, ops] of Object.entries<any>(spec.paths)) {
      if (SKIP.has(path)) continue;
      for (const [method, op] of Object.entries<any>(ops)) {
        if (pass === 0) stats.routes++;
        const cases = casesFor(path, method.toUpperCase(), op, rnd, pass);
        await pool(cases, 8, async (c) => {
          const r = await rawRequest(s.port, { method: c.method, path: c.path, headers: { authorization: `Bearer ${s.token}`, ...c.headers }, body: c.body });
          stats.requests++;
          if (r.status >= 500) stats.five_xx++;
          const problem = judge(c, r);
          if (problem) { stats.wrong++; if (failures.length < 30) failures.push(`${c.method} ${c.path.slice(0, 120)} [${c.label}]: ${problem}`); }
        });
        const health = await s.api('GET', '/health');
        assert.is(health.status, 200, `server up after ${method} ${path}`);
      }
    }
    await s.api('POST', '/drain/cancel'); // POST /drain takes no input: calling it drains, undo that
    stats.passes++;
  }
  report('bad-input', stats);
  assert.equal(failures, [], 'every bad input answered 4xx with a JSON detail');
  assert.is(stats.five_xx, 0);
  assert.is(snapshotOutsideSdd(repo.dir), before, 'no file outside .sdd changed');
  assert.equal(readTaskFiles(repo.dir).broken, []);
  assert.equal(leftoverTemps(repo.dir), []);
});

// What is wrong with an answer, or '' when it is right.
function judge(c: Case, r: { status: number; json: any; text: string; error?: string }): string {
  if (r.status === 0) return `no answer (${r.error})`;
  if (r.status >= 500) return `status ${r.status} ${r.text.slice(0, 200)}`;
  // Node's HTTP parser answers an over-long request head itself (431, no body): still a clean refusal.
  if (r.status === 431 && c.label === 'url over 16 KiB') return '';
  if (c.expect === '4xx' && (r.status < 400 || r.status > 499)) return `status ${r.status}, expected 4xx: ${r.text.slice(0, 200)}`;
  if (r.status >= 400 && !(r.json && (typeof r.json.detail === 'string' || Array.isArray(r.json.detail)))) return `status ${r.status} without a JSON detail: ${r.text.slice(0, 200)}`;
  return '';
}

// Every generated case of one operation; later passes add random variations.
function casesFor(path: string, method: string, op: any, rnd: ReturnType<typeof seeded>, pass: number): Case[] {
  const params: any[] = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path').map((p) => p.name as string);
  const query = params.filter((p) => p.in === 'query');
  const bodySchema = resolve(op.requestBody?.content?.['application/json']?.schema);
  const fill = (v: string) => path.replace(/\{[^}]+\}/g, v);
  const base = fill(GHOST);
  const valid = '{}';
  const out: Case[] = [];
  const add = (label: string, p: string, o: Partial<Case> = {}) => out.push({ label, method, path: p, expect: '4xx', ...o });
  const hasInput = pathParams.length > 0 || query.length > 0 || bodySchema;
  // An operation without inputs (health, metrics, /drain …) only has to survive junk.
  if (!hasInput) {
    add('junk query', `${path}?a=1&a=2&%ff=%00`, { expect: 'no5xx' });
    add('junk body', path, { headers: JSON_CT, body: '{"a":', expect: 'no5xx' });
    add('wrong method', path, { method: 'DELETE' });
    return out;
  }
  if (pathParams.length) for (const bad of BAD_IDS) add(`bad id ${bad.slice(0, 20)}`, fill(bad), bodySchema ? { headers: JSON_CT, body: valid } : {});
  if (pathParams.length) add('url over 16 KiB', fill('a'.repeat(17_000)));
  add('wrong method', base, { method: 'DELETE' });
  for (const q of query) {
    const type = q.schema?.type;
    const wrong = type === 'integer' ? ['abc', '1.5', '-1', '99999999999999999999999', ''] : type === 'number' ? ['abc', '-5', '1e999'] : type === 'boolean' ? ['maybe'] : [];
    for (const w of wrong) add(`query ${q.name}=${w}`, `${base}?${q.name}=${encodeURIComponent(w)}`, { expect: pathParams.length || q.schema?.type ? '4xx' : 'no5xx' });
    const dup = type === 'integer' || type === 'number' ? '1' : 'x';
    add(`duplicate ${q.name}`, `${base}?${q.name}=${dup}&${q.name}=${dup}`, { expect: pathParams.length ? '4xx' : 'no5xx' });
    add(`long ${q.name}`, `${base}?${q.name}=${'q'.repeat(8000)}`, { expect: pathParams.length || type !== 'string' ? '4xx' : 'no5xx' });
  }
  // A stream of a session that has no log yet is legitimate (it waits for lines); a kill of an unknown
  // session is queued for the orchestrator (agents area, reported): only ids the store would reject.
  if (pathParams.length && !bodySchema && !path.startsWith('/agents/')) add('ghost id', base);
  if (bodySchema) bodyCases(bodySchema, base, add, rnd, pass);
  return out;
}

function bodyCases(schema: any, p: string, add: (label: string, p: string, o?: Partial<Case>) => void, rnd: ReturnType<typeof seeded>, pass: number): void {
  for (const g of GARBAGE) add(`garbage ${JSON.stringify(g)}`, p, { headers: JSON_CT, body: g });
  add('invalid utf-8', p, { headers: JSON_CT, body: Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) });
  add('deep arrays', p, { headers: JSON_CT, body: '['.repeat(50_000) });
  add('deep objects', p, { headers: JSON_CT, body: '{"a":'.repeat(2000) + '1' + '}'.repeat(2000) });
  add('body over 1 MiB', p, { headers: JSON_CT, body: JSON.stringify({ title: 'x'.repeat(1_100_000) }) });
  add('text/plain', p, { headers: { 'content-type': 'text/plain' }, body: '{"title":"x"}' });
  add('form', p, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'title=x' });
  add('multipart', p, { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x\r\n\r\n--x--' });
  add('no content-type', p, { body: '{"title":"x"}' });
  for (const v of ['null', '[]', '1', '"x"', 'true']) add(`body ${v}`, p, { headers: JSON_CT, body: v });
  const props: Record<string, any> = schema.properties ?? {};
  if ((schema.required ?? []).length) add('missing required', p, { headers: JSON_CT, body: '{}' });
  for (const [name, sub0] of Object.entries(props)) {
    const sub = resolve(sub0);
    add(`wrong type ${name}`, p, { headers: JSON_CT, body: JSON.stringify({ [name]: wrongValue(sub, pass ? rnd.int(0, 3) : 0) }) });
    if (sub.type === 'string') {
      const len = sub.maxLength !== undefined ? sub.maxLength + 1 + (pass ? rnd.int(0, 50) : 0) : 600_000;
      add(`oversized ${name}`, p, { headers: JSON_CT, body: JSON.stringify({ [name]: 's'.repeat(len) }) });
    }
  }
}

// A value of the wrong JSON type for a schema; `k` picks among the wrong ones.
function wrongValue(sub: any, k: number): unknown {
  const t = Array.isArray(sub.type) ? sub.type[0] : sub.type;
  const options: Record<string, unknown[]> = {
    string: [12345, { a: 1 }, ['x'], true], integer: ['x', 1.5, { a: 1 }, [1]], number: ['x', { a: 1 }, [1], false],
    boolean: ['x', 1, {}, []], array: ['x', { a: 1 }, 7, null], object: ['x', [1], 3, true],
  };
  const list = options[t as string] ?? [Symbol.for('x').toString(), 1, [], {}];
  return list[k % list.length];
}

function resolve(schema: any): any {
  if (!schema) return undefined;
  if (schema.$ref) return spec.components.schemas[String(schema.$ref).split('/').pop()!];
  return schema;
}

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => { while (queue.length) await fn(queue.shift()!); }));
}

test.run();
