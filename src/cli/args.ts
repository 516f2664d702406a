import { parseArgs } from 'node:util';

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

/** An integer flag within bounds, or a UsageError naming the flag. */
export function intArg(name: string, value: string | boolean | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw new UsageError(`--${name} expects an integer, got '${String(value)}'`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}
