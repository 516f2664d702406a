// A real `svc up` with single sign-on against in-process identity providers (oidc-provider and a
// samlify IdP), and the sign-in steps a browser or the CLI would take.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CookieJar, idpLogin, jarFetch, startOidcIdp, type IdpUser, type OidcIdp } from './oidc-idp.ts';
import { makeRepo, type TempRepo } from './repo.ts';
import { makeSamlIdp, type SamlIdp } from './saml-idp.ts';
import { startServer, type RunningServer } from './server.ts';

export const USERS: Record<string, IdpUser> = {
  alice: { email: 'alice@example.test', name: 'Alice Admin', groups: ['eng-admins', 'eng'] },
  bob: { email: 'bob@example.test', name: 'Bob Builder', groups: ['eng'] },
  carol: { email: 'carol@example.test', name: 'Carol Viewer', groups: [] },
};
export const SP_ENTITY_ID = 'http://svc.test/saml/sp';

/** A free loopback port (the svc URL must be known before it starts: it is in the IdP's client). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface SsoWorld {
  repo: TempRepo;
  svc: RunningServer;
  oidc: OidcIdp;
  saml: SamlIdp;
  url: string;
  redirectUri: string;
  acsUrl: string;
  stop(): Promise<void>;
}

/** svc with OIDC and SAML configured, group eng-admins → admin, eng → operator; default role viewer. */
export async function startSsoWorld(o: { saml?: boolean; env?: Record<string, string> } = {}): Promise<SsoWorld> {
  const repo = makeRepo('svc-sso-');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const redirectUri = `${url}/auth/oidc/callback`;
  const acsUrl = `${url}/auth/saml/acs`;
  const oidc = await startOidcIdp(redirectUri, USERS);
  const saml = makeSamlIdp(SP_ENTITY_ID, acsUrl);
  mkdirSync(join(repo.dir, '.sdd', 'auth'), { recursive: true });
  writeFileSync(join(repo.dir, '.sdd', 'auth', 'group-mappings.json'), JSON.stringify({ version: 1, mappings: [{ group: 'eng-admins', role: 'admin' }, { group: 'eng', role: 'operator' }] }));
  const sso = {
    oidc: { issuer_url: oidc.issuer, client_id: oidc.clientId, client_secret_env: 'SVC_TEST_OIDC_SECRET', redirect_uri: redirectUri },
    ...(o.saml === false ? {} : { saml: { idp_sso_url: saml.ssoUrl, idp_cert: saml.cert, idp_entity_id: saml.entityId, sp_entity_id: SP_ENTITY_ID, sp_acs_url: acsUrl } }),
  };
  writeFileSync(join(repo.dir, '.sdd', 'config.yaml'), stringify({ auth: { sso } }));
  const svc = await startServer(repo.dir, { args: ['--no-orchestrator', '--port', String(port)], env: { SVC_TEST_OIDC_SECRET: oidc.clientSecret, ...o.env } });
  return {
    repo, svc, oidc, saml, url, redirectUri, acsUrl,
    async stop() { await svc.kill(); await oidc.close(); repo.cleanup(); },
  };
}

/** What svc answered at the end of a browser sign-in. */
export interface Landing { status: number; location: string | null; session?: string; detail?: string; jar: CookieJar }

/** OIDC sign-in as a browser: /auth/login → IdP (login, consent) → callback; `bend` may change the IdP's redirect. */
export async function oidcSignIn(w: SsoWorld, login: string, o: { bendAuthUrl?: (u: URL) => void; bendCallback?: (u: URL) => void; next?: string } = {}): Promise<Landing> {
  const jar = new CookieJar();
  const start = await jarFetch(jar, `${w.url}/auth/login?provider=oidc${o.next ? `&next=${encodeURIComponent(o.next)}` : ''}`);
  if (start.status !== 302) throw new Error(`/auth/login answered ${start.status}: ${await start.text()}`);
  const authUrl = new URL(start.headers.get('location')!);
  o.bendAuthUrl?.(authUrl);
  const callback = await idpLogin(authUrl.href, login, w.redirectUri);
  o.bendCallback?.(callback);
  return land(jar, await jarFetch(jar, callback.href));
}

/** SAML sign-in: /auth/login?provider=saml, the IdP's response for that request (bent by `claims`), POST to the ACS. */
export async function samlSignIn(w: SsoWorld, login: string, o: { claims?: (c: Parameters<SamlIdp['respond']>[0]) => void; unsigned?: boolean; wrap?: (b64: string) => string } = {}): Promise<Landing & { response: string; relayState: string }> {
  const jar = new CookieJar();
  const start = await jarFetch(jar, `${w.url}/auth/login?provider=saml`);
  if (start.status !== 302) throw new Error(`/auth/login?provider=saml answered ${start.status}: ${await start.text()}`);
  const location = start.headers.get('location')!;
  const relayState = new URL(location).searchParams.get('RelayState') ?? '';
  const user = USERS[login]!;
  const claims = { inResponseTo: w.saml.requestIdOf(location), nameId: login, email: user.email, name: user.name, groups: user.groups };
  o.claims?.(claims);
  let response = await w.saml.respond(claims, { unsigned: o.unsigned ?? false });
  if (o.wrap) response = o.wrap(response);
  return { ...(await postAcs(w, jar, response, relayState)), response, relayState };
}

/** POST a SAMLResponse to the ACS as the IdP's auto-submitting form would. */
export async function postAcs(w: SsoWorld, jar: CookieJar, response: string, relayState: string): Promise<Landing> {
  const res = await jarFetch(jar, w.acsUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ SAMLResponse: response, RelayState: relayState }) });
  return land(jar, res);
}

async function land(jar: CookieJar, res: Response): Promise<Landing> {
  const text = await res.text();
  let detail: string | undefined;
  try { detail = (JSON.parse(text) as { detail?: string }).detail; } catch { /* a redirect has no body */ }
  const session = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='))?.split(';')[0]?.slice('svc_session='.length);
  return { status: res.status, location: res.headers.get('location'), jar, ...(session ? { session } : {}), ...(detail ? { detail } : {}) };
}

/** A signed-in session token for `login` (OIDC). */
export async function sessionFor(w: SsoWorld, login: string): Promise<string> {
  const l = await oidcSignIn(w, login);
  if (!l.session) throw new Error(`sign-in of ${login} failed: ${l.status} ${l.detail ?? ''}`);
  return l.session;
}
