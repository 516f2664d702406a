export { ConfigSchema, type Config, type GateConfig, type TrackerConfig } from './schema.ts';
export { ConfigError, defaultConfig, parseConfig, loadConfigFile, applyEnv } from './load.ts';
