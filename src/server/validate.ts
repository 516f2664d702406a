import { type TSchema, TypeCompiler, type TypeCheck, ValueErrorType, type ValueError, Value, FormatRegistry } from '../lib/typebox.ts';

/** One entry of a FastAPI-shaped 422 body. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
}
export type Where = 'body' | 'query' | 'path';

const TYPE: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.ObjectRequiredProperty]: 'missing', [ValueErrorType.ObjectAdditionalProperties]: 'extra_forbidden',
  [ValueErrorType.String]: 'string_type', [ValueErrorType.StringMinLength]: 'string_too_short',
  [ValueErrorType.StringMaxLength]: 'string_too_long', [ValueErrorType.StringPattern]: 'string_pattern_mismatch',
  [ValueErrorType.StringFormat]: 'value_error', [ValueErrorType.Integer]: 'int_type', [ValueErrorType.Number]: 'float_type',
  [ValueErrorType.Boolean]: 'bool_type', [ValueErrorType.Array]: 'list_type',
  [ValueErrorType.ArrayMaxItems]: 'too_long', [ValueErrorType.ArrayMinItems]: 'too_short',
  [ValueErrorType.IntegerMinimum]: 'greater_than_equal', [ValueErrorType.IntegerMaximum]: 'less_than_equal',
  [ValueErrorType.NumberMinimum]: 'greater_than_equal', [ValueErrorType.NumberMaximum]: 'less_than_equal',
  [ValueErrorType.IntegerExclusiveMinimum]: 'greater_than', [ValueErrorType.NumberExclusiveMinimum]: 'greater_than',
  [ValueErrorType.IntegerExclusiveMaximum]: 'less_than', [ValueErrorType.NumberExclusiveMaximum]: 'less_than',
  [ValueErrorType.Union]: 'union_tag_invalid', [ValueErrorType.Literal]: 'literal_error', [ValueErrorType.Object]: 'model_type',
  [ValueErrorType.Null]: 'none_required',
};

/** A validation failure carrying FastAPI-shaped issues; the app answers 422 `{"detail": issues}`. */
export class ValidationFailed extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super('validation failed');
    this.name = 'ValidationFailed';
  }
}

/** Map TypeBox errors to `{loc, msg, type}` issues, one per location ('missing' wins over a type error). */
export function toIssues(errors: Iterable<ValueError>, where: Where): ValidationIssue[] {
  const byLoc = new Map<string, ValidationIssue>();
  for (const e of errors) {
    const parts = e.path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const loc = [where, ...parts.map((s) => (/^\d+$/.test(s) ? Number(s) : s))];
    const key = loc.join('\u0000');
    const options = literalOptions(e.schema);
    const type = options ? 'literal_error' : TYPE[e.type] ?? 'value_error';
    if (byLoc.has(key) && type !== 'missing') continue;
    const msg = options && type !== 'missing' ? `${String(loc[loc.length - 1])} must be one of ${options.join(', ')}` : e.message;
    byLoc.set(key, { loc, msg, type, ...(type === 'missing' ? {} : { input: e.value }) });
  }
  return [...byLoc.values()];
}

// The allowed values of an enum (a union of string literals), listed in a 422 so the caller can fix the request.
function literalOptions(schema: TSchema): string[] | undefined {
  const s = schema as { anyOf?: { const?: unknown }[]; const?: unknown };
  if (!s.anyOf?.length || !s.anyOf.every((x) => typeof x.const === 'string')) return undefined;
  return s.anyOf.map((x) => x.const as string);
}

/** A compiled schema that fills defaults, checks, and throws ValidationFailed with located issues. */
export interface Validator {
  schema: TSchema;
  /** Defaults filled, optionally string values converted (query, path, form), then checked. */
  parse(value: unknown, where: Where, convert?: boolean): unknown;
}

/**
 * Compiled at a route's first request (`refs` resolves Type.Ref targets): the schemas of every route
 * cost a start ~0.2 s of compiling, most of them for routes a server never sees.
 */
export function compileValidator(schema: TSchema, refs: TSchema[]): Validator {
  let parse: Validator['parse'] | undefined;
  return { schema, parse: (value, where, convert = false) => (parse ??= compile(schema, refs))(value, where, convert) };
}

