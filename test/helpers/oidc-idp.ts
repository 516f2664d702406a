// A real OpenID provider (oidc-provider) on 127.0.0.1 for SSO tests, with a browser-less login that
// walks its dev interactions, and a hook that rewrites ID tokens on their way out of /token (to play
// an attacker or a broken IdP: claims re-signed with the IdP's own key, or a signature tampered).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface IdpUser { email: string; name: string; groups: string[] }
export type IdTokenRewrite = (idToken: string, idp: OidcIdp) => Promise<string> | string;

export interface OidcIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  users: Record<string, IdpUser>;
  /** Set to rewrite the next ID tokens issued at /token (null = untouched). */
  rewrite: IdTokenRewrite | null;
  /** Re-sign an ID token with the IdP's key after changing its claims. */
  resign(idToken: string, change: (claims: Record<string, unknown>) => void): Promise<string>;
  close(): Promise<void>;
}

/** Start the provider; the client may only redirect to `redirectUri`. */
export async function startOidcIdp(redirectUri: string, users: Record<string, IdpUser>): Promise<OidcIdp> {
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' } as JWK;
  const signingKey = await importJWK(jwk, 'RS256');
  const idp: OidcIdp = {
    issuer, clientId: 'svc-test', clientSecret: 'svc-test-secret-0123456789', users, rewrite: null,
    async resign(idToken, change) {
      const claims = decodeJwt(idToken) as Record<string, unknown>;
      change(claims);
      return new SignJWT(claims).setProtectedHeader(decodeProtectedHeader(idToken) as { alg: string }).sign(signingKey);
    },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  const provider = new Provider(issuer, {
    clients: [{ client_id: idp.clientId, client_secret: idp.clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    findAccount: (_ctx, id) => (users[id] ? { accountId: id, claims: () => ({ sub: id, ...users[id] }) } : undefined),
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  });
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === '/token' && ctx.status === 200 && body?.id_token && idp.rewrite) body.id_token = await idp.rewrite(body.id_token, idp);
  });
  server.on('request', provider.callback());
  return idp;
}

/** Cookies of one client, by name. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** Fetch without following redirects, carrying and collecting the jar's cookies. */
export async function jarFetch(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: jar.header() } });
  jar.take(res);
  return res;
}

/** Walk the IdP's login and consent pages as `login` until it redirects to `redirectUri`; that URL. */
export async function idpLogin(authUrl: string, login: string, redirectUri: string): Promise<URL> {
  const jar = new CookieJar();
  let url = authUrl;
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(redirectUri)) return new URL(url);
    const res = await jarFetch(jar, url);
    const location = res.headers.get('location');
    if (location) { await res.arrayBuffer(); url = new URL(location, url).href; continue; }
    const html = await res.text();
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (res.status !== 200 || !prompt) throw new Error(`IdP page ${url} answered ${res.status}: ${html.slice(0, 300)}`);
    const form = new URLSearchParams({ prompt, login, password: 'any' });
    const post = await jarFetch(jar, url, { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await post.arrayBuffer();
    url = new URL(post.headers.get('location') ?? '', url).href;
  }
  throw new Error('IdP login did not reach the redirect URI');
}
