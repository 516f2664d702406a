// A SAML identity provider built with samlify for SSO tests: keys and a self-signed certificate made
// with openssl at test time, login responses for a given AuthnRequest with any claim bent on purpose.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import * as samlify from 'samlify';

/** A throwaway RSA key and self-signed certificate (PEM). */
export function makeCert(cn: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${cn}`,
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a login response says; every field can be bent to build a bad one. */
export interface SamlClaims {
  inResponseTo: string;
  nameId: string;
  email: string;
  name: string;
  groups: string[];
  audience?: string;
  recipient?: string;
  /** Minutes from now until the assertion expires (negative = already expired). */
  validMinutes?: number;
  issuer?: string;
}

export interface SamlIdp {
  entityId: string;
  ssoUrl: string;
  cert: string;
  /** The ID of the AuthnRequest in a redirect-binding URL. */
  requestIdOf(location: string): string;
  /** A base64 SAMLResponse with a signed assertion (or none signed with `unsigned`). */
  respond(c: SamlClaims, o?: { unsigned?: boolean }): Promise<string>;
}

// samlify validates XML against the SAML schema through a plug-in; the SP under test does its own checks.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const attr = (name: string, values: string[]) =>
  `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values.map((v) => `<saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`;

/** An IdP for an SP with `spEntityId` whose ACS is `acsUrl`. */
export function makeSamlIdp(spEntityId: string, acsUrl: string): SamlIdp {
  const { key, cert } = makeCert('svc-test-idp');
  const entityId = 'http://idp.svc.test/metadata';
  const ssoUrl = 'http://127.0.0.1:9/sso';
  const idp = samlify.IdentityProvider({
    entityID: entityId, privateKey: key, signingCert: cert, isAssertionEncrypted: false,
    singleSignOnService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: ssoUrl }],
  });
  const sp = (signed: boolean) => samlify.ServiceProvider({
    entityID: spEntityId, wantAssertionsSigned: signed, wantMessageSigned: false,
    assertionConsumerService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: acsUrl }],
  });
  const template = (c: SamlClaims) => {
    const now = new Date();
    const until = new Date(now.getTime() + (c.validMinutes ?? 5) * 60_000).toISOString();
    const issued = (c.validMinutes ?? 5) < 0 ? new Date(now.getTime() + (c.validMinutes! - 5) * 60_000).toISOString() : now.toISOString();
    const id = () => `_${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
    return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id()}" Version="2.0" IssueInstant="${issued}" Destination="${esc(acsUrl)}" InResponseTo="${esc(c.inResponseTo)}"><saml:Issuer>${esc(c.issuer ?? entityId)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>`
      + `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${id()}" Version="2.0" IssueInstant="${issued}"><saml:Issuer>${esc(c.issuer ?? entityId)}</saml:Issuer>`
      + `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified">${esc(c.nameId)}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${until}" Recipient="${esc(c.recipient ?? acsUrl)}" InResponseTo="${esc(c.inResponseTo)}"/></saml:SubjectConfirmation></saml:Subject>`
      + `<saml:Conditions NotBefore="${issued}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${esc(c.audience ?? spEntityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
      + `<saml:AuthnStatement AuthnInstant="${issued}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
      + `<saml:AttributeStatement>${attr('email', [c.email])}${attr('displayName', [c.name])}${attr('memberOf', c.groups)}</saml:AttributeStatement></saml:Assertion></samlp:Response>`;
  };
  return {
    entityId, ssoUrl, cert,
    requestIdOf(location) {
      const req = new URL(location).searchParams.get('SAMLRequest') ?? '';
      const xml = inflateRawSync(Buffer.from(req, 'base64')).toString('utf8');
      const id = /\bID="([^"]+)"/.exec(xml)?.[1];
      if (!id) throw new Error(`no request ID in ${xml.slice(0, 200)}`);
      return id;
    },
    async respond(c, o = {}) {
      const xml = template(c);
      if (o.unsigned) return Buffer.from(xml).toString('base64');
      const out = await idp.createLoginResponse(sp(true), { extract: { request: { id: c.inResponseTo } } }, 'post', { email: c.nameId }, { customTagReplacement: () => ({ id: '', context: xml }) });
      return (out as { context: string }).context;
    },
  };
}
