// The built-in tracker adapters, found by canonical or vendor name; signature and delivery id per adapter.
import { sha256Hex, verifyRawHex, verifySha256Prefixed, verifyToken } from '../signature.ts';
import { trackerA } from './tracker-a.ts';
import { trackerB } from './tracker-b.ts';
import { trackerC } from './tracker-c.ts';
import { trackerD } from './tracker-d.ts';
import { trackerE } from './tracker-e.ts';
import type { HeaderGet, TrackerAdapter } from './types.ts';

/** tracker_a…tracker_e, in order. */
export const TRACKERS: readonly TrackerAdapter[] = [trackerA, trackerB, trackerC, trackerD, trackerE];

/** More adapters (shipped outside the core) join the built-in ones here. */
export function trackerRegistry(extra: readonly TrackerAdapter[] = []) {
  const all = [...TRACKERS, ...extra];
  const byName = new Map<string, TrackerAdapter>();
  for (const a of all) {
    byName.set(a.name.toLowerCase(), a);
    byName.set(a.vendor.toLowerCase(), a);
  }
  return {
    all,
    /** The adapter a path segment names (canonical or vendor name, any case), or undefined. */
    find: (name: string): TrackerAdapter | undefined => byName.get(name.toLowerCase()),
  };
}
export type TrackerRegistry = ReturnType<typeof trackerRegistry>;

/** The first present header of `names`. */
export const firstHeader = (header: HeaderGet, names: readonly string[]): string | undefined =>
  names.map((n) => header(n)).find((v) => v !== undefined && v !== '');

/** True when the delivery carries the adapter's proof for `secret` over the exact bytes. */
export async function verifyDelivery(a: TrackerAdapter, secret: string, raw: Buffer, header: HeaderGet): Promise<boolean> {
  const sig = firstHeader(header, a.signatureHeaders);
  switch (a.scheme) {
    case 'sha256-prefixed': return verifySha256Prefixed(secret, raw, sig);
    case 'token': return verifyToken(secret, sig);
    case 'raw-hex': return verifyRawHex(secret, raw, sig);
  }
}

/** `<adapter>:<delivery header>`, or `<adapter>:<sha256 of the body>` when the header is absent. */
export function deliveryId(a: TrackerAdapter, raw: Buffer, header: HeaderGet): string {
  const given = firstHeader(header, a.deliveryHeaders)?.trim().slice(0, 200);
  return `${a.name}:${given || sha256Hex(raw)}`;
}
