export { ConfigSchema, type Config, type GateConfig } from './schema.ts';
export { ConfigError, defaultConfig, parseConfig, loadConfigFile, applyEnv } from './load.ts';
