export {
  ROLES, TokenRecord, TokenFile, type TokenState, type Random, type CreateTokenOptions,
  hashToken, generateToken, tokenState, parseDuration, parseTokenFile, readTokenFile, readAdminTokenFile,
  ensureSecretsDir, writeSecretFile, createToken, listTokens, revokeToken, ensureAdminToken, pruneTokens, TASK_TOKEN_KEEP_MS,
} from './tokens.ts';
export { type Authenticator, type AuthEnv, type SessionResolver, type ClusterResolver, DISABLED_PRINCIPAL, createAuthenticator } from './authenticate.ts';
export { ROLE_ACCESS, roleAllows, accessDenied, outsideTask, holdsScope, scopesOf } from './roles.ts';
export * from './tenants.ts';
export * from './tenant-gate.ts';
