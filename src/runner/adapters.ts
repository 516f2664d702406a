import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Config } from '../config/index.ts';
import { hasPlaceholder, parseCommandTemplate, substitutePlaceholders, type TemplateValues } from './command-template.ts';
import { codexMcpArgs, mcpConfigJson, type AgentMcp } from './mcp-config.ts';

/** The agent CLIs svc knows how to drive. */
export const ADAPTER_NAMES = ['claude', 'codex', 'gemini', 'aider', 'opencode', 'qwen', 'generic'] as const;
export type AdapterName = (typeof ADAPTER_NAMES)[number];

/** `agents.<name>` in config.yaml. */
export interface AdapterSettings {
  command?: string;
  model?: string;
}

/** What an adapter needs to build its argv. `model` is '' when neither task nor config names one. */
export type LaunchValues = TemplateValues;

// Prompts above this go by file: one argv string may not exceed 128 KiB on Linux (MAX_ARG_STRLEN).
const INLINE_PROMPT_MAX_BYTES = 100_000;

// Arguments after the binary, for each CLI's documented non-interactive mode (and its MCP configuration, where it has one).
const ARGS: Record<Exclude<AdapterName, 'generic'>, (v: LaunchValues, prompt: string, mcp?: AgentMcp) => string[]> = {
  claude: (v, p, mcp) => ['-p', p, ...opt('--model', v.model), ...(mcp ? ['--mcp-config', mcpConfigJson(mcp)] : []), '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'],
  codex: (v, p, mcp) => ['exec', ...opt('--model', v.model), ...(mcp ? codexMcpArgs(mcp) : []), '--dangerously-bypass-approvals-and-sandbox', p],
  gemini: (v, p) => ['-p', p, ...opt('--model', v.model), '--yolo'],
  aider: (v) => ['--message-file', v.prompt_file, ...opt('--model', v.model), '--yes-always', '--no-pretty', '--no-check-update'],
  opencode: (v, p) => ['run', ...opt('--model', v.model), p],
  qwen: (v, p) => ['-p', p, ...opt('--model', v.model), '--yolo'],
};

function opt(flag: string, value: string): string[] {
  return value ? [flag, value] : [];
}

/** True for the names of built-in adapters. */
export function isAdapterName(name: unknown): name is AdapterName {
  return typeof name === 'string' && (ADAPTER_NAMES as readonly string[]).includes(name);
}

/** `agents.<name>` of the config, typed (the schema allows any extra keys there). */
export function adapterSettings(agents: Config['agents'], name: AdapterName): AdapterSettings {
  const raw = (agents as Record<string, unknown>)[name];
  if (!raw || typeof raw !== 'object') return {};
  const { command, model } = raw as Record<string, unknown>;
  return { ...(typeof command === 'string' && command ? { command } : {}), ...(typeof model === 'string' && model ? { model } : {}) };
}

/** The model a run uses: the task's, else `agents.<name>.model`, else '' (the CLI's own default). */
export function resolveModel(taskModel: string | null | undefined, settings: AdapterSettings): string {
  return taskModel || settings.model || '';
}

/** The prompt argument: the prompt itself, or a pointer to the prompt file when it is too long for argv. */
export function promptArgument(values: LaunchValues): string {
  if (Buffer.byteLength(values.prompt) <= INLINE_PROMPT_MAX_BYTES) return values.prompt;
  return `Your complete instructions are in the file ${values.prompt_file}. Read that file first and follow it.`;
}

/**
 * The argv (binary first) that starts adapter `name`; throws TemplateError for a bad or missing template.
 * With `mcp`, CLIs that take an MCP configuration get the svc server, and a template gets `{mcp_config}`.
 */
export function buildArgv(name: AdapterName, settings: AdapterSettings, values: LaunchValues, mcp?: AgentMcp): string[] {
  const v = { ...values, prompt: promptArgument(values), mcp_config: mcp ? mcpConfigJson(mcp) : '' };
  if (name === 'generic') {
    if (!settings.command) throw new Error('agents.generic.command is not set in config.yaml');
    return substitutePlaceholders(parseCommandTemplate(settings.command), v);
  }
  // A command with placeholders is a whole template; without, it only replaces the binary (e.g. `npx claude`).
  if (settings.command && hasPlaceholder(settings.command)) return substitutePlaceholders(parseCommandTemplate(settings.command), v);
  const prefix = settings.command ? parseCommandTemplate(settings.command) : [name];
  return [...prefix, ...ARGS[name](v, v.prompt, mcp)];
}

