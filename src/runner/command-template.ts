// Shell-safe command templates: parsed into argv here, placeholders substituted per argument, never run by a shell.

/** Values a template may name: {prompt_file} {prompt} {model} {task_id} {session_id} {worktree} {mcp_config}. */
export interface TemplateValues {
  prompt_file: string;
  prompt: string;
  model: string;
  task_id: string;
  session_id: string;
  worktree: string;
  /** The svc MCP server in Claude Code's `--mcp-config` JSON; '' (or absent) when agents get none. */
  mcp_config?: string;
}

/** Thrown for a template that cannot be split (unterminated quote, trailing backslash, no words). */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

const PLACEHOLDER = /\{(prompt_file|prompt|model|task_id|session_id|worktree|mcp_config)\}/g;
// Placeholders that may be empty: then the argument, and the flag before a bare one, are left out.
const OPTIONAL = ['model', 'mcp_config'] as const;

/** Split a template into words like a POSIX shell would (quotes, backslashes), without expansion. */
export function parseCommandTemplate(template: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && (template[i + 1] === '"' || template[i + 1] === '\\')) word += template[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= template.length) throw new TemplateError('command template ends with a backslash');
      word += template[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new TemplateError(`command template has an unterminated ${quote} quote`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new TemplateError('command template is empty');
  return words;
}

/**
 * Replace the known placeholders inside each argument; a value never splits or joins arguments. With no model
 * (or no MCP config), `--model {model}` and `--model={model}` are left out instead of passing "" (the CLI then
 * uses its own default).
 */
export function substitutePlaceholders(argv: readonly string[], values: TemplateValues): string[] {
  const out: string[] = [];
  const empty = OPTIONAL.filter((k) => !values[k]);
  argv.forEach((arg, i) => {
    const bare = empty.find((k) => arg === `{${k}}`);
    if (bare) {
      // The flag before a bare empty placeholder is its name: drop both (unless that word was a placeholder itself).
      if (i > 0 && /^-/.test(argv[i - 1]!) && !PLACEHOLDER_ONE.test(argv[i - 1]!)) out.pop();
      return;
    }
    if (empty.some((k) => new RegExp(`^-[^=]*=\\{${k}\\}$`).test(arg))) return;
    out.push(arg.replace(PLACEHOLDER, (_m, key: keyof TemplateValues) => values[key] ?? ''));
  });
  return out;
}
const PLACEHOLDER_ONE = new RegExp(PLACEHOLDER.source);

/** True when the template names at least one placeholder (then it is a whole command, not a prefix). */
export function hasPlaceholder(template: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(template);
}
