import { Type, type Static } from '@sinclair/typebox';

// Every configuration key with its default, in one place. config.yaml is validated against this.
const Gate = Type.Object({
  name: Type.String({ minLength: 1 }),
  command: Type.String({ minLength: 1 }),
  required: Type.Boolean({ default: true }),
  timeout_s: Type.Number({ exclusiveMinimum: 0, default: 600 }),
});
export type GateConfig = Static<typeof Gate>;

const AdapterConfig = Type.Object(
  {
    command: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

const ROLE_NAMES = ['admin', 'operator', 'agent', 'viewer'] as const;

// Single sign-on (DECISIONS.md, docs/sso.md): no provider = SSO not configured, every listed /auth route answers 404.
const d = (description: string) => ({ description });
const SsoConfig = Type.Object(
  {
    session_ttl_s: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 86_400, ...d('Lifetime of a sign-in session (browser and svc login)') }),
    default_role: Type.Union(ROLE_NAMES.map((r) => Type.Literal(r)), { default: 'viewer', ...d('Role of a user none of whose groups is mapped') }),
    public_url: Type.Optional(Type.String({ pattern: '^https?://', ...d('Base URL people reach the server at (device page, cookies); default: the Host of each request') })),
    clock_skew_s: Type.Integer({ minimum: 0, maximum: 300, default: 60, ...d('Clock difference tolerated on ID tokens and SAML assertions') }),
    oidc: Type.Optional(Type.Object({
      enabled: Type.Boolean({ default: true, ...d('false: /auth/login?provider=oidc answers 400') }),
      issuer_url: Type.String({ pattern: '^https?://', ...d('OpenID provider (discovery at /.well-known/openid-configuration); http only on loopback') }),
      client_id: Type.String({ minLength: 1, ...d('Client id registered at the IdP') }),
      client_secret_env: Type.Optional(Type.String({ minLength: 1, ...d('Environment variable holding the client secret (none: public client, PKCE only)') })),
      redirect_uri: Type.String({ pattern: '^https?://', ...d('This server\'s /auth/oidc/callback as registered at the IdP') }),
      scopes: Type.String({ default: 'openid email profile groups', ...d('Scopes asked for') }),
      groups_claim: Type.String({ default: 'groups', ...d('Claim (userinfo or ID token) listing the user\'s groups') }),
    }, d('OpenID Connect provider'))),
    saml: Type.Optional(Type.Object({
      enabled: Type.Boolean({ default: true, ...d('false: /auth/login?provider=saml answers 400') }),
      idp_sso_url: Type.Optional(Type.String({ pattern: '^https?://', ...d('IdP single sign-on URL (HTTP-Redirect binding); or from idp_metadata_file') })),
      idp_cert: Type.Optional(Type.String({ minLength: 1, ...d('IdP signing certificate (PEM); or idp_metadata_file') })),
      idp_metadata_file: Type.Optional(Type.String({ minLength: 1, ...d('IdP metadata XML, relative to the repository') })),
      idp_entity_id: Type.Optional(Type.String({ minLength: 1, ...d('Expected Issuer of responses (recommended; unset: not checked)') })),
      sp_entity_id: Type.String({ minLength: 1, ...d('This service provider\'s entity id (the audience)') }),
      sp_acs_url: Type.String({ pattern: '^https?://', ...d('This server\'s /auth/saml/acs (the recipient)') }),
      attr_email: Type.String({ default: 'email', ...d('Attribute holding the email') }),
      attr_name: Type.String({ default: 'displayName', ...d('Attribute holding the display name') }),
      attr_groups: Type.String({ default: 'memberOf', ...d('Attribute listing the groups') }),
    }, d('SAML 2.0 identity provider'))),
  },
  { default: {}, ...d('Single sign-on (docs/sso.md)') },
);
export type SsoConfig = Static<typeof SsoConfig>;

// Issue trackers (docs/webhooks.md): `trackers.<adapter>` for tracker_a…tracker_e or their vendor names.
const TrackerConfig = Type.Object(
  {
    webhook: Type.Object({
      enabled: Type.Boolean({ default: false }),
      secret_env: Type.String({ default: '' }),
      public_url_base: Type.String({ default: '' }),
    }, { default: {} }),
    poll: Type.Object({
      enabled: Type.Boolean({ default: false }),
      api_url: Type.String({ default: '' }),
      token_env: Type.String({ default: '' }),
      project: Type.String({ default: '' }),
      newest_first: Type.Boolean({ default: true }),
      deadline_s: Type.Number({ exclusiveMinimum: 0, default: 60 }),
      backoff_cap_s: Type.Number({ minimum: 0, default: 60 }),
    }, { default: {} }),
  },
  { default: {} },
);
export type TrackerConfig = Static<typeof TrackerConfig>;

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8052 }),
        allowed_ips: Type.Array(Type.String(), { default: [] }),
        body_limit_bytes: Type.Integer({ minimum: 1024, default: 1_048_576 }),
        rate_limit: Type.Object(
          {
            enabled: Type.Boolean({ default: true }),
            requests_per_s: Type.Number({ exclusiveMinimum: 0, default: 200 }),
            burst: Type.Integer({ minimum: 1, default: 400 }),
            exempt_loopback: Type.Boolean({ default: true }),
          },
          { default: {} },
        ),
      },
      { default: {} },
    ),
    auth: Type.Object({ enabled: Type.Boolean({ default: true }), sso: SsoConfig }, { default: {} }),
    state: Type.Object(
      {
        commit_interval_ms: Type.Integer({ minimum: 10, default: 250 }),
        gc_every_commits: Type.Integer({ minimum: 0, default: 2000 }),
      },
      { default: {} },
    ),
    orchestrator: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        tick_ms: Type.Integer({ minimum: 10, default: 3000 }),
        batch_size: Type.Integer({ minimum: 1, default: 3 }),
        max_agents: Type.Integer({ minimum: 0, default: 4 }),
        stall_snapshots: Type.Integer({ minimum: 2, default: 5 }),
      },
      { default: {} },
    ),
    agents: Type.Object(
      {
        default: Type.Optional(Type.String()),
        preference: Type.Array(Type.String(), { default: ['claude', 'codex', 'gemini', 'aider', 'opencode', 'qwen', 'generic'] }),
      },
      { default: {}, additionalProperties: AdapterConfig },
    ),
    gates: Type.Array(Gate, { default: [] }),
    janitor: Type.Object({ max_reopens: Type.Integer({ minimum: 0, default: 2 }) }, { default: {} }),
    merge: Type.Object({ base: Type.Optional(Type.String({ minLength: 1 })) }, { default: {} }),
    tenants: Type.Object({ default_max_tasks: Type.Integer({ minimum: 1, default: 1000 }) }, { default: {} }),
    // `hipaa` switches on HIPAA mode for `svc compliance check` (docs/compliance.md).
    compliance: Type.String({ default: 'standard', description: 'Compliance mode: standard or hipaa' }),
    trackers: Type.Object({}, { default: {}, additionalProperties: TrackerConfig }),
  },
  { default: {}, additionalProperties: true },
);
export type Config = Static<typeof ConfigSchema>;
