export { SsoService, type SsoDeps, type AuthAuditEntry, type AuthAuditSink } from './service.ts';
export { SsoHttp } from './http.ts';
export type { OidcClient } from './oidc.ts';
export type { SamlClient } from './saml.ts';
export { sessionCookieOf, SESSION_COOKIE } from './cookie.ts';
export { ssoRoutes } from './routes.ts';
export * from './policy.ts';
export * from './device.ts';
export { createSso, type SsoSetup } from './setup.ts';
