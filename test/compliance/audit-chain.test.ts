import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyChainCached } from '../../src/compliance/audit-chain.ts';
import { runCheck } from '../../src/compliance/index.ts';
import { verifyAudit } from '../../src/observe/index.ts';
import { sddLayout } from '../../src/store/index.ts';
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

test.run();
