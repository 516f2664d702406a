// Builds SSO for a server from its config: null when no provider is configured.
import type { SsoConfig } from '../../config/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { SddLayout } from '../../store/layout.ts';
import { SsoHttp } from './http.ts';
import { SsoService, type AuthAuditSink } from './service.ts';

export interface SsoSetup {
  config: SsoConfig;
  layout: SddLayout;
  clock: Clock;
  log: Logger;
  audit: AuthAuditSink;
  /** The OIDC client secret (read by the CLI from the variable named by client_secret_env). */
  oidcClientSecret?: string;
  /** Text of saml.idp_metadata_file, when configured. */
  samlMetadataXml?: string;
  onWrite?: (abs: string, text: string, note: string) => void;
}

/** SSO with its users, sessions and mappings loaded, or null when neither provider is configured. */
export async function createSso(s: SsoSetup): Promise<SsoHttp | null> {
  const { config } = s;
  if (!config.oidc && !config.saml) return null;
  const skew = { clockSkewS: config.clock_skew_s };
  // Each provider's library is loaded only when it is on (node-saml and its XML stack cost every start ~0.1 s).
  const oidc = config.oidc?.enabled
    ? (await import('./oidc.ts')).createOidcClient(config.oidc, { ...skew, ...(s.oidcClientSecret ? { clientSecret: s.oidcClientSecret } : {}) }) : undefined;
  const saml = config.saml?.enabled
    ? (await import('./saml.ts')).createSamlClient(config.saml, { ...skew, ...(s.samlMetadataXml ? { metadataXml: s.samlMetadataXml } : {}) }) : undefined;
  const sso = new SsoService({
    config, layout: s.layout, clock: s.clock, log: s.log, audit: s.audit,
    ...(oidc ? { oidc } : {}), ...(saml ? { saml } : {}), ...(s.onWrite ? { onWrite: s.onWrite } : {}),
  });
  await sso.load();
  const on = [oidc ? 'oidc' : '', saml ? 'saml' : ''].filter(Boolean);
  s.log.info(`single sign-on: ${on.length ? on.join(', ') : 'configured, every provider disabled'}; ${sso.users.all().length} user(s), ${sso.mappings.current.length} group mapping(s)`);
  return new SsoHttp(sso, s.clock, config.public_url);
}
