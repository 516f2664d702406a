import { defineCommand, type ArgsDef, type CommandDef } from 'citty';
import { CliError, UsageError, strictArgs } from './args.ts';

export type Values = Record<string, string | boolean | undefined>;
export interface RunContext {
  values: Values;
  positionals: string[];
  /** The arguments as typed (for repeatable flags such as `svc worker --label`). */
  rawArgs: string[];
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
}

const COMMON: ArgsDef = {
  json: { type: 'boolean', description: 'Print JSON for programs' },
  workdir: { type: 'string', valueHint: 'dir', description: 'The repository to work in (default: the current directory)' },
};

/** A citty command whose arguments are validated strictly and whose errors map to exit codes (usage 2, failure 1). */
export function command(meta: { name: string; description: string }, args: ArgsDef, run: (ctx: RunContext) => Promise<void> | void): CommandDef {
  const all = { ...args, ...COMMON };
  return defineCommand({
    meta,
    args: all,
    async run({ rawArgs }) {
      try {
        const { values, positionals } = strictArgs(all as never, rawArgs);
        const needed = Object.entries(args).filter(([, d]) => d.type === 'positional' && d.required !== false).length;
        if (positionals.length < needed) throw new UsageError(`missing argument: ${Object.entries(args).filter(([, d]) => d.type === 'positional')[positionals.length]?.[0]}`);
        await run({ values, positionals, rawArgs, env: process.env, out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`) });
      } catch (err) {
        exitFor(err, meta.name);
      }
    },
  });
}

/** Print an error and exit with its code: usage 2, CliError its own, anything else 1. */
export function exitFor(err: unknown, name: string): never {
  const who = name ? `svc ${name}` : 'svc';
  if (err instanceof UsageError) {
    process.stderr.write(`${who}: ${err.message}\nRun '${who} --help' for usage.\n`);
    process.exit(2);
  }
  if (err instanceof CliError) {
    process.stderr.write(`${who}: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stderr.write(`${who}: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
}
