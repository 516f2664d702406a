// The environment agents and gates get: an allow-list, never the server's own secrets.
import type { Config } from '../config/index.ts';

/** What every agent and gate keeps of the server's environment: the path, the home folder, who and where it is, locale. */
const BASE_NAMES = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'TZ']);
const LOCALE = /^LC_[A-Z_]+$/;

/** The SERVICE_* variables an agent may hold: its own server, task, session and task-scoped token. */
export const AGENT_SERVICE_VARS = ['SERVICE_SERVER_URL', 'SERVICE_TASK_ID', 'SERVICE_SESSION_ID', 'SERVICE_AUTH_TOKEN'] as const;

/** Which variables to keep: `passthrough` names (a trailing `*` is a prefix) and `secrets` that always go. */
export interface EnvPolicy {
  passthrough: readonly string[];
  secrets: readonly string[];
}

/** The variables config names as secret: `agents.secret_env` and every `secret_env` value anywhere in it (pure). */
export function secretEnvNames(config: Config): string[] {
  const out = new Set<string>(config.agents.secret_env);
  const walk = (v: unknown, key: string): void => {
    if (key === 'secret_env' && typeof v === 'string' && v !== '') out.add(v);
    if (Array.isArray(v)) v.forEach((x) => walk(x, key));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(config, '');
  return [...out];
}

/** The policy of a configuration: `agents.env_passthrough` and the secrets it names. */
export function envPolicy(config: Config): EnvPolicy {
  return { passthrough: config.agents.env_passthrough, secrets: secretEnvNames(config) };
}

const matches = (name: string, pattern: string) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);

/**
 * The allow-listed part of `base` (pure): PATH, HOME, user, shell, terminal, locale and the passthrough
 * names; never a SERVICE_* variable (the caller adds the agent's own) nor one config names as secret.
 */
export function allowedEnv(base: Readonly<Record<string, string | undefined>>, policy: EnvPolicy): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || k.startsWith('SERVICE_') || policy.secrets.includes(k)) continue;
    if (BASE_NAMES.has(k) || LOCALE.test(k) || policy.passthrough.some((p) => matches(k, p))) env[k] = v;
  }
  return env;
}

/** The environment of a gate: the allow-list plus which task and session it checks (no token, no server). */
export function gateEnv(base: Readonly<Record<string, string | undefined>>, policy: EnvPolicy, ids: { taskId: string; sessionId: string }): Record<string, string> {
  return { ...allowedEnv(base, policy), SERVICE_TASK_ID: ids.taskId, SERVICE_SESSION_ID: ids.sessionId };
}