/** True when a run of adapter `name` gets the svc MCP server (its CLI takes a configuration, or its template names {mcp_config}). */
export function takesMcp(name: AdapterName, settings: AdapterSettings): boolean {
  if (settings.command && hasPlaceholder(settings.command)) return settings.command.includes('{mcp_config}');
  return name === 'claude' || name === 'codex';
}

/** The executable an adapter would run (before PATH lookup), or null when generic has no template. */
export function adapterExecutable(name: AdapterName, settings: AdapterSettings): string | null {
  if (settings.command) return parseCommandTemplate(settings.command)[0] ?? null;
  return name === 'generic' ? null : name;
}

/** Adapter names in preference order (`agents.preference`, then the remaining built-ins). */
export function adapterOrder(agents: Config['agents']): AdapterName[] {
  const preferred = agents.preference.filter(isAdapterName);
  return [...new Set([...preferred, ...ADAPTER_NAMES])];
}

/** The absolute path of `bin` on `pathEnv` (or `bin` itself when it names a path), or null. */
export async function findOnPath(bin: string, pathEnv: string, cwd?: string): Promise<string | null> {
  const candidates = bin.includes('/') ? [isAbsolute(bin) || !cwd ? bin : join(cwd, bin)] : pathEnv.split(delimiter).filter(Boolean).map((d) => join(d, bin));
  for (const file of candidates) {
    try {
      await access(file, constants.X_OK);
      if ((await stat(file)).isFile()) return file;
    } catch {
      // not here; try the next directory
    }
  }
  return null;
}

/** One adapter found on PATH. */
export interface DetectedAdapter {
  name: AdapterName;
  executable: string;
}

/** Adapters whose executable is on `pathEnv`, in preference order. */
export async function detectAdapters(deps: { agents: Config['agents']; pathEnv: string; cwd?: string }): Promise<DetectedAdapter[]> {
  const found: DetectedAdapter[] = [];
  for (const name of adapterOrder(deps.agents)) {
    const bin = adapterExecutable(name, adapterSettings(deps.agents, name));
    const executable = bin ? await findOnPath(bin, deps.pathEnv, deps.cwd) : null;
    if (executable) found.push({ name, executable });
  }
  return found;
}

/** The adapter chosen for a task, or why none can run. */
export type AdapterChoice = { ok: true; name: AdapterName } | { ok: false; reason: string };

/** Pick the adapter: the task's own, else `agents.default`, else the first found on PATH in preference order. */
export function chooseAdapter(input: { requested?: string | null; agents: Config['agents']; detected: readonly DetectedAdapter[] }): AdapterChoice {
  const wanted = input.requested || input.agents.default;
  if (wanted) {
    if (!isAdapterName(wanted)) return { ok: false, reason: `unknown agent adapter '${wanted}'` };
    if (!input.detected.some((d) => d.name === wanted)) return { ok: false, reason: `agent adapter '${wanted}' is not on PATH` };
    return { ok: true, name: wanted };
  }
  const first = input.detected[0];
  return first ? { ok: true, name: first.name } : { ok: false, reason: 'no agent CLI found on PATH' };
}

/** Everything needed to start one agent run: adapter, model and argv. */
export interface AgentLaunch {
  adapter: AdapterName;
  model: string;
  argv: string[];
}

/** Resolve model and argv for `adapter` and one run (pure); `mcp` when the run gets the svc MCP server. */
export function planLaunch(input: { adapter: AdapterName; agents: Config['agents']; taskModel?: string | null; values: Omit<LaunchValues, 'model'>; mcp?: AgentMcp }): AgentLaunch {
  const settings = adapterSettings(input.agents, input.adapter);
  const model = resolveModel(input.taskModel, settings);
  return { adapter: input.adapter, model, argv: buildArgv(input.adapter, settings, { ...input.values, model }, input.mcp) };
}
