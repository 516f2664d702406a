// Claim receipts (pure): RFC 8785 entry hash, Ed25519 over the digest, the chain link, the verdict of one
// receipt against the local head and of a whole journal.
import { createHash } from 'node:crypto';
import canonicalizeCjs from 'canonicalize';
import nacl from 'tweetnacl';
import type { ClaimReceipt, GossipResult } from './schema.ts';

// canonicalize is CommonJS with an `export default` typing; at run time the default import is the function.
const canonicalize = canonicalizeCjs as unknown as (v: unknown) => string | undefined;

/** `prev_entry_hash` of the first entry. */
export const GENESIS = `sha256:${'0'.repeat(64)}`;

/** A line of the journal: a node's receipt as received, or a fork record the server wrote (unsigned). */
export type JournalLine = Record<string, unknown> & { kind: string; prev_entry_hash: string; entry_hash: string; signature: string | null };

/** `sha256:` + hex SHA-256 of the RFC 8785 JSON of the receipt without `signature` and `entry_hash`. */
export function entryHash(receipt: Record<string, unknown>): string {
  const { signature: _s, entry_hash: _e, ...body } = receipt;
  return `sha256:${createHash('sha256').update(canonicalize(body) ?? '').digest('hex')}`;
}

const digestOf = (hash: string): Uint8Array => Buffer.from(hash.slice('sha256:'.length), 'hex');

/** A receipt signed with an Ed25519 secret key (64 bytes, tweetnacl): what a node sends. */
export function signReceipt(body: Record<string, unknown>, secretKey: Uint8Array): ClaimReceipt {
  const entry_hash = entryHash(body);
  const signature = Buffer.from(nacl.sign.detached(digestOf(entry_hash), secretKey)).toString('base64');
  return { ...body, entry_hash, signature } as ClaimReceipt;
}

/** True when the signature is Ed25519 by `publicKey` (base64) over the 32 digest bytes of `entry_hash`. */
export function signatureValid(receipt: { entry_hash: string; signature: string | null }, publicKey: string): boolean {
  try {
    const key = Buffer.from(publicKey, 'base64');
    const sig = Buffer.from(receipt.signature ?? '', 'base64');
    return key.length === 32 && sig.length === 64 && nacl.sign.detached.verify(digestOf(receipt.entry_hash), sig, key);
  } catch {
    return false;
  }
}

/** What the journal knows: its head and the hashes (with their positions) it holds. */
export interface ChainState {
  head: string;
  index: ReadonlyMap<string, number>;
}

/**
 * The verdict on one received receipt, in this order: a hash that does not match the payload, a node with
 * no registered key, a bad signature → rejected; a hash already held → duplicate; a link to the head →
 * applied; any other link → forked (not merged).
 */
export function judge(r: ClaimReceipt, chain: ChainState, keyOf: (nodeId: string) => string | null): GossipResult {
  const verdict = (status: GossipResult['status'], reason: string | null): GossipResult => ({ entry_hash: r.entry_hash, status, reason });
  if (entryHash(r) !== r.entry_hash) return verdict('rejected', 'entry_hash mismatch (tampered payload)');
  if (r.kind === 'fork') return verdict('rejected', 'fork records are written by the server, never received');
  const key = keyOf(r.node_id);
  if (!key) return verdict('rejected', `no public key registered for node '${r.node_id}'`);
  if (!signatureValid(r, key)) return verdict('rejected', `signature does not verify with the key of node '${r.node_id}'`);
  if (chain.index.has(r.entry_hash)) return verdict('duplicate', null);
  if (r.prev_entry_hash === chain.head) return verdict('applied', null);
  return verdict('forked', `prev_entry_hash ${r.prev_entry_hash} does not extend local head ${chain.head}`);
}

/** The record the server appends when a receipt forks: which one, on top of which head, where the two chains part. */
export function forkRecord(r: ClaimReceipt, chain: ChainState, ts: string): JournalLine {
  const at = chain.index.get(r.prev_entry_hash);
  const body = {
    schema_version: 1, kind: 'fork', ts, fork_entry_hash: r.entry_hash, fork_node_id: r.node_id, fork_local_head: chain.head,
    fork_divergence_index: at === undefined ? 0 : at + 1, prev_entry_hash: chain.head,
  };
  return { ...body, entry_hash: entryHash(body), signature: null };
}

/** A journal walked from genesis: intact, broken at an entry (hash, link or signature), or intact with forks. */
export interface JournalVerdict {
  state: 'intact' | 'broken' | 'forked';
  entries: number;
  head: string;
  forks: number;
  /** Entries whose node is no longer registered: their signatures could not be checked. */
  unverified: number;
  /** The first broken entry (0-based) and why. */
  broken?: { index: number; reason: string };
  /** Position of the first fork record. */
  firstFork?: number;
}

/** Walk every line: each hash must match its payload and link to the one before, each node's signature must verify. */
export function verifyJournal(lines: readonly JournalLine[], keyOf: (nodeId: string) => string | null): JournalVerdict {
  let head = GENESIS, forks = 0, unverified = 0, firstFork: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const stop = (reason: string): JournalVerdict => ({ state: 'broken', entries: lines.length, head, forks, unverified, broken: { index: i, reason } });
    if (typeof l?.entry_hash !== 'string' || entryHash(l) !== l.entry_hash) return stop('entry_hash does not match the entry');
    if (l.prev_entry_hash !== head) return stop(`prev_entry_hash ${String(l.prev_entry_hash)} does not link to ${head}`);
    if (l.kind === 'fork') { forks++; firstFork ??= i; }
    else {
      const key = typeof l.node_id === 'string' ? keyOf(l.node_id) : null;
      if (!key) unverified++;
      else if (!signatureValid(l, key)) return stop(`signature does not verify with the key of node '${String(l.node_id)}'`);
    }
    head = l.entry_hash;
  }
  return { state: forks ? 'forked' : 'intact', entries: lines.length, head, forks, unverified, ...(firstFork === undefined ? {} : { firstFork }) };
}
