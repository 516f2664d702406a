import { parseArgs } from 'node:util';
import { suggestion } from './suggest.ts';

/** A usage error: the CLI prints it with a hint and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failed check or refused operation: the CLI prints it and exits 1. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}

type ArgDef = { type: 'string' | 'boolean' | 'positional' | 'enum'; alias?: string | string[]; options?: readonly string[] };

// citty accepts unknown flags silently (parseArgs strict:false); re-parse strictly from the same definition.
/** Parse `rawArgs` strictly against a citty args definition; unknown flags and bad values are UsageErrors. */
export function strictArgs(defs: Record<string, ArgDef>, rawArgs: string[]): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === 'positional') continue;
    const type = def.type === 'boolean' ? 'boolean' : 'string';
    options[name] = { type };
    if (type === 'boolean') options[`no-${name}`] = { type: 'boolean' };
    for (const a of [def.alias ?? []].flat()) if (a.length === 1) options[name] = { type, short: a };
  }
  checkFlags(options, rawArgs);
  try {
    const parsed = parseArgs({ args: rawArgs, options, strict: true, allowPositionals: true });
    const values: Record<string, string | boolean | undefined> = {};
    for (const [name, def] of Object.entries(defs)) {
      if (def.type === 'positional') continue;
      const v = parsed.values[name] as string | boolean | undefined;
      const neg = parsed.values[`no-${name}`] as boolean | undefined;
      values[name] = neg ? false : v;
      if (def.type === 'enum' && typeof v === 'string' && def.options && !def.options.includes(v)) {
        throw new UsageError(`--${name} must be one of ${def.options.join(', ')} (got '${v}')`);
      }
    }
    return { values, positionals: parsed.positionals };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError((err as Error).message.replace(/^.*?: /, '').split('\n')[0] ?? 'bad arguments');
  }
}

// node's own message for an unknown option ends in an unclosed quote; say it plainly, with the closest flag.
function checkFlags(options: Record<string, { type: string; short?: string }>, rawArgs: string[]): void {
  const byShort = new Map(Object.values(options).filter((o) => o.short).map((o) => [o.short!, o]));
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === '--') return;
    if (!arg.startsWith('-') || arg === '-' || /^-\d/.test(arg)) continue;
    if (!arg.startsWith('--')) {
      const bad = [...arg.slice(1)].find((ch) => !byShort.has(ch));
      if (bad !== undefined) throw new UsageError(`unknown flag -${bad}`);
      if (arg.length === 2 && byShort.get(arg[1]!)?.type === 'string') i++;
      continue;
    }
    const name = arg.slice(2).split('=')[0]!;
    // The value of a string flag may itself start with '-'.
    if (Object.hasOwn(options, name)) { if (options[name]!.type === 'string' && !arg.includes('=')) i++; continue; }
    const known = Object.keys(options).filter((n) => !n.startsWith('no-'));
    throw new UsageError(`unknown flag --${name}${suggestion(name, known, '--')}`);
  }
}

/** An integer flag within bounds, or a UsageError naming the flag. */
export function intArg(name: string, value: string | boolean | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw new UsageError(`--${name} expects an integer, got '${String(value)}'`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}
