// What the tree shows (pure): facts gathered from `.sdd` become observed inputs; flags and defaults fill the rest.
import { INPUTS, type InputName, type InputValue } from './inputs.ts';
import type { Evidence, Snapshot } from './evaluate.ts';

/** Facts read from the tree by gather.ts; nothing here touches the disk. */
export interface Facts {
  /** refs/sdd/state head, or null when the board has no state history. */
  stateCommit: string | null;
  audit: {
    /** Segment paths relative to the work tree with their UTC dates, oldest first (archive included). */
    segments: { path: string; date: string }[];
    records: number;
    verdict: 'ok' | 'broken' | 'no-key' | 'empty';
    broken?: string;
  };
  config: {
    present: boolean;
    authEnabled: boolean;
    requiredGates: number;
    publicUrl: string | null;
    serverTls: boolean;
    sso: { configured: boolean; requireMfa: boolean; sessionTtlS: number };
    hipaa: boolean;
  };
  /** Live credentials (not revoked, not expired). `lifetime_h` is null for a token that never expires. */
  credentials: { kind: 'token' | 'admin_token' | 'cluster_secret'; ref: string; created_at: string; role: string | null; lifetime_h: number | null }[];
  sbom: string[];
  lockfiles: string[];
}

export interface Observation {
  value: InputValue;
  refs: string[];
  note: string;
}
export type Observations = Partial<Record<InputName, Observation>>;

const CONFIG = '.sdd/config.yaml';
const DAY = 86_400_000;

/** Every input the facts can speak to, as of `asOf` (ms; ages are whole days). */
export function observe(f: Facts, asOf: number): Observations {
  const o: Observations = {};
  const state = f.stateCommit ? [`refs/sdd/state@${f.stateCommit}`] : [];
  const segs = f.audit.segments;
  const auditRefs = segs.length ? [...new Set([segs[0]!.path, segs[segs.length - 1]!.path])] : ['.sdd/audit'];
  o.audit_logging = { value: f.audit.records > 0, refs: [...auditRefs, ...state], note: `${f.audit.records} audit record(s) in ${segs.length} segment(s)` };
  const oldest = segs[0];
  o.audit_retention_days = oldest
    ? { value: Math.max(0, Math.floor((asOf - Date.parse(`${oldest.date}T00:00:00Z`)) / DAY)), refs: [oldest.path, ...state], note: `oldest segment ${oldest.date}` }
    : { value: 0, refs: ['.sdd/audit'], note: 'no audit segments' };
  if (f.audit.verdict === 'ok' || f.audit.verdict === 'broken') {
    const ok = f.audit.verdict === 'ok';
    const note = ok ? `audit chain verified (${f.audit.records} records)` : `audit chain broken: ${f.audit.broken ?? ''}`;
    o.audit_hmac_chain = { value: ok, refs: [...auditRefs, ...state], note };
    o.log_integrity = { value: ok && f.stateCommit !== null, refs: [...auditRefs, ...state], note: ok && !f.stateCommit ? 'audit chain verified but not kept in refs/sdd/state' : note };
  }
  observeAccess(f, o, asOf, state);
  observeDelivery(f, o, state);
  return o;
}

function observeAccess(f: Facts, o: Observations, asOf: number, state: string[]): void {
  const cfg = f.config.present ? [CONFIG, ...state] : [];
  const creds = f.credentials;
  const roles = creds.filter((c) => c.role !== null);
  o.rbac_enabled = {
    value: f.config.authEnabled && roles.length > 0,
    refs: [...new Set([...cfg, ...roles.map((c) => c.ref)])].sort(),
    note: f.config.authEnabled ? `auth enabled; ${roles.length} live credential(s) with a role` : 'auth.enabled is false',
  };
  if (creds.length) {
    const ages = creds.map((c) => Math.max(0, Math.floor((asOf - Date.parse(c.created_at)) / DAY)));
    o.secrets_rotation_days = { value: Math.max(...ages), refs: [...new Set(creds.map((c) => c.ref))].sort(), note: `oldest of ${creds.length} live credential(s)` };
  }
  const agents = creds.filter((c) => c.role === 'agent');
  if (agents.length) {
    const life = agents.map((c) => c.lifetime_h ?? 9999);
    o.agent_token_expiry_hours = { value: Math.max(...life), refs: ['.sdd/secrets/tokens.json'], note: `longest lifetime of ${agents.length} live agent token(s)` };
  }
  if (f.config.sso.configured) {
    o.session_timeout_minutes = { value: Math.ceil(f.config.sso.sessionTtlS / 60), refs: cfg, note: 'auth.sso.session_ttl_s' };
    if (f.config.sso.requireMfa) o.mfa_enabled = { value: true, refs: cfg, note: 'auth.sso.require_mfa: logins without an MFA claim are refused' };
  }
}

function observeDelivery(f: Facts, o: Observations, state: string[]): void {
  const cfg = f.config.present ? [CONFIG, ...state] : [];
  const url = f.config.publicUrl;
  if (f.config.serverTls || url) {
    const tls = f.config.serverTls || /^https:\/\//i.test(url ?? '');
    const note = f.config.serverTls ? 'server.tls is configured' : `server.public_url is ${url}`;
    o.tls_enforced = { value: tls, refs: cfg, note };
    o.encrypt_in_transit = { value: tls, refs: cfg, note };
  }
  if (f.config.present) o.change_approval_gates = { value: f.config.requiredGates > 0, refs: cfg, note: `${f.config.requiredGates} required gate(s) configured` };
  o.sbom_enabled = { value: f.sbom.length > 0, refs: f.sbom.length ? f.sbom : ['sbom.cdx.json', 'sbom.spdx.json', '.sdd/artifacts/sbom/'], note: f.sbom.length ? 'SBOM present' : 'no SBOM file found' };
  o.dependency_pinning = { value: f.lockfiles.length > 0, refs: f.lockfiles.length ? f.lockfiles : ['(no lock file at the work tree root)'], note: f.lockfiles.length ? 'lock file present' : 'no lock file found' };
}

/** The snapshot: a flag always wins (asserted), then an observation, then the flag default or least-secure value (asserted). */
export function snapshot(observed: Observations, flags: Partial<Record<InputName, InputValue>>): Snapshot {
  const values = {} as Record<InputName, InputValue>;
  const evidence = {} as Record<InputName, Evidence>;
  for (const def of INPUTS) {
    const flag = flags[def.name];
    const seen = observed[def.name];
    if (flag !== undefined) {
      values[def.name] = flag;
      evidence[def.name] = { status: 'asserted', source: 'flag' };
    } else if (seen) {
      values[def.name] = seen.value;
      evidence[def.name] = { status: 'observed', refs: seen.refs, note: seen.note };
    } else {
      values[def.name] = def.flagDefault ?? def.worst;
      evidence[def.name] = { status: 'asserted', source: 'default' };
    }
  }
  return { values, evidence };
}

/** HIPAA mode (`compliance: hipaa`) needs PHI detection and a verifying audit chain. */
export function hipaaWarnings(s: Snapshot): string[] {
  const w: string[] = [];
  if (s.values.phi_detection !== true) w.push('HIPAA mode is on but phi_detection is not enabled');
  if (s.values.audit_hmac_chain !== true) w.push('HIPAA mode is on but the audit HMAC chain does not verify');
  return w;
}
