// What an audit record's HMAC covers, computed fast enough to verify a year of records in a second or
// two: the RFC 8785 text of the record without `hmac` (one native JSON.stringify when the record has
// the shape the writer produces, the canonicalize package otherwise) and HMAC-SHA256 from two one-shot
// hashes over precomputed key pads (no Hmac object per record). Same bytes as before, by construction.
import { createHash, createHmac, hash } from 'node:crypto';
import canonicalizeCjs from 'canonicalize';
import { utf8Bound, writeUtf8 } from '../lib/utf8.ts';

// canonicalize is CommonJS with an `export default` typing; at run time the default import is the function.
const canonicalize = canonicalizeCjs as unknown as (v: unknown) => string | undefined;

/** `prev` of the first record of the chain. */
export const GENESIS_PREV = '0'.repeat(64);

type Rec = Record<string, unknown>;
// The signed fields, in RFC 8785 order (UTF-16 code unit order of the names).
const SIGNED = ['action', 'actor', 'details', 'prev', 'resource_id', 'resource_type', 'seq', 'ts'] as const;

/**
 * RFC 8785 JSON of `rec` without its `hmac` field: what the record's HMAC covers (after `prev`).
 * `plain`: the caller knows no string in `rec` needs an escape (see plainJsonText), so the top-level
 * strings are quoted as they are instead of going through JSON.stringify one by one.
 */
export function canonicalRecord(rec: object, plain = false): string {
  return canonicalParts(rec, plain, '').join('');
}

/**
 * `head` and then canonicalRecord's text, in pieces (its writer-shaped form: the record's own strings and
 * constant pieces, no concatenated copy), for a signer that writes them straight into its buffer.
 */
export function canonicalParts(rec: object, plain: boolean, head: string): string[] {
  const r = rec as Rec;
  if (writerShaped(r)) {
    // Keys in canonical order, every nested object already sorted: JSON.stringify writes each value's canonical text.
    if (plain) {
      return [head, '{"action":"', r.action as string, '","actor":"', r.actor as string, '","details":', JSON.stringify(r.details),
        ',"prev":"', r.prev as string, '","resource_id":', r.resource_id === null ? 'null' : `"${r.resource_id as string}"`,
        ',"resource_type":"', r.resource_type as string, '","seq":', String(r.seq), ',"ts":"', r.ts as string, '"}'];
    }
    const j = JSON.stringify;
    return [head, '{"action":', j(r.action), ',"actor":', j(r.actor), ',"details":', j(r.details), ',"prev":', j(r.prev),
      ',"resource_id":', j(r.resource_id), ',"resource_type":', j(r.resource_type), ',"seq":', j(r.seq), ',"ts":', j(r.ts), '}'];
  }
  const { hmac: _drop, ...rest } = r;
  return [head, canonicalize(rest) ?? ''];
}

/**
 * True when every string JSON.parse reads from `text` is written by JSON.stringify as itself in quotes:
 * the text has no escape at all (so no string holds a quote, a backslash or a control character, which
 * JSON.parse refuses raw) and no lone surrogate (which JSON.stringify would escape).
 */
export function plainJsonText(text: string): boolean {
  return text.indexOf('\\') < 0 && (text as string & { isWellFormed(): boolean }).isWellFormed();
}

// Exactly the signed fields (plus hmac), strings where the writer puts strings, details already canonical.
function writerShaped(r: Rec): boolean {
  let own = 0;
  for (const k in r) if (Object.hasOwn(r, k)) own++;
  if (own !== (Object.hasOwn(r, 'hmac') ? 9 : 8)) return false;
  for (const k of SIGNED) if (!Object.hasOwn(r, k)) return false;
  return typeof r.action === 'string' && typeof r.actor === 'string' && typeof r.resource_type === 'string'
    && typeof r.ts === 'string' && typeof r.prev === 'string' && (r.resource_id === null || typeof r.resource_id === 'string')
    && typeof r.seq === 'number' && Number.isFinite(r.seq) && canonicalShape(r.details, 0);
}

/**
 * True when JSON.stringify(v) is already v's RFC 8785 text: plain objects whose own keys are in code unit
 * order (so no integer-like key is moved ahead), finite numbers, no undefined, functions or toJSON to call.
 * Anything else (deep nesting included) goes to the canonicalize package, which decides as it always did.
 */
export function canonicalShape(v: unknown, depth: number): boolean {
  if (v === null) return true;
  switch (typeof v) {
    case 'string': case 'boolean': return true;
    case 'number': return Number.isFinite(v);
    case 'object': break;
    default: return false;
  }
  if (depth > 32) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!canonicalShape(v[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  const o = v as Rec;
  let prev: string | undefined;
  // for-in: the own keys in Object.keys order, with no key array per object (details of every audit record).
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    if ((prev !== undefined && !(prev < k)) || k === 'toJSON' || !canonicalShape(o[k], depth + 1)) return false;
    prev = k;
  }
  return true;
}

/** HMAC-SHA256(key, prev + canonical record), lowercase hex: the reference form, one Hmac per call. */
export function recordHmac(key: Uint8Array, rec: object): string {
  return createHmac('sha256', key).update((rec as Rec).prev + canonicalRecord(rec)).digest('hex');
}

const BLOCK = 64;

/**
 * A signer for many records with one key: HMAC-SHA256 (RFC 2104) as sha256(opad ‖ sha256(ipad ‖ msg))
 * with crypto.hash one-shots into a reused buffer. Equal to createHmac's digest for every key and message;
 * the message may come in pieces (written one after the other into the buffer: no joined copy).
 */
export function hmacSigner(key: Uint8Array): (msg: string | readonly string[]) => string {
  const k = key.length > BLOCK ? createHash('sha256').update(key).digest() : key;
  const outer = Buffer.alloc(BLOCK + 32);
  let inner = Buffer.alloc(BLOCK + 4096);
  for (let i = 0; i < BLOCK; i++) {
    inner[i] = (k[i] ?? 0) ^ 0x36;
    outer[i] = (k[i] ?? 0) ^ 0x5c;
  }
  return (msg) => {
    const parts = typeof msg === 'string' ? [msg] : msg;
    const max = utf8Bound(parts);
    if (max > inner.length - BLOCK) {
      const bigger = Buffer.alloc(BLOCK + max);
      inner.copy(bigger, 0, 0, BLOCK);
      inner = bigger;
    }
    const n = writeUtf8(inner, BLOCK, parts);
    // A latin1 ('binary') digest, one char per byte, written back as bytes is cheaper than a 'buffer' digest (no Buffer per call).
    outer.write(hash('sha256', inner.subarray(0, n), 'binary'), BLOCK, 'latin1');
    return hash('sha256', outer, 'hex');
  };
}

/** The HMAC of each record under one key, for verifying a chain: `sign(rec) === rec.hmac` when intact. */
export function recordSigner(key: Uint8Array): (rec: object, plain?: boolean) => string {
  const sign = hmacSigner(key);
  // `prev` as `prev + text` would have it, whatever it holds.
  return (rec, plain = false) => sign(canonicalParts(rec, plain, String((rec as Rec).prev)));
}
