// Exports of the board's evidence (pure): SARIF 2.1.0, OSCAL 1.0.4 assessment results, CSV. Same rows → same bytes.
import { createHash } from 'node:crypto';
import { csvCell } from '../lib/csv.ts';

/** One task's chain: task → session branch → gate report → merge commit. */
export interface EvidenceRow {
  task_id: string;
  title: string;
  role: string;
  status: string;
  created_at: string;
  completed_at: string;
  session_id: string | null;
  branch: string | null;
  gate_report: string | null;
  gates_passed: boolean | null;
  failed_gates: string[];
  merge_commit: string | null;
  merged_at: string | null;
}
/** The audit chain's verdict over the whole log. */
export interface AuditVerdict {
  status: 'verified' | 'broken' | 'unverifiable' | 'empty';
  records: number;
  detail: string;
}
export interface ExportInput {
  rows: EvidenceRow[];
  audit: AuditVerdict;
  stateCommit: string | null;
  since: string;
  until: string;
  toolVersion: string;
}
export const EXPORT_FORMATS = ['sarif', 'oscal', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** True when the task went through passing gates and was merged. */
export function governed(r: EvidenceRow): boolean {
  return r.gates_passed === true && r.merge_commit !== null;
}

function chainText(r: EvidenceRow): string {
  const gates = r.gates_passed === null ? 'no gate report' : r.gates_passed ? 'gates passed' : `gates failed (${r.failed_gates.join(', ') || 'optional only'})`;
  return `Task ${r.task_id} "${r.title}" (${r.status}): ${r.session_id ? `session ${r.session_id}` : 'no agent session'}, ${gates}, ${r.merge_commit ? `merged in ${r.merge_commit}` : 'not merged'}`;
}

/** SARIF 2.1.0: one result per task (rule svc/gated-merge) and one for the audit chain (rule svc/audit-chain). */
export function toSarif(x: ExportInput) {
  const results = x.rows.map((r) => ({
    ruleId: 'svc/gated-merge', kind: governed(r) ? 'pass' : 'fail',
    level: governed(r) ? 'none' : r.merge_commit && r.gates_passed === false ? 'error' : 'warning',
    message: { text: chainText(r) },
    locations: [{ logicalLocations: [{ name: r.task_id, fullyQualifiedName: `task/${r.task_id}`, kind: 'object' }], ...(r.gate_report ? { physicalLocation: { artifactLocation: { uri: r.gate_report } } } : {}) }],
    properties: { ...r },
  }));
  const audit = { ruleId: 'svc/audit-chain', kind: x.audit.status === 'verified' ? 'pass' : 'fail', level: x.audit.status === 'verified' ? 'none' : 'error', message: { text: `Audit chain ${x.audit.status}: ${x.audit.detail}` }, properties: { ...x.audit } };
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0',
    runs: [{
      tool: { driver: { name: 'svc', version: x.toolVersion, rules: [
        { id: 'svc/gated-merge', name: 'GatedMerge', shortDescription: { text: 'A task reaches the base branch through its session branch, passing gates and a merge commit' } },
        { id: 'svc/audit-chain', name: 'AuditChain', shortDescription: { text: 'The HMAC-chained audit log verifies' } },
      ] } },
      ...(x.stateCommit ? { versionControlProvenance: [{ repositoryUri: 'urn:svc:refs/sdd/state', revisionId: x.stateCommit }] } : {}),
      results: [...results, audit],
      properties: { since: x.since, until: x.until },
    }],
  };
}

/** A name-based UUID (version 5 layout over SHA-1), so the same evidence gets the same ids. */
export function uuidFor(name: string): string {
  const h = createHash('sha1').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** OSCAL 1.0.4 assessment results: one observation and one finding per task, one for the audit chain. */
export function toOscal(x: ExportInput) {
  const start = `${x.since}T00:00:00Z`;
  const end = `${x.until}T23:59:59Z`;
  const seed = `svc:${x.since}:${x.until}:${x.stateCommit ?? ''}`;
  const observation = (key: string, title: string, description: string, at: string, href: string | null) => ({
    uuid: uuidFor(`${seed}:obs:${key}`), title, description, methods: ['EXAMINE'], collected: at,
    ...(href ? { 'relevant-evidence': [{ href, description: 'gate report' }] } : {}),
  });
  const finding = (key: string, title: string, ok: boolean, target: string) => ({
    uuid: uuidFor(`${seed}:finding:${key}`), title, description: title,
    target: { type: 'objective-id', 'target-id': target, status: { state: ok ? 'satisfied' : 'not-satisfied' } },
    'related-observations': [{ 'observation-uuid': uuidFor(`${seed}:obs:${key}`) }],
  });
  const observations = [
    ...x.rows.map((r) => observation(r.task_id, `Task ${r.task_id}`, chainText(r), r.completed_at, r.gate_report)),
    observation('audit', 'Audit chain', `Audit chain ${x.audit.status}: ${x.audit.detail}`, end, null),
  ];
  const findings = [
    ...x.rows.map((r) => finding(r.task_id, chainText(r), governed(r), 'svc-gated-merge')),
    finding('audit', `Audit chain ${x.audit.status}`, x.audit.status === 'verified', 'svc-audit-chain'),
  ];
  return {
    'assessment-results': {
      uuid: uuidFor(seed),
      metadata: { title: `svc evidence ${x.since} to ${x.until}`, 'last-modified': end, version: x.toolVersion, 'oscal-version': '1.0.4' },
      'import-ap': { href: '#svc-assessment-plan' },
      results: [{
        uuid: uuidFor(`${seed}:result`), title: 'Board evidence', description: `Tasks completed from ${x.since} to ${x.until}: session branch, gate report and merge commit, with the audit chain's verdict`,
        start, end, 'reviewed-controls': { 'control-selections': [{ 'include-all': {} }] }, observations, findings,
      }],
    },
  };
}

export const CSV_COLUMNS = ['task_id', 'title', 'role', 'status', 'created_at', 'completed_at', 'session_id', 'branch', 'gate_report', 'gates_passed', 'failed_gates', 'merge_commit', 'merged_at', 'governed', 'audit_chain'] as const;

/** CSV (RFC 4180, CRLF): one row per task; empty cells for missing links. */
export function toCsv(x: ExportInput): string {
  const lines = x.rows.map((r) => CSV_COLUMNS.map((c) => csvCell(c === 'governed' ? governed(r) : c === 'audit_chain' ? x.audit.status : r[c])).join(','));
  return `${[CSV_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`;
}

/** The export in one format, as text. */
export function renderExport(format: ExportFormat, x: ExportInput): string {
  if (format === 'csv') return toCsv(x);
  return `${JSON.stringify(format === 'sarif' ? toSarif(x) : toOscal(x), null, 2)}\n`;
}
