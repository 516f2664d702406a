import { defineCommand } from 'citty';
import { createToken, listTokens, revokeToken, tokenState, ROLES } from '../auth/index.ts';
import { systemClock } from '../lib/clock.ts';
import { HttpError } from '../lib/http-error.ts';
import type { Role } from '../lib/route.ts';
import { CliError, UsageError } from './args.ts';
import { command } from './command.ts';
import { auditOffline } from './audit.ts';
import { localLayout } from './offline.ts';
import { table } from './table.ts';

const create = command({ name: 'token create', description: 'Issue a bearer token (printed once; only its hash is stored)' }, {
  role: { type: 'enum', options: [...ROLES], description: 'What the token may do' },
  tenant: { type: 'string', valueHint: 'name', description: 'Bind the token to a tenant' },
  expires: { type: 'string', valueHint: 'duration', description: 'Lifetime, e.g. 30d, 12h, 45m (default: never)' },
  label: { type: 'string', valueHint: 'text', description: 'A note for people' },
  task: { type: 'string', valueHint: 'id', description: 'Scope an agent token to one task' },
}, async (c) => {
  const role = String(c.values.role ?? '');
  if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const layout = localLayout(c);
  let result;
  try {
    result = await createToken(layout, { role: role as Role, tenant: c.values.tenant as string | undefined, expiresIn: c.values.expires as string | undefined, label: c.values.label as string | undefined, taskId: c.values.task as string | undefined }, systemClock);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  await auditOffline(layout, { actor: 'cli', action: 'token.issue', resource_type: 'token', resource_id: result.record.id, details: { role, tenant: result.record.tenant } });
  if (c.values.json) return c.out(JSON.stringify({ token: result.token, ...result.record, hash: undefined }, null, 2));
  c.out(`${result.token}\n(id ${result.record.id}, role ${role}${result.record.tenant ? `, tenant ${result.record.tenant}` : ''}; shown once, store it now)`);
});

const list = command({ name: 'token list', description: 'List issued tokens (never their secrets)' }, {
  all: { type: 'boolean', description: 'Also the revoked and expired tokens of finished agent runs' },
}, async (c) => {
  const now = systemClock.now();
  const all = (await listTokens(localLayout(c))).map(({ hash: _h, ...r }) => ({ ...r, state: tokenState({ ...r, hash: '' }, now) }));
  // Every agent run gets a token that dies with it: those pile up and hide the tokens people made.
  const rows = c.values.all ? all : all.filter((r) => !(r.task_id && r.state !== 'active'));
  if (c.values.json) return c.out(JSON.stringify(rows, null, 2));
  const hidden = all.length - rows.length;
  c.out(table(rows, ['id', 'role', 'tenant', 'state', 'created_at', 'expires_at', 'label']) + (hidden ? `\n(${hidden} revoked or expired agent-run token(s) hidden; --all shows them)` : ''));
});

const revoke = command({ name: 'token revoke', description: 'Revoke a token by id' }, { id: { type: 'positional', description: 'Token id (tok_…)' } }, async (c) => {
  const layout = localLayout(c);
  try {
    const rec = await revokeToken(layout, c.positionals[0]!, systemClock);
    await auditOffline(layout, { actor: 'cli', action: 'token.revoke', resource_type: 'token', resource_id: rec.id, details: {} });
    c.out(c.values.json ? JSON.stringify({ id: rec.id, revoked_at: rec.revoked_at }) : `revoked ${rec.id}`);
  } catch (err) {
    // Tokens are secrets, never in refs/sdd/state: name the file that was searched.
    if (err instanceof HttpError) throw new CliError(`${err.detail} in ${layout.tokens}`, err.status === 404 ? 3 : 1);
    throw err;
  }
});

/** `svc token create|list|revoke`. */
export const tokenCommand = defineCommand({ meta: { name: 'token', description: 'Bearer tokens for the task API' }, subCommands: { create, list, revoke } });
