// Request and response shapes of the /auth routes (one TypeBox schema each: type, validator, OpenAPI).
import { Type } from '../../lib/typebox.ts';

const Str = (o: { maxLength?: number; minLength?: number } = {}) => Type.String({ maxLength: 2048, ...o });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const AuthProvidersResponse = Type.Object({
  configured: Type.Boolean(),
  providers: Type.Array(Type.String()),
  default: Nullable(Type.String()),
  oidc_enabled: Type.Boolean(),
  saml_enabled: Type.Boolean(),
  device_flow_enabled: Type.Boolean(),
}, { $id: 'AuthProvidersResponse' });

export const LoginQuery = Type.Object({
  provider: Type.Union([Type.Literal('oidc'), Type.Literal('saml')], { default: 'oidc' }),
  next: Type.Optional(Str()),
});

export const CallbackQuery = Type.Object({
  code: Type.Optional(Str()), state: Type.Optional(Str()), iss: Type.Optional(Str()),
  error: Type.Optional(Str()), error_description: Type.Optional(Str()),
});

export const SamlAcsBody = Type.Object({
  SAMLResponse: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  RelayState: Type.Optional(Str({ maxLength: 512 })),
});

export const DeviceCodeRequest = Type.Object({ client_name: Type.Optional(Str({ maxLength: 100 })) }, { $id: 'DeviceCodeRequest' });
export const DeviceCodeResponse = Type.Object({
  device_code: Type.String(), user_code: Type.String(), verification_uri: Type.String(), verification_uri_complete: Type.String(),
  expires_in: Type.Integer(), interval: Type.Integer(),
}, { $id: 'DeviceCodeResponse' });

export const DevicePollRequest = Type.Object({
  device_code: Str({ minLength: 1, maxLength: 256 }),
  grant_type: Type.Optional(Str({ maxLength: 128 })),
}, { $id: 'DevicePollRequest' });
export const DevicePollResponse = Type.Object({
  status: Type.Union(['pending', 'slow_down', 'complete', 'expired'].map((s) => Type.Literal(s))),
  interval: Type.Optional(Type.Integer()),
  access_token: Type.Optional(Type.String()), token_type: Type.Optional(Type.String()), expires_at: Type.Optional(Type.String()),
}, { $id: 'DevicePollResponse' });

export const DeviceAuthorizeRequest = Type.Object({ user_code: Str({ minLength: 1, maxLength: 32 }) }, { $id: 'DeviceAuthorizeRequest' });
export const DeviceAuthorizeResponse = Type.Object({ status: Type.Literal('authorized'), user_code: Type.String() }, { $id: 'DeviceAuthorizeResponse' });

export const UserProfileResponse = Type.Object({
  id: Type.String(), kind: Type.String(), provider: Nullable(Type.String()), issuer: Nullable(Type.String()), subject: Nullable(Type.String()),
  email: Nullable(Type.String()), display_name: Nullable(Type.String()), role: Type.String(), groups: Type.Array(Type.String()),
  permissions: Type.Array(Type.String()), tenant: Nullable(Type.String()),
}, { $id: 'UserProfileResponse' });

const Mapping = Type.Object({ group: Str({ minLength: 1, maxLength: 256 }), role: Str({ maxLength: 64 }) });
export const GroupMappingsResponse = Type.Object({ mappings: Type.Array(Mapping) }, { $id: 'GroupMappingsResponse' });
export const GroupMappingsUpdateRequest = Type.Object({ mappings: Type.Array(Mapping, { maxItems: 1000 }) }, { $id: 'GroupMappingsUpdateRequest' });

const User = Type.Object({
  id: Type.String(), provider: Type.String(), issuer: Type.String(), subject: Type.String(), email: Nullable(Type.String()),
  display_name: Nullable(Type.String()), groups: Type.Array(Type.String()), role: Type.String(), created_at: Type.String(), last_login_at: Type.String(),
});
export const UsersResponse = Type.Object({ users: Type.Array(User), total: Type.Integer() }, { $id: 'UsersResponse' });
export const StatusResponse = Type.Object({ status: Type.String(), detail: Type.Optional(Type.String()) }, { $id: 'AuthStatusResponse' });
