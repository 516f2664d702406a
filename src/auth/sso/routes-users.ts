// Signed-in routes (me, logout, mappings, users) and the device-code flow of `svc login`.
import { notFound } from '../../lib/http-error.ts';
import { defineRoute, reply, type Route } from '../../lib/route.ts';
import { DEVICE_TTL_S } from './device.ts';
import type { SsoHttp } from './http.ts';
import { profileOf } from './policy.ts';
import {
  DeviceAuthorizeRequest, DeviceAuthorizeResponse, DeviceCodeRequest, DeviceCodeResponse, DevicePollRequest, DevicePollResponse,
  GroupMappingsResponse, GroupMappingsUpdateRequest, StatusResponse, UserProfileResponse, UsersResponse,
} from './schema.ts';

const TAGS = ['auth'];
const NOT_CONFIGURED = 'SSO is not configured';

/** GET /auth/me: every signed-in role; a plain token sees its own role and no user. */
export function meRoute(http: SsoHttp | null): Route {
  return defineRoute({
    method: 'GET', path: '/auth/me', operationId: 'auth_me', summary: 'The signed-in user: profile, role, groups, permissions', tags: TAGS, access: 'read',
    responses: { 200: { description: 'Profile', schema: UserProfileResponse }, 401: { description: 'Not signed in' } },
    handler: ({ principal }) => (http ? http.sso.profile(principal) : profileOf(principal, undefined)),
  });
}

/** The routes of a configured server. */
export function userRoutes(http: SsoHttp): Route[] {
  const { sso } = http;
  return [
    defineRoute({
      method: 'POST', path: '/auth/logout', operationId: 'auth_logout', summary: 'Revoke the current session', tags: TAGS, access: 'read',
      responses: { 200: { description: 'Revoked', schema: StatusResponse }, 404: { description: 'SSO not configured' } },
      handler: async ({ principal }) => {
        await sso.logout(principal);
        return reply(200, { status: 'ok', detail: 'Session revoked' }, { 'set-cookie': http.clearSession() });
      },
    }),
    defineRoute({
      method: 'GET', path: '/auth/group-mappings', operationId: 'auth_group_mappings', summary: 'SSO group → role mappings', tags: TAGS, access: 'read',
      responses: { 200: { description: 'Mappings', schema: GroupMappingsResponse }, 404: { description: 'SSO not configured' } },
      handler: () => ({ mappings: sso.mappings.current }),
    }),
    defineRoute({
      method: 'PUT', path: '/auth/group-mappings', operationId: 'auth_group_mappings_update', summary: 'Replace the group → role mappings (admin)', tags: TAGS, access: 'admin',
      body: GroupMappingsUpdateRequest,
      responses: { 200: { description: 'The new mappings', schema: GroupMappingsResponse }, 400: { description: 'Invalid role value' }, 403: { description: 'Admin role required' }, 404: { description: 'SSO not configured' } },
      handler: async ({ body, principal }) => {
        const mappings = await sso.setMappings(body.mappings, principal);
        return { status: 'ok', mappings_count: mappings.length, mappings };
      },
    }),
    defineRoute({
      method: 'GET', path: '/auth/users', operationId: 'auth_users', summary: 'Every SSO user (admin)', tags: TAGS, access: 'admin',
      responses: { 200: { description: 'Users', schema: UsersResponse }, 403: { description: 'Admin role required' }, 404: { description: 'SSO not configured' } },
      handler: () => {
        const users = sso.users.all();
        return { users, total: users.length };
      },
    }),
    ...deviceRoutes(http),
  ];
}

function deviceRoutes(http: SsoHttp): Route[] {
  const { sso } = http;
  const ua = (h: string | string[] | undefined) => (typeof h === 'string' ? h : undefined);
  return [
    defineRoute({
      method: 'POST', path: '/auth/cli/device', operationId: 'auth_cli_device', summary: 'Start a device login (svc login)', tags: TAGS, access: 'public',
      body: DeviceCodeRequest, bodyOptional: true,
      responses: { 200: { description: 'Codes', schema: DeviceCodeResponse }, 404: { description: 'SSO not configured' } },
      handler: ({ body, req }) => {
        const rec = sso.devices.start(body?.client_name ?? null);
        const uri = `${http.baseUrl(req)}/auth/device`;
        return {
          device_code: rec.deviceCode, user_code: rec.userCode, verification_uri: uri,
          verification_uri_complete: `${uri}?user_code=${rec.userCode}`, expires_in: DEVICE_TTL_S, interval: rec.intervalS,
        };
      },
    }),
    defineRoute({
      method: 'POST', path: '/auth/cli/token', operationId: 'auth_cli_token', summary: 'Poll a device login; the access token once authorized (single use)', tags: TAGS, access: 'public',
      body: DevicePollRequest,
      responses: { 200: { description: 'pending, slow_down, complete or expired', schema: DevicePollResponse }, 404: { description: 'SSO not configured' } },
      handler: ({ body, req, ip }) => sso.pollDevice(body.device_code, { ip, userAgent: ua(req.headers['user-agent']) }),
    }),
    defineRoute({
      method: 'POST', path: '/auth/cli/authorize', operationId: 'auth_cli_authorize', summary: 'Approve a device login as the signed-in user', tags: TAGS, access: 'read',
      body: DeviceAuthorizeRequest,
      responses: { 200: { description: 'Authorized', schema: DeviceAuthorizeResponse }, 400: { description: 'Invalid or expired user code' }, 401: { description: 'No signed-in user session' }, 404: { description: 'SSO not configured' }, 429: { description: 'Too many attempts' } },
      handler: async ({ body, principal, ip }) => {
        const rec = await sso.authorizeDevice(body.user_code, principal, ip);
        return { status: 'authorized', user_code: rec.userCode };
      },
    }),
  ];
}

/** Without SSO every listed /auth route answers 404 (not documented: the server has no SSO). */
export function notConfiguredRoutes(): Route[] {
  const paths: [Route['method'], string][] = [
    ['GET', '/auth/login'], ['GET', '/auth/oidc/callback'], ['POST', '/auth/saml/acs'], ['GET', '/auth/saml/metadata'],
    ['POST', '/auth/cli/device'], ['POST', '/auth/cli/token'], ['POST', '/auth/cli/authorize'], ['POST', '/auth/logout'],
    ['GET', '/auth/group-mappings'], ['PUT', '/auth/group-mappings'], ['GET', '/auth/users'], ['GET', '/auth/device'],
  ];
  return paths.map(([method, path]) => defineRoute({
    method, path, operationId: `auth_off_${method}_${path}`, summary: NOT_CONFIGURED, tags: TAGS, access: 'public', hidden: true,
    responses: { 404: { description: NOT_CONFIGURED } },
    handler: () => { throw notFound(NOT_CONFIGURED); },
  }));
}
