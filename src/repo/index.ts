export { repoGitRoutes, type RepoAccess, type RepoDeps } from './routes.ts';
export { judgePush, readCommandSection, refusal, refusalReport, type PushCommand, type CommandSection } from './push-gate.ts';
