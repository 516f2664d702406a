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

// Single sign-on (DECISIONS.md): absent providers = SSO not configured, every listed /auth route answers 404.
const SsoConfig = Type.Object(
  {
    session_ttl_s: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 86_400 }),
    default_role: Type.Union(ROLE_NAMES.map((r) => Type.Literal(r)), { default: 'viewer' }),
    /** Base URL people reach the server at (device page, redirects); default: the request's Host. */
    public_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    /** Clock skew allowed on ID tokens and assertions. */
    clock_skew_s: Type.Integer({ minimum: 0, maximum: 300, default: 60 }),
    oidc: Type.Optional(Type.Object({
      enabled: Type.Boolean({ default: true }),
      issuer_url: Type.String({ pattern: '^https?://' }),
      client_id: Type.String({ minLength: 1 }),
      /** Name of the environment variable that holds the client secret (none = public client, PKCE only). */
      client_secret_env: Type.Optional(Type.String({ minLength: 1 })),
      redirect_uri: Type.String({ pattern: '^https?://' }),
      scopes: Type.String({ default: 'openid email profile groups' }),
      /** Claim (ID token or userinfo) that lists the user's groups. */
      groups_claim: Type.String({ default: 'groups' }),
    })),
    saml: Type.Optional(Type.Object({
      enabled: Type.Boolean({ default: true }),
      idp_sso_url: Type.Optional(Type.String({ pattern: '^https?://' })),
      /** The IdP signing certificate (PEM), or idp_metadata_file (relative to the repository). */
      idp_cert: Type.Optional(Type.String({ minLength: 1 })),
      idp_metadata_file: Type.Optional(Type.String({ minLength: 1 })),
      /** Expected Issuer of responses (default: not checked). */
      idp_entity_id: Type.Optional(Type.String({ minLength: 1 })),
      sp_entity_id: Type.String({ minLength: 1 }),
      sp_acs_url: Type.String({ pattern: '^https?://' }),
      attr_email: Type.String({ default: 'email' }),
      attr_name: Type.String({ default: 'displayName' }),
      attr_groups: Type.String({ default: 'memberOf' }),
    })),
  },
  { default: {} },
);
export type SsoConfig = Static<typeof SsoConfig>;

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
  },
  { default: {}, additionalProperties: true },
);
export type Config = Static<typeof ConfigSchema>;
