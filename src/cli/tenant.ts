import { defineCommand } from 'citty';
import { addTenant, listTenants, setTenant } from '../auth/index.ts';
import { HttpError } from '../lib/http-error.ts';
import { CliError, intArg } from './args.ts';
import { command, type RunContext } from './command.ts';
import { localLayout } from './offline.ts';
import { table } from './table.ts';

const NAME = { name: { type: 'positional', description: 'Tenant name' } } as const;
const MAX = { 'max-tasks': { type: 'string', valueHint: 'n', description: 'Active tasks the tenant may hold (not done or finished)' } } as const;

async function guard(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof HttpError) throw new CliError(err.detail, err.status === 422 ? 2 : 1);
    throw err;
  }
}
const show = async (c: RunContext) => {
  const rows = await listTenants(localLayout(c));
  c.out(c.values.json ? JSON.stringify(rows, null, 2) : table(rows, ['name', 'max_tasks', 'explicit']));
};

const add = command({ name: 'tenant add', description: 'Add a tenant' }, { ...NAME, ...MAX }, (c) => guard(async () => {
  await addTenant(localLayout(c), c.positionals[0]!, { maxTasks: intArg('max-tasks', c.values['max-tasks'], 0, 1e9) });
  await show(c);
}));
const set = command({ name: 'tenant set', description: "Change a tenant's quota" }, { ...NAME, ...MAX }, (c) => guard(async () => {
  await setTenant(localLayout(c), c.positionals[0]!, { maxTasks: intArg('max-tasks', c.values['max-tasks'], 0, 1e9) ?? null });
  await show(c);
}));
const list = command({ name: 'tenant list', description: 'List tenants and their quotas' }, {}, (c) => guard(() => show(c)));

/** `svc tenant add|list|set`. */
export const tenantCommand = defineCommand({ meta: { name: 'tenant', description: 'Tenants and their task quotas (.sdd/tenants.json)' }, subCommands: { add, list, set } });
