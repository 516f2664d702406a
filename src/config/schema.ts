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
      },
      { default: {}, additionalProperties: AdapterConfig },
    ),
    gates: Type.Array(Gate, { default: [] }),
    janitor: Type.Object({ max_reopens: Type.Integer({ minimum: 0, default: 2 }) }, { default: {} }),
    merge: Type.Object({ base: Type.Optional(Type.String({ minLength: 1 })) }, { default: {} }),
    tenants: Type.Object({ default_max_tasks: Type.Integer({ minimum: 1, default: 1000 }) }, { default: {} }),
    // `hipaa` switches on HIPAA mode for `svc compliance check` (docs/compliance.md).
    compliance: Type.String({ default: 'standard', description: 'Compliance mode: standard or hipaa' }),
  },
  { default: {}, additionalProperties: true },
);
export type Config = Static<typeof ConfigSchema>;
