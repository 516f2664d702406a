// Browser sign-in routes: providers, login redirect, OIDC callback, SAML ACS and SP metadata.
import { randomBytes } from 'node:crypto';
import { badRequest, notFound } from '../../lib/http-error.ts';
import { defineRoute, RAW, type Route } from '../../lib/route.ts';
import { LOGIN_COOKIE, readCookie } from './cookie.ts';
import { LANDING, rawQuery, redirect, SsoHttp } from './http.ts';
import { safeNext } from './logins.ts';
import { AuthProvidersResponse, CallbackQuery, LoginQuery, SamlAcsBody } from './schema.ts';

const TAGS = ['auth'];
const userAgent = (h: string | string[] | undefined) => (typeof h === 'string' ? h : undefined);

/** GET /auth/providers for a server with or without SSO. */
export function providersRoute(http: SsoHttp | null): Route {
  return defineRoute({
    method: 'GET', path: '/auth/providers', operationId: 'auth_providers', summary: 'Sign-in providers of this server', tags: TAGS, access: 'public',
    responses: { 200: { description: 'Providers', schema: AuthProvidersResponse } },
    handler: () => {
      const on = http?.sso.enabled ?? { oidc: false, saml: false };
      const providers = (['oidc', 'saml'] as const).filter((p) => on[p]);
      return { configured: http !== null, providers, default: providers[0] ?? null, oidc_enabled: on.oidc, saml_enabled: on.saml, device_flow_enabled: providers.length > 0 };
    },
  });
}

/** Login, callback, ACS and metadata of a configured server. */
export function loginRoutes(http: SsoHttp): Route[] {
  const { sso, pending } = http;
  return [
    defineRoute({
      method: 'GET', path: '/auth/login', operationId: 'auth_login', summary: 'Redirect to the identity provider', tags: TAGS, access: 'public', query: LoginQuery,
      responses: { 302: { description: 'To the identity provider' }, 400: { description: 'Provider not enabled' }, 404: { description: 'SSO not configured' } },
      handler: async ({ query, req, res }) => {
        const provider = query.provider;
        if (!sso.enabled[provider]) throw badRequest(`Authentication provider '${provider}' is not enabled`);
        const binding = http.binding(req);
        const next = safeNext(query.next, LANDING);
        let location: URL;
        if (provider === 'oidc') {
          const start = await sso.deps.oidc!.start();
          pending.put(start.state, { provider, binding, next, nonce: start.nonce, codeVerifier: start.codeVerifier });
          location = start.url;
        } else {
          const relay = randomBytes(24).toString('base64url');
          pending.put(relay, { provider, binding, next });
          location = await sso.deps.saml!.start(relay);
        }
        return redirect(res, 302, location.href, [http.loginCookie(binding)]);
      },
    }),
    defineRoute({
      method: 'GET', path: '/auth/oidc/callback', operationId: 'auth_oidc_callback', summary: 'OIDC authorization code callback', tags: TAGS, access: 'public', query: CallbackQuery,
      responses: { 303: { description: 'Signed in: session cookie, then the board' }, 400: { description: 'Missing or invalid code or state, or a token that fails its checks' }, 404: { description: 'SSO not configured' } },
      handler: async ({ query, req, res, ip }) => {
        const oidc = sso.deps.oidc;
        if (!oidc) throw notFound('OIDC is not enabled on this server');
        const login = query.state ? pending.take(query.state) : undefined;
        if (query.error) throw badRequest(`The identity provider refused the login: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`);
        if (!query.code || !query.state) throw badRequest('Missing authorization code or state');
        if (!login || login.provider !== 'oidc') throw badRequest('Invalid or expired state');
        if (readCookie(req.headers.cookie, LOGIN_COOKIE) !== login.binding) throw badRequest('This login was started in another browser');
        const callback = new URL(sso.deps.config.oidc!.redirect_uri);
        callback.search = rawQuery(req.url);
        const identity = await oidc.finish(callback, { state: query.state, nonce: login.nonce!, codeVerifier: login.codeVerifier! });
        const { token } = await sso.signIn(identity, 'browser', { ip, userAgent: userAgent(req.headers['user-agent']) });
        return redirect(res, 303, login.next, [http.sessionCookie(token)]);
      },
    }),
    defineRoute({
      method: 'POST', path: '/auth/saml/acs', operationId: 'auth_saml_acs', summary: 'SAML assertion consumer (HTTP-POST binding)', tags: TAGS, access: 'public',
      body: SamlAcsBody, bodyOptional: true, form: true,
      responses: { 303: { description: 'Signed in: session cookie, then the board' }, 400: { description: 'Missing SAMLResponse or an assertion that fails its checks' }, 404: { description: 'SSO not configured' } },
      handler: async ({ body, req, res, ip }) => {
        const saml = sso.deps.saml;
        if (!saml) throw notFound('SAML is not enabled on this server');
        if (!body?.SAMLResponse) throw badRequest('Missing SAMLResponse');
        const identity = await saml.finish(body.SAMLResponse);
        const login = body.RelayState ? pending.take(body.RelayState) : undefined;
        const { token } = await sso.signIn(identity, 'browser', { ip, userAgent: userAgent(req.headers['user-agent']) });
        return redirect(res, 303, login?.provider === 'saml' ? login.next : LANDING, [http.sessionCookie(token)]);
      },
    }),
    defineRoute({
      method: 'GET', path: '/auth/saml/metadata', operationId: 'auth_saml_metadata', summary: 'SAML service provider metadata', tags: TAGS, access: 'public',
      responses: { 200: { description: 'SP metadata', contentType: 'application/samlmetadata+xml' }, 404: { description: 'SSO or SAML not configured' } },
      handler: ({ res }) => {
        if (!sso.deps.saml) throw notFound('SAML is not enabled on this server');
        res.writeHead(200, { 'content-type': 'application/samlmetadata+xml; charset=utf-8' }).end(sso.deps.saml.metadata());
        return RAW;
      },
    }),
  ];
}
