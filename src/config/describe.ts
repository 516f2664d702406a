// What each config.yaml key is for, by dotted path, for the generated docs/configuration.md. A `description`
// written on the key in schema.ts wins over this table; a key in neither is listed without one.

/** Description of each configuration key (`gates[].name` for array items, `agents.<name>.command` for adapters). */
export const KEY_DOCS: Record<string, string> = {
  server: 'The HTTP API.',
  'server.host': 'Address to listen on. `0.0.0.0` serves every interface: set `server.allowed_ips` and keep auth on.',
  'server.port': 'TCP port; `0` picks a free one (written to `.sdd/runtime/server.json`, where the CLI finds it).',
  'server.allowed_ips': 'CIDRs allowed to call the API (e.g. `10.0.0.0/8`); empty allows every client that reaches the port. Others get 403. `/health`, `/docs` and `/openapi.json` stay reachable.',
  'server.body_limit_bytes': 'Largest request body; bigger bodies answer 413.',
  'server.rate_limit': 'Per-client token bucket (per token, else per IP); over the rate answers 429 with `Retry-After`.',
  'server.rate_limit.enabled': 'Turn rate limiting on or off.',
  'server.rate_limit.requests_per_s': 'Sustained requests per second per client.',
  'server.rate_limit.burst': 'Requests a client may make at once before the rate applies.',
  'server.rate_limit.exempt_loopback': 'Clients on 127.0.0.1 / ::1 (the local CLI and agents) are not limited.',
  auth: 'Bearer-token authentication (docs/api.md).',
  'auth.enabled': 'Require a bearer token on every non-public endpoint. Off only for development.',
  state: 'How `.sdd` is committed into `refs/sdd/state`.',
  'state.commit_interval_ms': 'Group commit: changes made within this interval become one state commit.',
  'state.gc_every_commits': 'Run `git gc --auto` after this many state commits; 0 never.',
  orchestrator: 'The tick loop that starts agents on ready tasks, runs gates and merges.',
  'orchestrator.enabled': 'Run the orchestrator; off serves the API only.',
  'orchestrator.tick_ms': 'Interval between ticks; a task change or a kill request also triggers one.',
  'orchestrator.batch_size': 'Most tasks started in one tick.',
  'orchestrator.max_agents': 'Most agents running at once.',
  'orchestrator.stall_snapshots': 'Progress snapshots without any change before a run is reported stalled (logged, never killed).',
  agents: 'Which agent CLI runs a task. Tasks may name one in `metadata.adapter`.',
  'agents.default': 'Adapter for tasks that name none: claude, codex, gemini, aider, opencode, qwen or generic. Unset: the first of `agents.preference` found on PATH.',
  'agents.preference': 'Order in which adapters are looked for on PATH.',
  'agents.<name>.command': 'Command of adapter `<name>`. Without placeholders it replaces the binary (e.g. `npx claude`); with placeholders it is the whole command. Placeholders: `{prompt_file}` `{prompt}` `{model}` `{task_id}` `{session_id}` `{worktree}`, substituted per argument, never through a shell. With no model, `--model {model}` is left out.',
  'agents.<name>.model': 'Model of adapter `<name>` for tasks that name none.',
  gates: 'Quality gates, run in the agent\'s worktree after it completes; a failed required gate reopens the task (see `janitor`).',
  'gates[].name': 'Name shown in the gate report and in the next attempt\'s prompt.',
  'gates[].command': 'Shell command; exit code 0 passes.',
  'gates[].required': 'A failed required gate stops the merge; a failed optional one is only reported.',
  'gates[].timeout_s': 'Seconds before the gate\'s process group is killed and the gate fails.',
  janitor: 'What happens when gates fail.',
  'janitor.max_reopens': 'Times a task is reopened after failed gates before it is failed.',
  merge: 'Where agent work is merged.',
  'merge.base': 'Branch agents fork from and merge into. Unset: the branch checked out when `svc up` starts.',
  tenants: 'Tenant quotas (`.sdd/tenants.json` holds per-tenant values).',
  'tenants.default_max_tasks': 'Active tasks (not done or finished) a tenant may hold when tenants.json names no `max_tasks`; more answer 429.',
};

/** How each key can also be set when svc starts (environment variable or `svc up` flag). */
export const KEY_OVERRIDES: Record<string, string> = {
  'server.host': '`SERVICE_HOST`, `--host`',
  'server.port': '`SERVICE_PORT`, `--port`',
  'auth.enabled': '`SERVICE_AUTH_DISABLED=1` turns it off',
  'orchestrator.enabled': '`--no-orchestrator`',
  'orchestrator.tick_ms': '`--tick-ms`',
  'orchestrator.batch_size': '`--batch-size`',
  'orchestrator.max_agents': '`SERVICE_MAX_AGENTS`, `--max-agents`',
};
