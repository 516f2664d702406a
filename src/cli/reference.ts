import type { ArgsDef, CommandDef } from 'citty';
import { subCommandsOf } from './run.ts';

type Resolvable<T> = T | Promise<T> | (() => T | Promise<T>);
const resolve = async <T>(v: Resolvable<T>): Promise<T> => (typeof v === 'function' ? (v as () => T | Promise<T>)() : v);

/** One command of the tree with the words that name it. */
export interface CommandDoc { path: string[]; description: string; args: ArgsDef; group: boolean }

/** Every command under `root`, depth first in definition order (loads each lazy subcommand). */
export async function listCommands(root: CommandDef, path = ['svc']): Promise<CommandDoc[]> {
  const meta = await resolve(root.meta ?? {});
  const args = (await resolve(root.args ?? {})) as ArgsDef;
  const subs = await subCommandsOf(root);
  const out: CommandDoc[] = [{ path, description: meta.description ?? '', args, group: !!subs }];
  for (const [name, sub] of Object.entries(subs ?? {})) out.push(...(await listCommands(await resolve(sub), [...path, name])));
  return out;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

// `--flag=<hint>` the way `--help` prints it.
function flag(name: string, def: ArgsDef[string]): string {
  if (def.type === 'positional') return `<${name.toUpperCase()}>`;
  const alias = ('alias' in def ? [def.alias ?? []].flat() : []).map((a) => `-${a}, `).join('');
  if (def.type === 'boolean') return `${alias}--${name}`;
  const hint = def.valueHint ?? (def.type === 'enum' && 'options' in def && def.options ? def.options.join('|') : name);
  return `${alias}--${name}=<${hint}>`;
}

/** docs/cli.md, generated from the command definitions (`npm run docs:cli`): new commands appear when regenerated. */
export async function cliReference(root: CommandDef): Promise<string> {
  const all = await listCommands(root);
  const out = [
    '# CLI reference',
    '',
    '<!-- Generated from the command definitions in src/cli/ by `npm run docs:cli`; do not edit by hand. -->',
    '',
    'Every command prints a table for people and JSON with `--json`. Commands that talk to a running svc find it',
    'through `--server`, else `SERVICE_SERVER_URL`, else `.sdd/runtime/server.json` of the repository they run in,',
    'and take the token from `--token`, else `SERVICE_AUTH_TOKEN`, else `.sdd/secrets/admin.token`.',
    'Task ids may be shortened to any unique start of at least 6 characters.',
    '',
    'Exit codes: 0 ok; 1 failed (a check failed, the server refused); 2 usage error; 3 not found;',
    '4 authentication or permission; 5 cannot reach the server.',
    '',
    '| command | what it does |',
    '| --- | --- |',
    ...all.filter((c) => !c.group).map((c) => `| [\`${c.path.join(' ')}\`](#${c.path.join('-')}) | ${cell(c.description)} |`),
  ];
  for (const c of all.filter((x) => !x.group)) {
    const entries = Object.entries(c.args);
    const positionals = entries.filter(([, d]) => d.type === 'positional').map(([n]) => ` <${n.toUpperCase()}>`).join('');
    out.push('', `<a id="${c.path.join('-')}"></a>`, `## ${c.path.join(' ')}`, '', c.description, '', '```', `${c.path.join(' ')} [OPTIONS]${positionals}`, '```');
    if (entries.length) {
      out.push('', '| argument | meaning |', '| --- | --- |');
      for (const [name, def] of entries) out.push(`| \`${cell(flag(name, def))}\` | ${cell(def.description ?? '')} |`);
    }
  }
  return `${out.join('\n')}\n`;
}
