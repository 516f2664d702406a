import type { ArgsDef } from 'citty';
import { CliError, UsageError } from './args.ts';
import { call, EXIT, resolveEndpoint, type Endpoint } from './client.ts';
import type { RunContext } from './command.ts';

/** --server and --token of every command that talks to a running svc. */
export const CONN = {
  server: { type: 'string', valueHint: 'url', description: 'Address of the svc server (default: SERVICE_SERVER_URL, else the svc running in this repository)' },
  token: { type: 'string', valueHint: 'token', description: "Bearer token (default: SERVICE_AUTH_TOKEN, else this repository's .sdd/secrets/admin.token)" },
} as const satisfies ArgsDef;

/** The server and token of a command run. */
export function endpoint(c: RunContext): Endpoint {
  return resolveEndpoint(c.env, String(c.values.workdir ?? process.cwd()), { server: c.values.server as string | undefined, token: c.values.token as string | undefined });
}

/** Drop undefined members (optional body fields and query values). */
export const optional = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** A query string of the defined values. */
export const query = (o: Record<string, string | number | boolean | undefined>): string =>
  new URLSearchParams(Object.entries(o).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : [[k, String(v)]]))).toString();

const FULL_ID = /^[0-9a-z]{26}$/;
const PREFIX = /^[0-9a-z]{6,25}$/;

/** A task id from what the user typed: a full id as is, or a unique prefix of at least 6 characters. */
export async function resolveTaskId(ep: Endpoint, raw: string | undefined): Promise<string> {
  if (!raw) throw new UsageError('missing argument: task id');
  const id = raw.trim().toLowerCase();
  if (FULL_ID.test(id) || !PREFIX.test(id)) return encodeURIComponent(raw.trim());
  const page = await call<{ tasks: { id: string; title: string }[]; total: number }>(ep, 'GET', `/tasks/search?${query({ id_prefix: id, per_page: 5 })}`);
  if (page.total === 1) return page.tasks[0]!.id;
  if (page.total === 0) throw new CliError(`no task id starts with '${id}'`, EXIT.notFound);
  throw new UsageError(`task id prefix '${id}' is ambiguous: ${page.tasks.map((t) => t.id).join(', ')}${page.total > 5 ? ', …' : ''} (give more characters)`);
}
