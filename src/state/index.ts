export { stateGitRoutes } from './routes.ts';
