// The OIDC relying party (openid-client): discovery, authorization code + PKCE S256 with state and
// nonce, an ID token checked for issuer, audience, signature, expiry (bounded skew) and nonce, then
// userinfo for the groups.
import * as oidc from 'openid-client';
import type { SsoConfig } from '../../config/schema.ts';
import { badRequest, HttpError } from '../../lib/http-error.ts';
import type { Identity } from './users.ts';

type OidcConfig = NonNullable<SsoConfig['oidc']>;

/** A login to send the browser to, and what its callback must check. */
export interface OidcStart {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The relying party of one configured provider. */
export interface OidcClient {
  start(): Promise<OidcStart>;
  /** Check the callback URL against the login it answers; the identity, or HttpError 400. */
  finish(callback: URL, expected: { state: string; nonce: string; codeVerifier: string }): Promise<Identity>;
}

/** Groups as a list of strings, whether the IdP sends a list or one string. */
export function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return value ? [value] : [];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string' && g.length > 0) : [];
}

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** Build the client; discovery happens at the first login and is retried after a failure. */
export function createOidcClient(cfg: OidcConfig, o: { clientSecret?: string; clockSkewS: number }): OidcClient {
  let discovered: Promise<oidc.Configuration> | null = null;
  const configuration = () => {
    discovered ??= discover(cfg, o).catch((err: unknown) => {
      discovered = null;
      throw new HttpError(503, `OIDC discovery at ${cfg.issuer_url} failed: ${(err as Error).message}`);
    });
    return discovered;
  };
  return {
    async start() {
      const config = await configuration();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: cfg.redirect_uri, scope: cfg.scopes, state, nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
      });
      return { url, state, nonce, codeVerifier };
    },
    async finish(callback, expected) {
      const config = await configuration();
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: expected.codeVerifier, expectedState: expected.state, expectedNonce: expected.nonce, idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) throw new Error('no ID token');
        const info = config.serverMetadata().userinfo_endpoint
          ? await oidc.fetchUserInfo(config, tokens.access_token, claims.sub) : {};
        const all: Record<string, unknown> = { ...claims, ...info };
        return {
          provider: 'oidc', issuer: claims.iss, subject: claims.sub, email: str(all.email),
          name: str(all.name) ?? str(all.preferred_username) ?? str(all.email), groups: groupsOf(all[cfg.groups_claim]),
        };
      } catch (err) {
        throw badRequest(`OIDC login failed: ${describe(err)}`);
      }
    },
  };
}

// openid-client's messages are generic ("unexpected JWT claim value"); the check that failed is its cause.
function describe(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: unknown };
  const inner = e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${String(e.message ?? err)}${inner}${e.code ? ` [${e.code}]` : ''}`.slice(0, 300);
}

async function discover(cfg: OidcConfig, o: { clientSecret?: string; clockSkewS: number }): Promise<oidc.Configuration> {
  const issuer = new URL(cfg.issuer_url);
  const insecure = issuer.protocol === 'http:';
  // Plain http only to an IdP on this machine (tests, development); anything else must be https.
  if (insecure && !/^(localhost|127(\.\d+){3}|\[::1\])$/.test(issuer.hostname)) throw new Error('issuer_url must be https (http only for a loopback IdP)');
  const auth = o.clientSecret ? oidc.ClientSecretBasic(o.clientSecret) : oidc.None();
  const metadata: Partial<oidc.ClientMetadata> = { [oidc.clockTolerance]: o.clockSkewS };
  if (o.clientSecret) metadata.client_secret = o.clientSecret;
  const config = await oidc.discovery(issuer, cfg.client_id, metadata, auth, {
    timeout: 10,
    // Over TLS openid-client trusts the token endpoint instead of the ID token's signature: check it anyway.
    execute: [oidc.enableNonRepudiationChecks, ...(insecure ? [oidc.allowInsecureRequests] : [])],
  });
  config.timeout = 10;
  return config;
}
