import { Type, type Static } from '../lib/typebox.ts';

// Every configuration key with its default, in one place. config.yaml is validated against this.
const Gate = Type.Object({
  name: Type.String({ minLength: 1 }),
  command: Type.String({ minLength: 1 }),
  required: Type.Boolean({ default: true }),
  timeout_s: Type.Number({ exclusiveMinimum: 0, default: 600 }),
});
export type GateConfig = Static<typeof Gate>;

/** Variables agents and gates get besides PATH, HOME and locale: the agent CLIs' credentials and proxies. */
export const DEFAULT_ENV_PASSTHROUGH = [
  'ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'GEMINI_API_KEY', 'GOOGLE_API_KEY',
  'DASHSCOPE_API_KEY', 'OPENROUTER_API_KEY', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
];

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

// Worker nodes (docs/cluster.md): the registry, node tokens and the optional gRPC port.
const ClusterConfig = Type.Object(
  {
    node_timeout_s: Type.Integer({ minimum: 1, maximum: 86_400, default: 60, ...d('A node whose last heartbeat is this old is marked offline (its claimed tasks stay claimed)') }),
    staleness_check_s: Type.Integer({ minimum: 1, maximum: 3600, default: 15, ...d('How often the server looks for nodes that stopped heartbeating') }),
    token_expiry_hours: Type.Number({ exclusiveMinimum: 0, maximum: 8760, default: 24, ...d('Lifetime of the node token a registration answers with') }),
    grpc: Type.Object({
      port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, ...d('Serve the cluster RPC on this port (0: any free port); unset: no RPC server') })),
      host: Type.Optional(Type.String({ minLength: 1, ...d('Address of the RPC server; default: server.host') })),
      cert: Type.Optional(Type.String({ minLength: 1, ...d('TLS certificate (PEM file, relative to the repository); with key, the RPC port speaks TLS') })),
      key: Type.Optional(Type.String({ minLength: 1, ...d('TLS private key (PEM file, relative to the repository)') })),
    }, { default: {}, ...d('The cluster RPC (proto/svc/cluster/v1/cluster.proto), off unless a port is given') }),
  },
  { default: {}, ...d('Worker nodes: registry, heartbeats, node tokens (docs/cluster.md)') },
);

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
            // Unset: server.exempt_loopback decides.
            exempt_loopback: Type.Optional(Type.Boolean({ description: 'Rate limit only; unset = server.exempt_loopback' })),
          },
          { default: {} },
        ),
        // Unset: loopback clients skip the allowlist and the rate limit only while allowed_ips is empty.
        exempt_loopback: Type.Optional(Type.Boolean({ description: 'Loopback clients skip the allowlist and rate limit (default: only while allowed_ips is empty)' })),
        trust_proxy: Type.Array(Type.String(), { default: [], description: 'CIDRs of reverse proxies whose X-Forwarded-For names the client' }),
        headers_timeout_s: Type.Number({ exclusiveMinimum: 0, default: 10, description: 'Seconds a client has to send its request head' }),
        request_timeout_s: Type.Number({ exclusiveMinimum: 0, default: 30, description: 'Seconds a client has to send its whole request' }),
        max_connections_per_ip: Type.Integer({ minimum: 1, default: 256, description: 'Open connections per client address (503 beyond)' }),
        heavy_reads_per_client: Type.Integer({ minimum: 1, default: 2, description: 'Large reads (lists, logs) one client runs at once; the rest wait' }),
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
        sandbox: Type.Union([Type.Literal('auto'), Type.Literal('bwrap'), Type.Literal('none')], { default: 'auto', description: 'Run agents and gates in bubblewrap: auto (when it starts), bwrap (required), none' }),
        sandbox_writable: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Extra folders agents may write inside the sandbox (~ is the home folder)' }),
        env_passthrough: Type.Array(Type.String({ minLength: 1 }), { default: DEFAULT_ENV_PASSTHROUGH, description: 'Variables agents and gates get besides PATH, HOME and locale (a trailing * is a prefix)' }),
        secret_env: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Variables never passed to agents or gates' }),
        mcp: Type.Boolean({ default: true, description: 'Give agents the svc MCP server, scoped to their task\'s token, where their CLI takes one: claude (--mcp-config), codex (-c mcp_servers.svc…), a command template naming {mcp_config} (docs/mcp.md)' }),
      },
      { default: {}, additionalProperties: AdapterConfig },
    ),
    gates: Type.Array(Gate, { default: [] }),
    janitor: Type.Object({ max_reopens: Type.Integer({ minimum: 0, default: 2 }) }, { default: {} }),
    merge: Type.Object({ base: Type.Optional(Type.String({ minLength: 1 })) }, { default: {} }),
    tenants: Type.Object({ default_max_tasks: Type.Integer({ minimum: 1, default: 1000 }) }, { default: {} }),
    observe: Type.Object(
      {
        budget_usd: Type.Number({ minimum: 0, default: 0, description: 'Spending budget of agent runs in US dollars (0: none); /dashboard/data live_costs and alerts compare reported costs with it' }),
        budget_warn_pct: Type.Number({ minimum: 0, maximum: 100, default: 80, description: 'Percentage of the budget at which live_costs.should_warn turns true' }),
        events: Type.Object(
          {
            ring_size: Type.Integer({ minimum: 16, maximum: 1_000_000, default: 4096, description: 'Recent board changes kept for /events clients resuming with Last-Event-ID; an older id gets a reset event' }),
            ping_ms: Type.Integer({ minimum: 100, maximum: 300_000, default: 15_000, description: 'Interval of ping comments on /events' }),
            max_buffer_bytes: Type.Integer({ minimum: 65_536, default: 4_194_304, description: 'A client that falls this far behind is disconnected (it resumes with Last-Event-ID)' }),
          },
          { default: {}, description: 'The /events stream of board changes' },
        ),
        slo: Type.Object(
          {
            task_success: Type.Number({ minimum: 0, maximum: 1, default: 0.9, description: 'Share of finished tasks that succeed (done or closed, against failed)' }),
            merge_success: Type.Number({ minimum: 0, maximum: 1, default: 0.95, description: 'Share of gated agent work that merges without a conflict' }),
            gate_pass: Type.Number({ minimum: 0, maximum: 1, default: 0.8, description: 'Share of gate runs that pass' }),
            run_p95_s: Type.Number({ exclusiveMinimum: 0, default: 3600, description: '95th percentile duration of successful agent runs, in seconds (at most)' }),
          },
          { default: {}, description: 'Targets of GET /slo' },
        ),
      },
      { default: {}, description: 'Status, SLOs, the board and its event stream (docs/observability.md)' },
    ),
    // `hipaa` switches on HIPAA mode for `svc compliance check` (docs/compliance.md).
    compliance: Type.String({ default: 'standard', description: 'Compliance mode: standard or hipaa' }),
    trackers: Type.Object({}, { default: {}, additionalProperties: TrackerConfig }),
    cluster: ClusterConfig,
  },
  { default: {}, additionalProperties: true },
);
export type Config = Static<typeof ConfigSchema>;
