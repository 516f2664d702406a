import { renderUsage, runCommand, type CommandDef, type SubCommandsDef } from 'citty';
import { UsageError } from './args.ts';
import { exitFor } from './command.ts';
import { suggestion } from './suggest.ts';

type Resolvable<T> = T | Promise<T> | (() => T | Promise<T>);
const resolve = async <T>(v: Resolvable<T>): Promise<T> => (typeof v === 'function' ? (v as () => T | Promise<T>)() : v);

/** A command reached from the root: its definition and the words that name it (`svc task create`). */
export interface ResolvedCommand {
  cmd: CommandDef;
  path: string[];
  /** Arguments after the command's name. */
  rest: string[];
}

const HELP = new Set(['--help', '-h']);
const wantsHelp = (args: string[]) => args.slice(0, args.includes('--') ? args.indexOf('--') : undefined).some((a) => HELP.has(a));

/** The sub-commands of a command (each resolved only when asked for: `svc task list` never loads the server). */
export async function subCommandsOf(cmd: CommandDef): Promise<SubCommandsDef | undefined> {
  const subs = cmd.subCommands === undefined ? undefined : await resolve(cmd.subCommands);
  return subs && Object.keys(subs).length ? subs : undefined;
}

/** Follow the words of `argv` down the command tree; an unknown word is a UsageError with the closest name. */
export async function findCommand(root: CommandDef, argv: string[], name = 'svc'): Promise<ResolvedCommand> {
  let cmd = root;
  const path = [name];
  let rest = argv;
  for (;;) {
    const subs = await subCommandsOf(cmd);
    const word = rest[0];
    if (!subs || word === undefined || word.startsWith('-')) return { cmd, path, rest };
    if (!Object.hasOwn(subs, word)) {
      throw Object.assign(new UsageError(`unknown command '${word}'${suggestion(word, Object.keys(subs))}`), { where: path.slice(1).join(' ') });
    }
    cmd = await resolve(subs[word]!);
    path.push(word);
    rest = rest.slice(1);
  }
}

/** The help text of a command under its full name; no colour codes unless the output is a terminal. */
export async function helpText(found: Pick<ResolvedCommand, 'cmd' | 'path'>, color: boolean, version?: string): Promise<string> {
  const meta = await resolve(found.cmd.meta ?? {});
  const text = await renderUsage({ ...found.cmd, meta: { version, ...meta, name: found.path.join(' ') } });
  return color ? text : stripAnsi(text);
}

/** Remove terminal colour codes. */
export const stripAnsi = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

/** Run the CLI: help, version, then the command; usage errors exit 2 (DECISIONS.md "CLI exit codes"). */
export async function runCli(root: CommandDef, argv: string[]): Promise<void> {
  const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
  // `svc task list | head -1`: a reader that goes away ends the command quietly, not with a stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => { if (err.code === 'EPIPE') process.exit(0); throw err; });
  let found: ResolvedCommand | undefined;
  try {
    const meta = await resolve(root.meta ?? {});
    if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) return void process.stdout.write(`${meta.version}\n`);
    found = await findCommand(root, argv);
    const group = await subCommandsOf(found.cmd);
    if (wantsHelp(found.rest) || (group && found.rest.length === 0)) {
      const text = await helpText(found, color, meta.version);
      (group && !wantsHelp(found.rest) ? process.stderr : process.stdout).write(`${text}\n`);
      if (group && !wantsHelp(found.rest)) process.exit(2);
      return;
    }
    if (group) throw new UsageError(`unknown flag ${found.rest[0]}`);
    await runCommand(found.cmd, { rawArgs: found.rest });
  } catch (err) {
    // citty's own argument errors (a missing positional) are usage errors too.
    const usage = err instanceof UsageError || (err as { name?: string })?.name === 'CLIError';
    const where = (err as { where?: string })?.where ?? found?.path.slice(1).join(' ') ?? '';
    exitFor(usage && !(err instanceof UsageError) ? new UsageError(stripAnsi((err as Error).message)) : err, where);
  }
}