function compile(schema: TSchema, refs: TSchema[]): Validator['parse'] {
  const check: TypeCheck<TSchema> = TypeCompiler.Compile(schema, refs);
  // Decided once: TypeBox's Default and Convert walk the schema at every call, and most schemas need neither.
  const defaults = hasKeyword(schema, refs, 'default', new Set());
  const converts = !stringsOnly(schema);
  return (value, where, convert) => {
    let v = defaults ? Value.Default(schema, refs, value) : value;
    // Convert may change its argument in place: keep the text as given for keepNonIntegers.
    if (convert && converts) v = keepNonIntegers(schema, v, Value.Convert(schema, refs, structuredClone(v)));
    if (check.Check(v)) return v;
    throw new ValidationFailed(toIssues(check.Errors(v), where));
  };
}

// True when `key` appears anywhere in the schema (Type.Ref targets followed).
function hasKeyword(schema: unknown, refs: TSchema[], key: string, seen: Set<unknown>): boolean {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return false;
  seen.add(schema);
  const o = schema as Record<string, unknown>;
  if (Object.hasOwn(o, key)) return true;
  if (typeof o.$ref === 'string' && hasKeyword(refs.find((r) => r.$id === o.$ref), refs, key, seen)) return true;
  return Object.values(o).some((v) => hasKeyword(v, refs, key, seen));
}

// An object schema whose properties all take strings (path and query keys): converting text changes nothing.
function stringsOnly(schema: TSchema): boolean {
  const props = (schema as { properties?: Record<string, unknown> }).properties;
  if (!props || (schema as { type?: unknown }).type !== 'object') return false;
  const isString = (p: unknown): boolean => {
    const q = p as { type?: unknown; anyOf?: unknown[]; const?: unknown };
    return q.type === 'string' || (typeof q.const === 'string' && q.type === undefined) || (Array.isArray(q.anyOf) && q.anyOf.length > 0 && q.anyOf.every(isString));
  };
  return Object.values(props).every(isString);
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

// TypeBox converts '1.5' to 1 and '1e23' to an unsafe integer: keep such text as given, so it fails as int_type.
function keepNonIntegers(schema: TSchema, raw: unknown, converted: unknown): unknown {
  const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  if (!props || typeof raw !== 'object' || raw === null || typeof converted !== 'object' || converted === null) return converted;
  const out = { ...(converted as Record<string, unknown>) };
  for (const [k, p] of Object.entries(props)) {
    const v = (raw as Record<string, unknown>)[k];
    if (p.type === 'integer' && typeof v === 'string' && !(INTEGER_TEXT.test(v) && Number.isSafeInteger(Number(v)))) out[k] = v;
  }
  return out;
}

/** Property names declared by an object schema (query keys the route knows about). */
export function schemaKeys(schema: TSchema): string[] {
  const props = (schema as { properties?: Record<string, unknown> }).properties;
  return props ? Object.keys(props) : [];
}

/** True when the property of an object schema accepts an array (a repeated query key is then legal). */
export function isArrayProp(schema: TSchema, key: string): boolean {
  const prop = (schema as { properties?: Record<string, { type?: unknown }> }).properties?.[key];
  return prop?.type === 'array';
}

/**
 * Keep only the query keys the schema declares; a scalar key given twice is an issue (not "last wins"),
 * and a single value for an array key becomes a one-element array.
 */
export function pickQuery(schema: TSchema, raw: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const issues: ValidationIssue[] = [];
  for (const key of schemaKeys(schema)) {
    const v = raw[key];
    if (v === undefined) continue;
    if (isArrayProp(schema, key)) out[key] = Array.isArray(v) ? v : [v];
    else if (Array.isArray(v)) issues.push({ loc: ['query', key], msg: 'Parameter given more than once', type: 'value_error', input: v });
    else out[key] = v;
  }
  if (issues.length) throw new ValidationFailed(issues);
  return out;
}

// Without a registered checker TypeBox fails every value of a format ("Unknown format").
const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(v) && !Number.isNaN(Date.parse(v)),
  date: (v) => /^\d{4}-\d\d-\d\d$/.test(v) && !Number.isNaN(Date.parse(v)),
  email: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v),
  uri: (v) => URL.canParse(v),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
};

/** Register the string formats route schemas may use (idempotent; TypeBox's registry is global). */
export function ensureFormats(): void {
  for (const [name, fn] of Object.entries(FORMATS)) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, fn);
}
