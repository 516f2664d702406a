// Claim receipts (pure): canonical hash, signatures, the verdict on each receipt, and a journal's verification.
import nacl from 'tweetnacl';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENESIS, entryHash, forkRecord, judge, signReceipt, verifyJournal, type ClaimReceipt, type JournalLine } from '../../src/cluster/index.ts';

const keys = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(7));
const other = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(9));
const pub = Buffer.from(keys.publicKey).toString('base64');
const NODE = 'aaaaaaaaaaaa';
const keyOf = (id: string) => (id === NODE ? pub : null);
const receipt = (prev: string, n: number, sk = keys.secretKey, node = NODE): ClaimReceipt =>
  signReceipt({ schema_version: 1, kind: 'claim', node_id: node, task_id: `task-${n}`, claimer_id: 'backend-1', ts: '2026-03-01T00:00:00.000Z', prev_entry_hash: prev }, sk);
const chainOf = (rs: { entry_hash: string }[]) => ({ head: rs.length ? rs[rs.length - 1]!.entry_hash : GENESIS, index: new Map(rs.map((r, i) => [r.entry_hash, i])) });

test('entry_hash is sha256 over RFC 8785 JSON without signature and entry_hash: key order and those two fields do not matter', () => {
  const a = { kind: 'claim', node_id: NODE, prev_entry_hash: GENESIS, n: 1.5, nested: { b: 1, a: [2, 'x'] } };
  const b = { nested: { a: [2, 'x'], b: 1 }, n: 1.5, prev_entry_hash: GENESIS, node_id: NODE, kind: 'claim', signature: 'zzz', entry_hash: 'sha256:00' };
  assert.is(entryHash(a), entryHash(b));
  assert.match(entryHash(a), /^sha256:[0-9a-f]{64}$/);
  assert.is.not(entryHash(a), entryHash({ ...a, n: 2 }));
});

test('verdicts: applied on the head, duplicate, forked on another link, rejected for tampering, a bad signature or an unknown node', () => {
  const r1 = receipt(GENESIS, 1);
  const r2 = receipt(r1.entry_hash, 2);
  assert.equal(judge(r1, chainOf([]), keyOf), { entry_hash: r1.entry_hash, status: 'applied', reason: null });
  assert.is(judge(r2, chainOf([r1]), keyOf).status, 'applied');
  assert.is(judge(r1, chainOf([r1, r2]), keyOf).status, 'duplicate');
  const stale = receipt(r1.entry_hash, 3);
  const forked = judge(stale, chainOf([r1, r2]), keyOf);
  assert.equal([forked.status, forked.reason], ['forked', `prev_entry_hash ${r1.entry_hash} does not extend local head ${r2.entry_hash}`]);
  assert.equal(judge({ ...r1, task_id: 'task-999' }, chainOf([]), keyOf), { entry_hash: r1.entry_hash, status: 'rejected', reason: 'entry_hash mismatch (tampered payload)' });
  const forgedSig = receipt(GENESIS, 1, other.secretKey);
  assert.equal(judge(forgedSig, chainOf([]), keyOf).reason, `signature does not verify with the key of node '${NODE}'`);
  const flipped = { ...r1, signature: Buffer.from(Buffer.from(r1.signature, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64') };
  assert.is(judge(flipped, chainOf([]), keyOf).status, 'rejected');
  assert.equal(judge(receipt(GENESIS, 1, keys.secretKey, 'bbbbbbbbbbbb'), chainOf([]), keyOf).reason, "no public key registered for node 'bbbbbbbbbbbb'");
  const fork = signReceipt({ kind: 'fork', node_id: NODE, prev_entry_hash: GENESIS }, keys.secretKey);
  assert.is(judge(fork, chainOf([]), keyOf).status, 'rejected', 'nobody pushes fork records');
});

test('journal verification: intact, forked with the fork record\'s position, broken at the first bad hash, link or signature', () => {
  const r1 = receipt(GENESIS, 1), r2 = receipt(r1.entry_hash, 2);
  const lines = [r1, r2] as unknown as JournalLine[];
  assert.equal(verifyJournal(lines, keyOf), { state: 'intact', entries: 2, head: r2.entry_hash, forks: 0, unverified: 0 });
  assert.equal(verifyJournal([], keyOf).state, 'intact');
  const fork = forkRecord(receipt(r1.entry_hash, 3), chainOf([r1, r2]), '2026-03-01T00:00:01.000Z');
  assert.equal([fork.fork_divergence_index, fork.prev_entry_hash, fork.fork_local_head, fork.signature], [1, r2.entry_hash, r2.entry_hash, null]);
  const withFork = verifyJournal([...lines, fork], keyOf);
  assert.equal([withFork.state, withFork.forks, withFork.firstFork, withFork.head], ['forked', 1, 2, fork.entry_hash]);
  assert.equal(verifyJournal([r2, r1] as unknown as JournalLine[], keyOf).broken, { index: 0, reason: `prev_entry_hash ${r1.entry_hash} does not link to ${GENESIS}` });
  assert.equal(verifyJournal([r1, { ...r2, task_id: 'x' }] as unknown as JournalLine[], keyOf).broken?.index, 1);
  const badSig = { ...r2, signature: receipt(r1.entry_hash, 2, other.secretKey).signature };
  assert.match(verifyJournal([r1, badSig] as unknown as JournalLine[], keyOf).broken!.reason, 'signature does not verify');
  const unknownNode = verifyJournal(lines, () => null);
  assert.equal([unknownNode.state, unknownNode.unverified], ['intact', 2]);
});

test.run();
