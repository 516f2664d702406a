import { Type, type Static } from '@sinclair/typebox';

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
    auth: Type.Object({ enabled: Type.Boolean({ default: true }) }, { default: {} }),
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
