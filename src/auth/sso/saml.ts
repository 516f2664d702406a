// The SAML service provider (@node-saml/node-saml): signed assertions only, audience, recipient and
// issuer checked, bounded clock skew, InResponseTo required and each request id usable once.
import { SAML, ValidateInResponseTo, type Profile } from '@node-saml/node-saml';
import type { SsoConfig } from '../../config/schema.ts';
import { badRequest } from '../../lib/http-error.ts';
import { groupsOf } from './oidc.ts';
import type { Identity } from './users.ts';

type SamlConfig = NonNullable<SsoConfig['saml']>;

/** The service provider of one configured IdP. */
export interface SamlClient {
  /** URL of the IdP (redirect binding) for a new AuthnRequest carrying `relayState`. */
  start(relayState: string): Promise<URL>;
  /** Validate a POSTed SAMLResponse; the identity, or HttpError 400. */
  finish(samlResponse: string): Promise<Identity>;
  /** The SP metadata XML. */
  metadata(): string;
}

/** Certificates and SSO URL of an IdP metadata document (the parts we use). */
export function idpFromMetadata(xml: string): { certs: string[]; ssoUrl?: string } {
  const certs = [...xml.matchAll(/<(?:[\w-]+:)?X509Certificate>\s*([A-Za-z0-9+/=\s]+?)\s*<\/(?:[\w-]+:)?X509Certificate>/g)]
    .map((m) => m[1]!.replace(/\s+/g, ''));
  const sso = [...xml.matchAll(/<(?:[\w-]+:)?SingleSignOnService\b[^>]*>/g)].map((m) => m[0])
    .find((tag) => /Binding="urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-Redirect"/.test(tag));
  const ssoUrl = sso ? /Location="([^"]+)"/.exec(sso)?.[1] : undefined;
  return { certs: [...new Set(certs)], ...(ssoUrl ? { ssoUrl } : {}) };
}

// node-saml hands back the parsed (signed) assertion; the bearer confirmation must name our ACS URL.
function checkRecipient(profile: Profile, acsUrl: string): void {
  const assertion = profile.getAssertion?.() as { Assertion?: { Subject?: { SubjectConfirmation?: { SubjectConfirmationData?: { $?: { Recipient?: string } }[] }[] }[] } } | undefined;
  const data = (assertion?.Assertion?.Subject ?? []).flatMap((s) => s.SubjectConfirmation ?? []).flatMap((c) => c.SubjectConfirmationData ?? []);
  const recipients = data.map((d) => d.$?.Recipient);
  if (recipients.length === 0 || recipients.some((r) => r !== acsUrl)) {
    throw new Error(`assertion recipient ${JSON.stringify(recipients)} is not ${acsUrl}`);
  }
}

function attr(profile: Profile, name: string): unknown {
  return (profile.attributes as Record<string, unknown> | undefined)?.[name] ?? (profile as Record<string, unknown>)[name];
}

/** Build the service provider from the config (certificate from idp_cert or the IdP metadata). */
export function createSamlClient(cfg: SamlConfig, o: { clockSkewS: number; metadataXml?: string }): SamlClient {
  const meta = o.metadataXml ? idpFromMetadata(o.metadataXml) : { certs: [] as string[] };
  const idpCert = cfg.idp_cert ? [cfg.idp_cert] : meta.certs;
  const entryPoint = cfg.idp_sso_url ?? ('ssoUrl' in meta ? meta.ssoUrl : undefined);
  if (idpCert.length === 0) throw new Error('saml needs idp_cert or an idp_metadata_file with a signing certificate');
  if (!entryPoint) throw new Error('saml needs idp_sso_url (or an HTTP-Redirect SingleSignOnService in the metadata)');
  const saml = new SAML({
    entryPoint, issuer: cfg.sp_entity_id, callbackUrl: cfg.sp_acs_url, audience: cfg.sp_entity_id, idpCert,
    ...(cfg.idp_entity_id ? { idpIssuer: cfg.idp_entity_id } : {}),
    wantAssertionsSigned: true, wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always, requestIdExpirationPeriodMs: 600_000,
    acceptedClockSkewMs: o.clockSkewS * 1000, disableRequestedAuthnContext: true,
  });
  return {
    async start(relayState) {
      return new URL(await saml.getAuthorizeUrlAsync(relayState, undefined, {}));
    },
    async finish(samlResponse) {
      try {
        const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse });
        if (!profile) throw new Error('no assertion');
        checkRecipient(profile, cfg.sp_acs_url);
        const email = attr(profile, cfg.attr_email);
        const name = attr(profile, cfg.attr_name);
        return {
          provider: 'saml', issuer: profile.issuer, subject: profile.nameID,
          email: typeof email === 'string' ? email : null,
          name: typeof name === 'string' ? name : typeof email === 'string' ? email : null,
          groups: groupsOf(attr(profile, cfg.attr_groups)),
        };
      } catch (err) {
        throw badRequest(`SAML login failed: ${String((err as Error).message ?? err).slice(0, 300)}`);
      }
    },
    metadata: () => saml.generateServiceProviderMetadata(null, null),
  };
}
