import type { TSchema } from '../lib/typebox.ts';
import { KEY_DOCS, KEY_OVERRIDES } from './describe.ts';
import { ConfigSchema } from './schema.ts';

type Node = TSchema & {
  type?: string; properties?: Record<string, Node>; items?: Node; additionalProperties?: boolean | Node;
  anyOf?: Node[]; const?: unknown; default?: unknown; description?: string;
  minimum?: number; maximum?: number; exclusiveMinimum?: number; minLength?: number;
};

/** One documented key of config.yaml. */
export interface KeyRow { path: string; type: string; default: string; overrides: string; description: string; section: boolean }

/** Every key of the schema in file order, objects before their members (pure). */
export function configKeys(schema: TSchema = ConfigSchema, docs = KEY_DOCS): KeyRow[] {
  const rows: KeyRow[] = [];
  const visit = (node: Node, path: string) => {
    const props = node.properties ?? {};
    for (const [key, child] of Object.entries(props)) row(child, path ? `${path}.${key}` : key);
    if (node.additionalProperties && typeof node.additionalProperties === 'object') {
      for (const [key, child] of Object.entries(node.additionalProperties.properties ?? {})) row(child, `${path}.<name>.${key}`);
    }
  };
  const row = (node: Node, path: string) => {
    const isObject = node.type === 'object' && !!node.properties;
    const items = node.type === 'array' ? node.items : undefined;
    rows.push({
      path, type: typeName(node), default: defaultOf(node), overrides: KEY_OVERRIDES[path] ?? '',
      description: node.description ?? docs[path] ?? '', section: isObject,
    });
    if (isObject) visit(node, path);
    if (items?.type === 'object') for (const [key, child] of Object.entries(items.properties ?? {})) row(child, `${path}[].${key}`);
  };
  visit(schema as Node, '');
  return rows;
}

function typeName(n: Node): string {
  if (n.anyOf?.every((x) => x.const !== undefined)) return n.anyOf.map((x) => JSON.stringify(x.const)).join(' \\| ');
  const range = [n.minimum !== undefined ? `≥ ${n.minimum}` : '', n.exclusiveMinimum !== undefined ? `> ${n.exclusiveMinimum}` : '', n.maximum !== undefined ? `≤ ${n.maximum}` : '']
    .filter(Boolean).join(', ');
  if (n.type === 'array') return n.items?.type === 'object' ? 'list of objects' : `list of ${n.items?.type ?? 'values'}`;
  if (n.type === 'object') return n.properties ? 'section' : 'object';
  return `${n.type ?? 'any'}${range ? ` (${range})` : ''}`;
}

function defaultOf(n: Node): string {
  if (n.default === undefined || (n.type === 'object' && n.properties)) return '';
  return `\`${JSON.stringify(n.default)}\``;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** docs/configuration.md, generated from the config schema (`npm run docs:config`). */
export function configReference(schema: TSchema = ConfigSchema, docs = KEY_DOCS): string {
  const out = [
    '# Configuration reference',
    '',
    '<!-- Generated from src/config/schema.ts and src/config/describe.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    '`svc up` reads `.sdd/config.yaml` (created with every key commented, at its default). Every key is optional.',
    'The orchestrator re-reads the file when it changes (agents, gates, janitor, max_agents, batch_size, trackers); other',
    'keys apply at the next start. A value of the wrong type stops `svc up` with the file and the key named.',
    'Environment variables and `svc up` flags override the file where the "also" column says so.',
  ];
  for (const r of configKeys(schema, docs)) {
    if (!r.path.includes('.') && !r.path.includes('[')) {
      out.push('', `## ${r.path}`, '', r.description || '', '', '| key | type | default | also | what it does |', '| --- | --- | --- | --- | --- |');
      if (!r.section) out.push(`| \`${r.path}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.overrides)} | ${cell(r.description)} |`);
      continue;
    }
    out.push(`| \`${r.path}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.overrides)} | ${cell(r.description)} |`);
  }
  return `${out.join('\n').replace(/\n\n\n+/g, '\n\n')}\n`;
}
