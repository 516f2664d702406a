// Signature schemes of the inbound webhooks (pure: crypto only, the time is passed in).
import { isUtf8 } from 'node:buffer';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';

/** How far a signed timestamp may be from the server's clock, either way. */
export const MAX_SKEW_S = 300;

/** Lower-case hex HMAC-SHA256 of the given parts, concatenated as bytes. */
export function hmacHex(secret: string, ...parts: (string | Buffer)[]): string {
  const h = createHmac('sha256', secret);
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/** Lower-case hex SHA-256 of the bytes. */
export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Constant-time equality that never throws: both sides are hashed first, so a wrong length costs the
 * same as a wrong byte and the length of the secret does not leak.
 */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

const HEX64 = /^[0-9a-f]{64}$/;

/** A received `<prefix><64 hex>` value against the expected hex digest: trimmed, any case, exact length. */
export function digestMatches(received: string | undefined, expectedHex: string, prefix = ''): boolean {
  if (!received) return false;
  const v = received.trim().toLowerCase();
  if (!v.startsWith(prefix)) return false;
  const hex = v.slice(prefix.length);
  return HEX64.test(hex) && safeEqual(hex, expectedHex);
}

/**
 * `sha256=<hex>` over the raw body (the trackers' X-Hub-Signature-256). @octokit/webhooks-methods checks
 * UTF-8 bodies (it takes a string, which is byte-exact for valid UTF-8); other bytes are checked here.
 */
export async function verifySha256Prefixed(secret: string, raw: Buffer, header: string | undefined): Promise<boolean> {
  if (!secret || !header) return false;
  const sig = header.trim().toLowerCase();
  if (!/^sha256=[0-9a-f]{64}$/.test(sig)) return false;
  if (raw.length > 0 && isUtf8(raw)) {
    // octokit throws on an empty payload or signature; both are ruled out above, but a throw is still a no.
    return octokitVerify(secret, raw.toString('utf8'), sig).catch(() => false);
  }
  return digestMatches(sig, hmacHex(secret, raw), 'sha256=');
}

/** A raw-hex HMAC-SHA256 header (tracker_d, tracker_e). */
export function verifyRawHex(secret: string, raw: Buffer, header: string | undefined): boolean {
  return !!secret && digestMatches(header, hmacHex(secret, raw));
}

/** A header that must equal the shared secret itself (tracker_c). */
export function verifyToken(secret: string, header: string | undefined): boolean {
  return !!secret && header !== undefined && safeEqual(header, secret);
}

/** Seconds of a signed timestamp header, or null when it is not an integer (surrounding blanks and a sign allowed). */
export function parseTimestamp(header: string | undefined, opts: { signed?: boolean } = {}): number | null {
  const v = header?.trim() ?? '';
  const re = opts.signed === false ? /^\d{1,15}$/ : /^[+-]?\d{1,15}$/;
  return re.test(v) ? Number(v) : null;
}

/** True when `ts` (seconds) is within MAX_SKEW_S of `nowMs`, in the past or the future. */
export const fresh = (ts: number, nowMs: number): boolean => Math.abs(nowMs / 1000 - ts) <= MAX_SKEW_S;

/** Why a chat delivery is refused, or null when its signature holds (`v0=` HMAC of `v0:<ts>:<body>`). */
export function checkChatSignature(secret: string, raw: Buffer, tsHeader: string | undefined, sigHeader: string | undefined, nowMs: number): string | null {
  const ts = parseTimestamp(tsHeader);
  if (ts === null) return 'missing or malformed timestamp';
  if (!fresh(ts, nowMs)) return 'stale or future-dated timestamp';
  // The timestamp is signed exactly as sent (trimmed of nothing), as the platform computes it.
  const expected = hmacHex(secret, `v0:${tsHeader}:`, raw);
  return digestMatches(sigHeader, expected, 'v0=') ? null : 'signature mismatch';
}

/** Why a `/webhook` delivery is refused, or null: `sha256=` HMAC of `<ts>.<body>`, ts all digits and fresh. */
export function checkTimestampedSignature(secret: string, raw: Buffer, tsHeader: string | undefined, sigHeader: string | undefined, nowMs: number): string | null {
  const ts = parseTimestamp(tsHeader, { signed: false });
  if (ts === null) return 'Missing or malformed X-Timestamp header';
  if (!fresh(ts, nowMs)) return 'Stale or future-dated X-Timestamp header';
  if (!sigHeader) return 'Missing X-Signature-256 header';
  return digestMatches(sigHeader, hmacHex(secret, `${tsHeader!.trim()}.`, raw), 'sha256=') ? null : 'Invalid webhook signature';
}
