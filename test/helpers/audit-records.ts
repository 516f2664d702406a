// Generated audit records for tests of the walk: mostly what the writer writes, sometimes any JSON shape,
// strings with every character JSON escapes, numbers JSON.stringify rewrites, keys in any order.
// A seeded generator, so a failure names a record that can be made again.
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}
export type R = ReturnType<typeof rng>;

const PIECES = ['a', 'Z', '0', ' ', 'task', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', '\u2028', 'é', 'ß', '日本', '\u{1F600}', '\ud800', '\udc00', '\ufffd', 'k', '"prev":"', '}'];
export const str = (r: R) => Array.from({ length: r.int(6) }, () => r.pick(PIECES)).join('');
const NUMBERS = [0, -0, 1, -1, 2, 42, 1e21, 1e-7, 0.1, -3.5, 123456789.125, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 5e-324, 1.7976931348623157e308];
const KEYS = ['a', 'b', 'A', 'from', 'to', 'version', '10', '2', '', 'é', '\u{1F600}', 'toJSON', '__proto__', 'z_1', 'z-1'];

export function value(r: R, depth: number): unknown {
  const k = r.int(depth > 2 ? 4 : 7);
  if (k === 0) return str(r);
  if (k === 1) return r.pick(NUMBERS);
  if (k === 2) return r.pick([true, false, null]);
  if (k === 3) return r.int(1000) - 500;
  if (k === 4) return Array.from({ length: r.int(4) }, () => value(r, depth + 1));
  return object(r, depth + 1);
}

// Own keys set as JSON.parse sets them (`__proto__` included), in a random order.
export function object(r: R, depth: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = r.int(5); i > 0; i--) Object.defineProperty(o, r.next() < 0.5 ? r.pick(KEYS) : str(r), { value: value(r, depth), enumerable: true, writable: true, configurable: true });
  return o;
}

// Mostly what the writer writes; sometimes a field missing, of another type, or one more.
export function record(r: R): Record<string, unknown> {
  const rec: Record<string, unknown> = {
    seq: r.next() < 0.9 ? 1 + r.int(1e6) : r.pick([1.5, 0, -3, 1e21, '7', null]), ts: new Date(1.7e12 + r.int(1e10)).toISOString(),
    actor: r.next() < 0.8 ? `backend-${r.int(1e4)}` : str(r), action: r.next() < 0.8 ? 'task.claim' : str(r),
    resource_type: r.next() < 0.9 ? 'task' : str(r), resource_id: r.pick([null, `t${r.int(100)}`, str(r)]),
    details: r.next() < 0.3 ? { from: 'open', to: 'claimed', version: 2 } : object(r, 0),
    prev: r.next() < 0.9 ? r.int(1e9).toString(16).padStart(64, '0') : str(r), hmac: 'f'.repeat(64),
  };
  const shape = r.int(12);
  if (shape === 0) delete rec.actor;
  if (shape === 1) rec.resource_id = r.int(10);
  if (shape === 2) rec.extra = value(r, 0);
  if (shape === 3) rec.details = Array.from({ length: 2 }, () => value(r, 1));
  if (shape === 4) rec.action = r.pick(NUMBERS);
  return rec;
}

// The same record as other JSON texts: with \u escapes, with spaces, lone surrogates raw (JSON.parse takes them).
export const variants = (line: string) => [
  line, line.replaceAll('k', '\\u006b'), line.replaceAll('":', '": ').replaceAll(',"', ', "'),
  line.replace(/\\u(d[89a-f][0-9a-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
];
