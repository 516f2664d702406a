// Signed deliveries of the fixture payloads, as each tracker (or the chat platform) would send them.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT } from '../helpers/server.ts';

const DIR = join(PROJECT, 'fixtures', 'webhooks');
type Case = { adapter: string; file: string; headers: Record<string, string>; expect: { action: string; ticket: Record<string, unknown> } | null };
export const CASES: Case[] = JSON.parse(readFileSync(join(DIR, 'cases.json'), 'utf8')).cases;

/** The secret environment variable of each adapter in the tests' config.yaml. */
export const SECRETS: Record<string, [string, string]> = {
  tracker_a: ['JIRA_SECRET', 'jira-secret'], tracker_b: ['GH_SECRET', 'gh-secret'], tracker_c: ['GL_TOKEN', 'gl-token'],
  tracker_d: ['LIN_SECRET', 'lin-secret'], tracker_e: ['PLANE_SECRET', 'plane-secret'],
};
export const secretEnv = (): Record<string, string> => Object.fromEntries(Object.values(SECRETS));

const hex = (secret: string, ...parts: (string | Buffer)[]) => { const h = createHmac('sha256', secret); for (const p of parts) h.update(p); return h.digest('hex'); };

/** The signature header of `adapter` for `raw`. */
export function signature(adapter: string, raw: Buffer, secret = SECRETS[adapter]![1]): Record<string, string> {
  switch (adapter) {
    case 'tracker_a': return { 'x-hub-signature': `sha256=${hex(secret, raw)}` };
    case 'tracker_b': return { 'x-hub-signature-256': `sha256=${hex(secret, raw)}` };
    case 'tracker_c': return { 'x-gitlab-token': secret };
    case 'tracker_d': return { 'linear-signature': hex(secret, raw) };
    default: return { 'x-plane-signature': hex(secret, raw) };
  }
}

/** A fixture's bytes and headers (its own delivery id unless `deliveryId` overrides it), signed. */
export function delivery(file: string, o: { deliveryId?: string; raw?: Buffer } = {}): { adapter: string; raw: Buffer; headers: Record<string, string> } {
  const c = CASES.find((x) => x.file === file);
  if (!c) throw new Error(`no fixture ${file}`);
  const raw = o.raw ?? readFileSync(join(DIR, file));
  const headers: Record<string, string> = { ...c.headers, 'content-type': 'application/json', ...signature(c.adapter, raw) };
  if (o.deliveryId) for (const k of Object.keys(headers)) if (/delivery|identifier|uuid/.test(k)) headers[k] = o.deliveryId;
  return { adapter: c.adapter, raw, headers };
}

/** POST a delivery to the server at `url` (under the adapter's vendor or canonical name). */
export async function send(url: string, d: { adapter: string; raw: Buffer; headers: Record<string, string> }, name = d.adapter): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/webhooks/trackers/${name}`, { method: 'POST', headers: d.headers, body: new Uint8Array(d.raw) });
  return { status: res.status, body: await res.json() };
}

/** Chat headers for a body signed at `ts` (seconds). */
export function chatHeaders(secret: string, body: string, ts = Math.floor(Date.now() / 1000), type = 'application/x-www-form-urlencoded'): Record<string, string> {
  return { 'content-type': type, 'x-chat-request-timestamp': String(ts), 'x-chat-signature': `v0=${hex(secret, `v0:${ts}:${body}`)}` };
}

/** /webhook headers: sha256= over "<ts>." + body. */
export function webhookHeaders(secret: string, body: string, ts = Math.floor(Date.now() / 1000)): Record<string, string> {
  return { 'content-type': 'application/json', 'x-timestamp': String(ts), 'x-signature-256': `sha256=${hex(secret, `${ts}.`, body)}` };
}

/** /hooks headers: sha256= over the body. */
export const hookHeaders = (secret: string, body: string): Record<string, string> => ({ 'content-type': 'application/json', 'x-signature-256': `sha256=${hex(secret, body)}` });
