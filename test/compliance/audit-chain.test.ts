import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyChainCached } from '../../src/compliance/audit-chain.ts';
import { runCheck } from '../../src/compliance/index.ts';
import { verifyAudit } from '../../src/observe/index.ts';
import { sddLayout } from '../../src/store/index.ts';
import { days, FIXTURE_KEY, writeAudit } from '../../bench/lib/compliance-tree.ts';
import { runCli } from '../helpers/server.ts';
import { fixtureRepo } from './tree.ts';

const asOf = Date.parse('2026-01-15T00:00:00Z');
const chain = async (dir: string) => {
  const out = await runCheck(sddLayout(dir), { framework: 'soc2', flags: {}, failOn: 'none', asOf });
  return out.results.find((r) => r.policy_id === 'soc2-cc7-02')!;
};

test('check remembers verified segments, and a segment edited since (same size) is walked again and fails', async () => {
  const repo = fixtureRepo('board');
  try {
    const first = await chain(repo.dir);
    assert.is(first.inputs.audit_hmac_chain, true);
    assert.is(first.evidence_status, 'evidenced');
    assert.ok(existsSync(join(repo.dir, '.sdd/runtime/compliance/audit-verified.json')));
    assert.is((await chain(repo.dir)).inputs.audit_hmac_chain, true);
    // Forge one letter of the oldest segment without changing its size.
    const seg = join(repo.dir, '.sdd/audit/2024-12-01.jsonl');
    writeFileSync(seg, readFileSync(seg, 'utf8').replace('"to":"claimed"', '"to":"clXimed"'));
    const forged = await chain(repo.dir);
    assert.is(forged.inputs.audit_hmac_chain, false);
    assert.not.ok(forged.passed);
    assert.match(forged.control_statement, 'audit_hmac_chain=false');
  } finally {
    repo.cleanup();
  }
});

test('with a state history the audit evidence names its commit, and log integrity holds', async () => {
  const repo = fixtureRepo('board');
  try {
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['update-ref', 'refs/sdd/state', 'HEAD'], { cwd: repo.dir });
    const head = execFileSync('git', ['rev-parse', 'refs/sdd/state'], { cwd: repo.dir, encoding: 'utf8' }).trim();
    const out = await runCheck(sddLayout(repo.dir), { framework: 'soc2', flags: {}, failOn: 'none', asOf });
    const r = out.results.find((x) => x.policy_id === 'soc2-cc7-04')!;
    assert.is(r.passed, true);
    assert.ok(r.evidence_refs.includes(`refs/sdd/state@${head}`), r.evidence_refs.join(' '));
  } finally {
    repo.cleanup();
  }
});

test('without .sdd/secrets/audit.key the chain is not observed: the input falls back to an assertion', async () => {
  const repo = fixtureRepo('board');
  try {
    const { rmSync } = await import('node:fs');
    rmSync(join(repo.dir, '.sdd/secrets/audit.key'));
    const r = await chain(repo.dir);
    assert.is(r.evidence_status, 'operator_asserted');
    assert.equal(r.asserted_inputs, ['audit_hmac_chain']);
  } finally {
    repo.cleanup();
  }
});

test('on worker threads, the first and the remembered walk give what svc audit verify gives, forged or not', async () => {
  const repo = fixtureRepo('board');
  try {
    const layout = sddLayout(repo.dir);
    const check = () => verifyChainCached(layout, { threads: 2 });
    const verify = () => verifyAudit(layout, { threads: 0 });
    assert.equal(await check(), await verify());
    assert.equal(await check(), await verify());
    const seg = join(repo.dir, '.sdd/audit/2025-06-01.jsonl');
    writeFileSync(seg, readFileSync(seg, 'utf8').replace('"to":"claimed"', '"to":"clXimed"'));
    const forged = await check();
    assert.equal([forged.ok, forged.firstBroken?.file, forged.firstBroken?.reason], [false, '2025-06-01.jsonl', 'hmac mismatch']);
    assert.equal(forged, await verify());
    rmSync(join(repo.dir, '.sdd/runtime/compliance'), { recursive: true, force: true });
    assert.equal(await check(), forged);
  } finally {
    repo.cleanup();
  }
});

// 60 day segments of 800 records (48,000, ~17 MB): big enough for two threads; one record in the
// 31st segment forged in one byte, in each field in turn.
test('a record forged in the middle of a big log is named, first check or remembered, on one thread or two, and the CLI fails', async () => {
  const repo = fixtureRepo('empty');
  try {
    const layout = sddLayout(repo.dir);
    const names = days('2025-03-01', 60);
    assert.is(writeAudit(layout.sdd, FIXTURE_KEY, names, 800), 48_000);
    const cold = (threads: number) => {
      rmSync(join(layout.runtime, 'compliance'), { recursive: true, force: true });
      return verifyChainCached(layout, { threads });
    };
    assert.equal([(await cold(0)).records, (await cold(2)).ok], [48_000, true]);
    const seg = join(layout.auditDir, `${names[30]}.jsonl`);
    const intact = readFileSync(seg, 'utf8');
    const lines = intact.split('\n');
    // Line 400 of the segment is seq 30 * 800 + 400; each forgery keeps the line's size and shape.
    const forgeries: [string, (l: string) => string][] = [
      ['details', (l) => l.replace('"to":"claimed"', '"to":"clXimed"')],
      ['ts', (l) => l.replace(/"ts":"2025-(\d\d)/, (_, m: string) => `"ts":"2024-${m}`)],
      ['actor', (l) => l.replace('backend-1a2b', 'backend-1a2c')],
      ['hmac', (l) => l.replace(/"hmac":"(.)/, (_, c: string) => `"hmac":"${c === 'a' ? 'b' : 'a'}`)],
    ];
    for (const [field, forge] of forgeries) {
      writeFileSync(seg, lines.map((l, i) => (i === 399 ? forge(l) : l)).join('\n'));
      for (const threads of [0, 2]) {
        const r = await cold(threads);
        assert.equal([r.ok, r.records, r.firstBroken?.file, r.firstBroken?.line, r.firstBroken?.seq, r.firstBroken?.reason], [false, 30 * 800 + 399, `${names[30]}.jsonl`, 400, 30 * 800 + 400, 'hmac mismatch'], `${field} forged, ${threads} threads`);
        assert.equal(r, await verifyAudit(layout, { threads: 0 }));
      }
    }
    // Remembered from an intact walk, then forged (same size): walked again and found.
    writeFileSync(seg, intact);
    assert.is((await cold(2)).ok, true);
    writeFileSync(seg, intact.replace('"to":"claimed"', '"to":"clXimed"'));
    const again = await verifyChainCached(layout, { threads: 2 });
    assert.equal([again.ok, again.firstBroken?.file, again.firstBroken?.line], [false, `${names[30]}.jsonl`, 1]);
    const cli = await runCli(['compliance', 'check', '--framework', 'soc2', '--fail-on', 'high', '--as-of', '2025-05-01', '--json-output'], { cwd: repo.dir });
    assert.is(cli.code, 1, cli.stderr);
    const cc72 = (JSON.parse(cli.stdout) as { results: { policy_id: string; passed: boolean; inputs: Record<string, unknown> }[] }).results.find((x) => x.policy_id === 'soc2-cc7-02')!;
    assert.equal([cc72.passed, cc72.inputs.audit_hmac_chain], [false, false]);
  } finally {
    repo.cleanup();
  }
});

test.run();
