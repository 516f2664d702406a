// Every /auth route record, for a server with SSO or without it.
import type { Route } from '../../lib/route.ts';
import type { SsoHttp } from './http.ts';
import { devicePageRoute } from './page.ts';
import { loginRoutes, providersRoute } from './routes-login.ts';
import { meRoute, notConfiguredRoutes, userRoutes } from './routes-users.ts';

/** The /auth routes: the full set when SSO is configured, else providers, me and 404s. */
export function ssoRoutes(http: SsoHttp | null): Route[] {
  if (!http) return [providersRoute(null), meRoute(null), ...notConfiguredRoutes()];
  return [providersRoute(http), meRoute(http), ...loginRoutes(http), ...userRoutes(http), devicePageRoute(http)];
}
