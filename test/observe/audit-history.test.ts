// `svc audit verify` against refs/sdd/state: a record rewritten with the stolen key (chain recomputed, so
// the links and HMACs all verify) is found and named with the commit that first held it; a clone without
// the key checks the links it can, says the HMACs need .sdd/secrets/audit.key, and exits 1.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { auditHmac, loadAuditKey, SegmentHistory, verifyAudit, type AuditRecord } from '../../src/observe/index.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeRepo, makeTempDir, type TempRepo } from '../helpers/repo.ts';
import { runCli, startServer } from '../helpers/server.ts';

const P = suite('audit history (pure)');
const b = (s: string) => Buffer.from(s);

P('committed records must stay byte for byte; new ones may follow; torn tails are not records', () => {
  const h = new SegmentHistory('d.jsonl');
  h.add('c1', b('{"seq":1}\n{"seq":2}\n'));
  h.add('c2', b('{"seq":1}\n{"seq":2}\n{"seq":3}\n{"se'));
  h.add('c3', b('{"seq":1}\n{"seq":2}\n{"seq":3}\n{"seq":4}\n'));
  assert.is(h.finish(b('{"seq":1}\n{"seq":2}\n{"seq":3}\n{"seq":4}\n{"seq":5}\n')), null);
  const rewritten = new SegmentHistory('d.jsonl');
  rewritten.add('c1', b('{"seq":1}\n{"seq":2}\n'));
  rewritten.add('c2', b('{"seq":1}\n{"seq":2}\n{"seq":3}\n'));
  assert.equal(rewritten.finish(b('{"seq":1}\n{"seq":2}\n{"seq":3,"x":1}\n')), {
    file: 'd.jsonl', line: 3, seq: 3, commit: 'c2', foundIn: 'working file', detail: 'the record differs from the committed one',
  });
  const inHistory = new SegmentHistory('d.jsonl');
  inHistory.add('c1', b('{"seq":1}\n'));
  inHistory.add('c2', b('{"seq":9}\n{"seq":2}\n'));
  assert.equal([inHistory.broken?.line, inHistory.broken?.commit, inHistory.broken?.foundIn], [1, 'c1', 'c2']);
  const cut = new SegmentHistory('d.jsonl');
  cut.add('c1', b('{"seq":1}\n{"seq":2}\n'));
  assert.equal([cut.finish(b('{"seq":1}\n'))?.line, cut.finish(null)?.detail], [2, 'the record is missing']);
  const gone = new SegmentHistory('d.jsonl');
  gone.add('c1', b('{"seq":1}\n'));
  assert.is(gone.finish(null)?.detail, 'the segment file is missing');
});

const S = suite('svc audit verify over a real history');
let repo: TempRepo;
S.before.each(() => { repo = makeRepo('svc-audit-history-'); });
S.after.each(() => repo.cleanup());

// A board with audit records committed into refs/sdd/state, the server stopped.
async function board(): Promise<void> {
  const s = await startServer(repo.dir, { args: ['--no-orchestrator'] });
  try {
    for (let i = 0; i < 3; i++) {
      const t = (await s.api('POST', '/tasks', { title: `task ${i}` })).body;
      await s.api('POST', `/tasks/${t.id}/claim`);
      await s.settled();
    }
  } finally {
    await s.stop();
  }
}

S('a record rewritten with the key, chain recomputed: the chain verifies, the history check names the record and its commit', async () => {
  await board();
  const layout = sddLayout(repo.dir);
  const key = await loadAuditKey(layout, { create: false });
  const [seg] = readdirSync(layout.auditDir).filter((n) => n.endsWith('.jsonl'));
  const file = join(layout.auditDir, seg!);
  const recs = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as AuditRecord);
  // The attacker of the review: change record 2's actor, then re-sign it and every record after it.
  recs[1]!.actor = 'someone-else';
  let prev = recs[0]!.hmac;
  for (const r of recs.slice(1)) {
    r.prev = prev;
    const { hmac: _h, ...unsigned } = r;
    r.hmac = auditHmac(key, unsigned);
    prev = r.hmac;
  }
  writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  assert.ok((await verifyAudit(layout)).ok, 'the recomputed chain itself verifies');
  const firstHeld = repo.git('log', '--reverse', '--format=%H', 'refs/sdd/state', '--', `.sdd/audit/${seg}`).split('\n')[0]!;
  const r = await runCli(['audit', 'verify'], { cwd: repo.dir });
  assert.is(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, new RegExp(`rewritten record: \\.sdd/audit/${seg!.replace('.', '\\.')} line 2 \\(seq 2\\): the record differs from the committed one in the working file; first committed in ${firstHeld.slice(0, 12)}`));
  const json = JSON.parse((await runCli(['audit', 'verify', '--json'], { cwd: repo.dir })).stdout);
  assert.equal([json.ok, json.history.firstRewritten.line, json.history.firstRewritten.commit], [true, 2, firstHeld]);
});

S('untouched: chain and history verify (exit 0)', async () => {
  await board();
  const r = await runCli(['audit', 'verify'], { cwd: repo.dir });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /audit chain ok \(links and HMACs\)/);
  assert.match(r.stdout, /audit history ok: \d+ committed version/);
});

S('a clone without .sdd/secrets/audit.key checks the links from refs/sdd/state and says the HMACs need the key (exit 1)', async () => {
  await board();
  const clone = makeTempDir('svc-audit-clone-');
  try {
    repo.git('clone', '-q', repo.dir, clone.dir);
    repo.git('-C', clone.dir, 'fetch', '-q', 'origin', 'refs/sdd/state:refs/sdd/state');
    const r = await runCli(['audit', 'verify'], { cwd: clone.dir });
    assert.is(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /audit chain ok \(links only\): \d+ records in 1 segment\(s\) of the (refs\/sdd\/state|working files)/, "svc restores the committed segments in a clone, or reads them from the ref");
    assert.match(r.stderr, /HMACs not checked: audit key .*audit\.key: missing\. The hash links \(seq, prev\) of \d+ record\(s\) were checked; each record's HMAC needs \.sdd\/secrets\/audit\.key/);
    assert.not.match(r.stderr, /at .*\.ts:\d+/, 'words, not a stack trace');
  } finally {
    clone.cleanup();
  }
});

P.run();
S.run();
