// A Rego v1 parser for tests: no OPA binary or wasm build runs here (docs/compliance.md says why), so the
// generated modules are parsed against the Rego grammar as documented by OPA's policy reference and written
// out as EBNF by the regorus project (docs/grammar.md): module, package, imports, default and spec rules,
// `if` bodies (v1 refuses a body without `if`), queries, with-modifiers, some/every/not, the expression
// precedence levels, refs with no whitespace before `.`/`[`, calls, arrays, sets, objects, comprehensions.
// It returns a small AST and a tiny evaluator for what the generated policies use.

type Tok = { k: 'id' | 'num' | 'str' | 'op' | 'nl' | 'eof'; v: string; at: number; end: number };
export type Expr =
  | { t: 'lit'; v: unknown }
  | { t: 'var'; name: string }
  | { t: 'ref'; base: Expr; key: Expr }
  | { t: 'call'; fn: Expr; args: Expr[] }
  | { t: 'bin'; op: string; l: Expr; r: Expr }
  | { t: 'coll'; kind: string; items: Expr[] };
export type Literal = { t: 'expr'; e: Expr; not: boolean } | { t: 'some' | 'every'; text: string };
export interface Rule { name: string; isDefault: boolean; value: Expr | null; bodies: Literal[][] }
export interface Module { pkg: string; imports: string[]; rules: Rule[]; comments: string[] }

const OPS = [':=', '==', '!=', '<=', '>=', '<', '>', '=', '+', '-', '*', '/', '|', '&', '(', ')', '[', ']', '{', '}', ',', ';', '.', ':'];
const KEYWORDS = new Set(['package', 'import', 'default', 'if', 'else', 'not', 'some', 'every', 'in', 'with', 'as', 'contains']);

function lex(src: string): { toks: Tok[]; comments: string[] } {
  const toks: Tok[] = [];
  const comments: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') { toks.push({ k: 'nl', v: '\n', at: i, end: i + 1 }); i++; continue; }
    if (c === ' ' || c === '\t' || c === '\r') { i++; continue; }
    if (c === '#') { const e = src.indexOf('\n', i); const end = e < 0 ? src.length : e; comments.push(src.slice(i, end)); i = end; continue; }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) { toks.push({ k: 'id', v: id[0], at: i, end: i + id[0].length }); i += id[0].length; continue; }
    const num = /^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i));
    if (num) { toks.push({ k: 'num', v: num[0], at: i, end: i + num[0].length }); i += num[0].length; continue; }
    if (c === '"') {
      const m = /^"(?:[^"\\\n]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/.exec(src.slice(i));
      if (!m) throw new Error(`bad string at ${i}`);
      toks.push({ k: 'str', v: JSON.parse(m[0]) as string, at: i, end: i + m[0].length }); i += m[0].length; continue;
    }
    if (c === '`') { const e = src.indexOf('`', i + 1); if (e < 0) throw new Error(`unterminated raw string at ${i}`); toks.push({ k: 'str', v: src.slice(i + 1, e), at: i, end: e + 1 }); i = e + 1; continue; }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new Error(`unexpected character ${JSON.stringify(c)} at ${i}`);
    toks.push({ k: 'op', v: op, at: i, end: i + op.length }); i += op.length;
  }
  toks.push({ k: 'eof', v: '', at: src.length, end: src.length });
  return { toks, comments };
}

