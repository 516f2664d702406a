import { readFileSync, existsSync } from 'node:fs';
import { Value } from '../lib/typebox.ts';
import { parseDocument } from 'yaml';
import { ConfigSchema, type Config } from './schema.ts';

/** A config.yaml problem, with the file and the first offending key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Defaults for every key; what an absent config.yaml means. */
export function defaultConfig(): Config {
  return parseConfig({});
}

/** Validate a parsed object against the schema, filling defaults. Throws ConfigError naming the key. */
export function parseConfig(raw: unknown, source = 'config'): Config {
  const withDefaults = Value.Default(ConfigSchema, Value.Clone(raw ?? {}));
  const first = Value.Errors(ConfigSchema, withDefaults).First();
  if (first) throw new ConfigError(`${source}: ${first.path || '/'}: ${first.message}`);
  return withDefaults as Config;
}

/** Read `.sdd/config.yaml` (absent = defaults). */
export function loadConfigFile(path: string): Config {
  if (!existsSync(path)) return defaultConfig();
  const doc = parseDocument(readFileSync(path, 'utf8'));
  if (doc.errors.length) throw new ConfigError(`${path}: ${doc.errors[0]!.message}`);
  return parseConfig(doc.toJS() ?? {}, path);
}

/** Environment overrides of INTERFACE.md: SERVICE_HOST, SERVICE_PORT, SERVICE_MAX_AGENTS. */
export function applyEnv(config: Config, env: NodeJS.ProcessEnv): Config {
  const out = structuredClone(config);
  if (env.SERVICE_HOST) out.server.host = env.SERVICE_HOST;
  if (env.SERVICE_PORT) out.server.port = intEnv('SERVICE_PORT', env.SERVICE_PORT, 0, 65535);
  if (env.SERVICE_MAX_AGENTS) out.orchestrator.max_agents = intEnv('SERVICE_MAX_AGENTS', env.SERVICE_MAX_AGENTS, 0, 10_000);
  return out;
}

function intEnv(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new ConfigError(`${name}: expected an integer ${min}..${max}, got '${value}'`);
  return n;
}
