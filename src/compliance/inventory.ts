// Workload governance inventory (pure): the svc/govern label of each workload, transitions and an order-free hash.
import { createHash } from 'node:crypto';
import canonicalizeCjs from 'canonicalize';

const canonicalize = canonicalizeCjs as unknown as (v: unknown) => string | undefined;
export const GOVERN_LABEL = 'svc/govern';
export const STATES = ['governed', 'opted_out', 'ungoverned'] as const;
export type GovernState = (typeof STATES)[number];

export interface Workload {
  uid: string;
  namespace: string;
  kind: string;
  name: string;
  state: GovernState;
  label_value: string | null;
  telemetry_source_label: string;
}
export interface Transition {
  kind: 'enrolled' | 'appeared' | 'opted_out' | 'withdrawn';
  workload_ref: string;
  uid: string;
  previous_state: GovernState | null;
  current_state: GovernState | null;
}

/** A listing the inventory refuses (bad shape, bad label value, duplicate workload); the CLI exits 1 with it. */
export class InventoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InventoryError';
  }
}

const VALUES: Record<string, GovernState> = { enabled: 'governed', true: 'governed', disabled: 'opted_out', false: 'opted_out' };
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The items of a listing: a JSON array, an object with `items` (`kubectl get … -o json`), or YAML documents of either. */
export function listingItems(docs: unknown[]): unknown[] {
  return docs.flatMap((d) => {
    if (Array.isArray(d)) return d;
    if (isObj(d) && Array.isArray(d.items)) return d.items;
    if (isObj(d) && typeof d.kind === 'string' && isObj(d.metadata)) return [d];
    if (d === null || d === undefined) return [];
    throw new InventoryError('manifests must be a JSON array, an object with an "items" array, or Kubernetes objects');
  });
}

/** One record per item, sorted by namespace, kind, name; every item counts as a workload. */
export function inventory(items: unknown[], labelKey = GOVERN_LABEL): Workload[] {
  const seen = new Set<string>();
  const out = items.map((item, i) => {
    if (!isObj(item) || !isObj(item.metadata)) throw new InventoryError(`item ${i}: metadata must be an object`);
    const md = item.metadata;
    const name = typeof md.name === 'string' ? md.name : '';
    const kind = typeof item.kind === 'string' ? item.kind : '';
    if (!name || !kind) throw new InventoryError(`item ${i}: metadata.name and kind must be non-empty strings`);
    const namespace = typeof md.namespace === 'string' && md.namespace ? md.namespace : 'default';
    const ref = `${namespace}/${kind}/${name}`;
    if (seen.has(ref)) throw new InventoryError(`duplicate workload ${ref}`);
    seen.add(ref);
    if (md.labels !== undefined && !isObj(md.labels)) throw new InventoryError(`${ref}: metadata.labels must be a mapping`);
    const raw = md.labels?.[labelKey];
    const label = raw === undefined || raw === null ? null : String(raw);
    const state = label === null ? 'ungoverned' : VALUES[label.trim().toLowerCase()];
    if (!state) throw new InventoryError(`${ref}: label ${labelKey}=${JSON.stringify(label)} is not one of enabled, disabled (or true, false)`);
    const uid = typeof md.uid === 'string' && md.uid ? md.uid : ref;
    return { uid, namespace, kind, name, state, label_value: label, telemetry_source_label: `k8s:${ref}` };
  });
  const key = (w: Workload) => [w.namespace, w.kind, w.name];
  return out.sort((a, b) => { const x = key(a); const y = key(b); for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1; return 0; });
}

/** `sha256:` + SHA-256 of RFC 8785 JSON of the surfaces in record order (records are sorted, so listing order does not matter). */
export function inventoryHash(workloads: Workload[]): string {
  const surfaces = workloads.map((w) => ({ surface: w.telemetry_source_label, observed_value: w.state, evidence_ref: `uid:${w.uid}` }));
  return `sha256:${createHash('sha256').update(canonicalize({ surfaces }) ?? '').digest('hex')}`;
}

/** The `workloads` rows of an earlier inventory document. */
export function previousWorkloads(doc: unknown): Workload[] {
  const rows = isObj(doc) && Array.isArray(doc.workloads) ? doc.workloads : null;
  if (!rows) throw new InventoryError('the previous inventory has no "workloads" array');
  return rows.map((r, i) => {
    if (!isObj(r) || !(STATES as readonly unknown[]).includes(r.state) || typeof r.namespace !== 'string' || typeof r.kind !== 'string' || typeof r.name !== 'string') {
      throw new InventoryError(`previous workload ${i}: needs namespace, kind, name and a state of ${STATES.join(', ')}`);
    }
    return r as unknown as Workload;
  });
}

/** Changes from `before` to `now`, matched by namespace/kind/name and sorted by that reference. */
export function transitions(before: Workload[], now: Workload[]): Transition[] {
  const ref = (w: Workload) => `${w.namespace}/${w.kind}/${w.name}`;
  const old = new Map(before.map((w) => [ref(w), w]));
  const cur = new Map(now.map((w) => [ref(w), w]));
  const out: Transition[] = [];
  for (const r of [...new Set([...old.keys(), ...cur.keys()])].sort()) {
    const a = old.get(r);
    const b = cur.get(r);
    const t = (kind: Transition['kind']): Transition => ({ kind, workload_ref: r, uid: (b ?? a)!.uid, previous_state: a?.state ?? null, current_state: b?.state ?? null });
    if (!b) out.push(t('withdrawn'));
    else if (!a) out.push(t(b.state === 'governed' ? 'enrolled' : 'appeared'));
    else if (a.state !== b.state) out.push(t(b.state === 'governed' ? 'enrolled' : 'opted_out'));
  }
  return out;
}

/** Text for people: the workload table, the hash, then the changes. */
export function renderInventory(labelKey: string, workloads: Workload[], hash: string, changes: Transition[]): string {
  const pad = (cols: string[], widths: number[]) => cols.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const rows = workloads.map((w) => [w.namespace, w.kind, w.name, w.state, w.label_value ?? '-']);
  const head = ['Namespace', 'Kind', 'Name', 'State', 'Label'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const lines = [`Cluster governance inventory label=${labelKey}`, pad(head, widths), ...rows.map((r) => pad(r, widths)), `  inventory hash  ${hash}`, ''];
  if (!changes.length) return [...lines, '  no governance changes since the previous inventory'].join('\n');
  const crow = changes.map((t) => [t.kind, t.workload_ref, t.previous_state ?? '-', t.current_state ?? '-']);
  const chead = ['Change', 'Workload', 'From', 'To'];
  const cw = chead.map((h, i) => Math.max(h.length, ...crow.map((r) => r[i]!.length)));
  return [...lines, 'Governance changes', pad(chead, cw), ...crow.map((r) => pad(r, cw))].join('\n');
}