/** Parse a Rego v1 module; throws with the position of the first syntax error. */
export function parseRego(src: string): Module {
  const { toks, comments } = lex(src);
  let p = 0;
  const peek = () => toks[p]!;
  const fail = (what: string): never => { throw new Error(`expected ${what} at offset ${peek().at}, found ${JSON.stringify(peek().v)}`); };
  const is = (v: string) => (peek().k === 'op' || peek().k === 'id') && peek().v === v;
  const eat = (v: string) => (is(v) ? toks[p++]! : fail(`'${v}'`));
  const skipNl = () => { while (peek().k === 'nl') p++; };
  const adjacent = () => toks[p - 1]!.end === peek().at;
  const ident = () => (peek().k === 'id' && !KEYWORDS.has(peek().v) ? toks[p++]!.v : fail('an identifier'));
  const pathRef = () => {
    let s = ident();
    while ((is('.') || is('[')) && adjacent()) {
      if (is('.')) { p++; if (!adjacent()) fail('no space after .'); s += `.${ident()}`; } else { p++; const t = peek(); if (t.k !== 'str') fail('a string'); p++; eat(']'); s += `[${JSON.stringify(t.v)}]`; }
    }
    return s;
  };

  const primary = (): Expr => {
    const t = peek();
    if (t.k === 'num') { p++; return { t: 'lit', v: Number(t.v) }; }
    if (t.k === 'str') { p++; return { t: 'lit', v: t.v }; }
    if (t.k === 'id' && ['true', 'false', 'null'].includes(t.v)) { p++; return { t: 'lit', v: t.v === 'null' ? null : t.v === 'true' }; }
    if (t.k === 'id' && !KEYWORDS.has(t.v)) { p++; return { t: 'var', name: t.v }; }
    if (is('(')) { p++; const e = membership(); eat(')'); return e; }
    if (is('-')) { p++; return { t: 'bin', op: '-', l: { t: 'lit', v: 0 }, r: inExpr() }; }
    if (is('[')) return collection('[', ']', 'array');
    if (is('{')) return collection('{', '}', 'set-or-object');
    return fail('a term');
  };
  const collection = (open: string, close: string, kind: string): Expr => {
    eat(open); skipNl();
    const items: Expr[] = [];
    while (!is(close)) {
      const e = inExpr();
      if (is(':')) { p++; items.push({ t: 'bin', op: ':', l: e, r: inExpr() }); } else if (is('|')) { p++; query(close); return { t: 'coll', kind: `${kind}-compr`, items: [e] }; } else items.push(e);
      skipNl();
      if (is(',')) { p++; skipNl(); } else break;
    }
    skipNl(); eat(close);
    return { t: 'coll', kind, items };
  };
  const term = (): Expr => {
    let e = primary();
    for (;;) {
      if (is('.') && adjacent()) { p++; e = { t: 'ref', base: e, key: { t: 'lit', v: ident() } }; } else if (is('[') && adjacent()) { p++; const k = inExpr(); eat(']'); e = { t: 'ref', base: e, key: k }; } else if (is('(') && adjacent()) {
        p++; const args: Expr[] = [];
        while (!is(')')) { args.push(inExpr()); if (is(',')) p++; else break; }
        eat(')'); e = { t: 'call', fn: e, args };
      } else return e;
    }
  };
  const level = (next: () => Expr, ops: string[]) => (): Expr => {
    let l = next();
    while (ops.some(is)) { const op = toks[p++]!.v; l = { t: 'bin', op, l, r: next() }; }
    return l;
  };
  const mulDiv = level(term, ['*', '/']);
  const arith = level(mulDiv, ['+', '-']);
  const and = level(arith, ['&']);
  const or = level(and, ['|']);
  const bool = level(or, ['==', '!=', '<=', '>=', '<', '>']);
  const inExpr = level(bool, ['in']);
  // membership-expr's `k, v in xs` form appears only after `some`, which is read as text above.
  const membership = (): Expr => inExpr();
  const literal = (): Literal => {
    if (is('some') || is('every')) { const start = peek().at; while (!(peek().k === 'nl' || is(';') || is('}') || peek().k === 'eof')) { if (is('{')) { collection('{', '}', 'body'); } else p++; } return { t: is('every') ? 'every' : 'some', text: src.slice(start, peek().at) }; }
    const not = is('not') ? (p++, true) : false;
    let e = inExpr();
    if (is(':=') || is('=')) { const op = toks[p++]!.v; e = { t: 'bin', op, l: e, r: membership() }; }
    while (is('with')) { p++; pathRef(); eat('as'); inExpr(); }
    return { t: 'expr', e, not };
  };
  const query = (close: string): Literal[] => {
    const out: Literal[] = [];
    skipNl();
    while (!is(close)) {
      out.push(literal());
      if (!(is(';') || peek().k === 'nl' || is(close))) fail(`';', a newline or '${close}'`);
      while (is(';') || peek().k === 'nl') p++;
    }
    if (!out.length) fail('a literal');
    return out;
  };
  const body = (): Literal[] => {
    eat('if');
    if (is('{')) { p++; const q = query('}'); eat('}'); return q; }
    return [literal()];
  };

  skipNl();
  eat('package');
  const pkg = pathRef();
  const imports: string[] = [];
  const rules: Rule[] = [];
  skipNl();
  while (is('import')) { p++; imports.push(pathRef()); if (is('as')) { p++; ident(); } skipNl(); }
  while (peek().k !== 'eof') {
    const isDefault = is('default') ? (p++, true) : false;
    const name = ident();
    let value: Expr | null = null;
    if (is(':=') || is('=')) { p++; value = isDefault ? term() : membership(); }
    else if (isDefault) fail("':=' after a default rule's name");
    const bodies: Literal[][] = [];
    if (!isDefault) {
      if (is('{')) fail("'if' before the rule body (Rego v1)");
      if (is('if')) bodies.push(body());
      while (is('else')) { p++; if (is(':=') || is('=')) { p++; membership(); } bodies.push(body()); }
      if (!bodies.length && !value) fail('a rule body or value');
    }
    if (!(peek().k === 'nl' || peek().k === 'eof')) fail('the end of the rule');
    skipNl();
    rules.push({ name, isDefault, value, bodies });
  }
  return { pkg, imports, rules, comments };
}

