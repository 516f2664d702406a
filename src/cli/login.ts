// `svc login` (device-code sign-in through the server's SSO) and `svc logout`.
import { hostname } from 'node:os';
import { CliError } from './args.ts';
import { call, resolveEndpoint } from './client.ts';
import { command, type RunContext } from './command.ts';
import { removeCredential, saveCredential, credentialsPath } from './credentials.ts';

const CONN = { server: { type: 'string', description: 'Server URL (default SERVICE_SERVER_URL or the local .sdd)' } } as const;

interface DeviceCode { device_code: string; user_code: string; verification_uri: string; verification_uri_complete?: string; expires_in: number; interval: number }
interface Poll { status: 'pending' | 'slow_down' | 'complete' | 'expired'; interval?: number; access_token?: string; token_type?: string; expires_at?: string }

const serverOf = (c: RunContext) => resolveEndpoint(c.env, String(c.values.workdir ?? process.cwd()), { server: c.values.server as string | undefined, token: '' }).url;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A server without SSO answers 404 on the device route: say so in words, exit 4.
async function startDevice(url: string): Promise<DeviceCode> {
  try {
    return await call<DeviceCode>({ url }, 'POST', '/auth/cli/device', { client_name: `svc CLI on ${hostname()}`.slice(0, 100) });
  } catch (err) {
    if (err instanceof CliError && / → 404:/.test(err.message)) throw new CliError(`${url} has no single sign-on configured (auth.sso); use a token instead`, 4);
    throw err;
  }
}

// Poll at the server's interval until the person approves, the code expires or the server says slow down.
async function waitForToken(url: string, dc: DeviceCode): Promise<Poll> {
  let interval = Math.max(1, dc.interval);
  const deadline = Date.now() + dc.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const r = await call<Poll>({ url }, 'POST', '/auth/cli/token', { device_code: dc.device_code });
    if (r.status === 'complete' && r.access_token) return r;
    if (r.status === 'expired') break;
    if (r.status === 'slow_down') interval = r.interval ?? interval + 5;
  }
  throw new CliError('the code expired before it was approved; run svc login again', 4);
}

const login = command({ name: 'login', description: 'Sign in through the server\'s single sign-on (device code) and store the token' }, CONN, async (c) => {
  const url = serverOf(c);
  const dc = await startDevice(url);
  c.out(`To sign in, open ${dc.verification_uri_complete ?? dc.verification_uri}\nand check that it shows this code: ${dc.user_code}\n(or open ${dc.verification_uri} and type it). Waiting…`);
  const done = await waitForToken(url, dc);
  const me = await call<{ email: string | null; display_name: string | null; id: string; role: string }>({ url, token: done.access_token! }, 'GET', '/auth/me');
  const who = me.email ?? me.display_name ?? me.id;
  saveCredential(c.env, url, { access_token: done.access_token!, token_type: done.token_type ?? 'Bearer', expires_at: done.expires_at ?? null, saved_at: new Date().toISOString(), user: who });
  if (c.values.json) return c.out(JSON.stringify({ server: url, user: who, role: me.role, expires_at: done.expires_at ?? null, credentials: credentialsPath(c.env) }, null, 2));
  c.out(`Logged in to ${url} as ${who} (role ${me.role}) until ${done.expires_at ?? 'revoked'}.\nToken stored in ${credentialsPath(c.env)}.`);
});

const logout = command({ name: 'logout', description: 'Revoke the stored sign-in session and forget its token' }, CONN, async (c) => {
  const url = serverOf(c);
  const cred = removeCredential(c.env, url);
  if (!cred) return c.out(`Not logged in to ${url}.`);
  // The server may be gone or the session already dead: the local token is forgotten either way.
  const revoked = await call({ url, token: cred.access_token }, 'POST', '/auth/logout').then(() => true, () => false);
  c.out(revoked ? `Logged out of ${url}: session revoked, token removed.` : `Token for ${url} removed (the server did not confirm the revocation).`);
});

export const loginCommand = login;
export const logoutCommand = logout;