/** Every `input.<name>` a module reads, sorted. */
export function inputRefs(m: Module): string[] {
  const out = new Set<string>();
  const walk = (e: Expr): void => {
    if (e.t === 'ref' && e.base.t === 'var' && e.base.name === 'input' && e.key.t === 'lit') out.add(String(e.key.v));
    if (e.t === 'ref') { walk(e.base); walk(e.key); }
    if (e.t === 'bin') { walk(e.l); walk(e.r); }
    if (e.t === 'call') { walk(e.fn); e.args.forEach(walk); }
    if (e.t === 'coll') e.items.forEach(walk);
  };
  for (const r of m.rules) { if (r.value) walk(r.value); for (const b of r.bodies) for (const l of b) if (l.t === 'expr') walk(l.e); }
  return [...out].sort();
}

/** The value of rule `name` for `input`: a body whose literals all hold gives true, else the default. */
export function evalRule(m: Module, name: string, input: Record<string, unknown>): unknown {
  const val = (e: Expr): unknown => {
    if (e.t === 'lit') return e.v;
    if (e.t === 'var') return e.name === 'input' ? input : undefined;
    if (e.t === 'ref') { const b = val(e.base) as Record<string, unknown> | undefined; return b?.[String(val(e.key))]; }
    if (e.t === 'bin') {
      const l = val(e.l) as number; const r = val(e.r) as number;
      if (l === undefined || r === undefined) return undefined;
      return ({ '==': l === r, '!=': l !== r, '<=': l <= r, '>=': l >= r, '<': l < r, '>': l > r } as Record<string, unknown>)[e.op];
    }
    throw new Error(`not evaluated here: ${e.t}`);
  };
  const holds = (l: Literal) => l.t === 'expr' && (val(l.e) === true) !== l.not;
  for (const r of m.rules) if (r.name === name && !r.isDefault && r.bodies.some((b) => b.every(holds))) return r.value ? val(r.value) : true;
  return m.rules.find((r) => r.name === name && r.isDefault)?.value ? val(m.rules.find((r) => r.name === name && r.isDefault)!.value!) : undefined;
}
