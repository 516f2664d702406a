// The EU AI Act assessment of the system (pure): classification, Annex IV technical document, conformity, summary.
import { createHash } from 'node:crypto';

const ART5 = ['real_time_biometric_public', 'subliminal_techniques', 'exploits_vulnerabilities', 'social_scoring_public', 'manipulates_behavior'] as const;
const ANNEX3: [string, string][] = [
  ['processes_biometrics', '1_biometric_identification'], ['interacts_with_critical_infrastructure', '2_critical_infrastructure'],
  ['used_in_education', '3_education_vocational_training'], ['used_in_employment', '4_employment_workers_management'],
  ['used_in_essential_services', '5_essential_private_public_services'], ['used_in_law_enforcement', '6_law_enforcement'],
  ['used_in_migration', '7_migration_asylum_border_control'], ['used_in_justice', '8_administration_of_justice_democratic_processes'],
];
const ART50 = ['is_chatbot_or_conversational', 'generates_synthetic_media', 'uses_emotion_recognition'] as const;
/** Every flag of a descriptor, in hashing order. */
export const DESCRIPTOR_FLAGS = [...ART5, ...ANNEX3.map(([f]) => f), ...ART50];
export const DEADLINE = 'August 2027';

/** What is assessed: 16 flags and free-text metadata (missing metadata reads NOT SPECIFIED). */
export interface Descriptor {
  name: string;
  version: string;
  description: string;
  intended_use: string;
  deployment_context: string;
  flags: Record<string, boolean>;
  metadata: Record<string, string>;
}

/** svc itself: agents generate code and text (Article 50 transparency), nothing of Article 5 or Annex III → limited. */
export function svcDescriptor(version: string): Descriptor {
  return {
    name: 'svc', version, description: 'Git-native governance layer for AI coding agents',
    intended_use: 'Orchestrating AI coding agents on software tasks in isolated git worktrees',
    deployment_context: 'Software development teams; agents work on a repository under human review',
    flags: Object.fromEntries(DESCRIPTOR_FLAGS.map((f) => [f, f === 'generates_synthetic_media'])),
    metadata: {
      provider: 'the operator of this repository',
      disclosure_mechanism: 'agent work lands on agent/<session> branches and merge commits that name the task; every change to a task is in the HMAC-chained audit log',
      logging_capabilities: 'HMAC-chained audit log under .sdd/audit, state history in refs/sdd/state',
      human_oversight: 'people can block, cancel, kill and reopen tasks; merges pass the configured gates',
      risk_management_system: 'NOT SPECIFIED', data_governance_practices: 'NOT SPECIFIED',
    },
  };
}

type Check = { article: string; requirement: string; status: 'pass' | 'fail' | 'partial'; evidence: string; remediation: string };
const meta = (d: Descriptor, k: string) => (d.metadata[k] && d.metadata[k] !== 'NOT SPECIFIED' ? d.metadata[k]! : '');

/** Classify: Article 5 → unacceptable, else the first Annex III domain → high, else Article 50 → limited, else minimal. */
export function classify(d: Descriptor, at: string) {
  const on = (f: string) => d.flags[f] === true;
  const article5 = ART5.filter(on);
  const domain = ANNEX3.find(([f]) => on(f));
  const article50 = ART50.filter(on);
  const risk = article5.length ? 'unacceptable' : domain ? 'high' : article50.length ? 'limited' : 'minimal';
  const justification = article5.length ? `Prohibited practice under Article 5: ${article5.join(', ')}`
    : domain ? `High-risk Annex III domain: ${domain[1]}`
      : article50.length ? `Transparency obligations under Article 50: ${article50.join(', ')}` : 'No Article 5, Annex III or Article 50 trigger';
  const hashed = { name: d.name, version: d.version, description: d.description, intended_use: d.intended_use, deployment_context: d.deployment_context, flags: Object.fromEntries(DESCRIPTOR_FLAGS.map((f) => [f, on(f)])) };
  return {
    system_name: d.name, system_version: d.version, risk_category: risk, annex_iii_domain: domain?.[1] ?? 'not_applicable',
    article5_triggers: article5, article50_triggers: article50, justification, classified_at: at,
    classification_hash: createHash('sha256').update(JSON.stringify(sortKeys(hashed))).digest('hex'),
  };
}

/** The Annex IV technical document: eight sections of `Label: value` lines and their hash. */
export function techDoc(d: Descriptor, risk: string, at: string) {
  const line = (label: string, key: string) => `${label}: ${meta(d, key) || 'NOT SPECIFIED'}`;
  const sections: Record<string, string> = {
    '1_general_description': [`System: ${d.name} ${d.version}`, `Description: ${d.description}`, `Intended use: ${d.intended_use}`, `Deployment context: ${d.deployment_context}`, line('Provider', 'provider')].join('\n'),
    '2_design_and_development': [line('Technical documentation', 'technical_documentation_reference'), line('Design', 'design')].join('\n'),
    '3_monitoring_and_control': [line('Logging', 'logging_capabilities'), line('Human oversight', 'human_oversight')].join('\n'),
    '4_robustness_and_security': line('Robustness testing', 'robustness_testing'),
    '5_data_governance': line('Data governance', 'data_governance_practices'),
    '6_transparency_and_information': [line('Disclosure', 'disclosure_mechanism'), line('Instructions for use', 'instructions_for_use')].join('\n'),
    '7_post_market_monitoring': line('Risk management system', 'risk_management_system'),
    '8_conformity_declaration': [`Risk category: ${risk}`, `Procedure: ${risk === 'high' ? 'conformity assessment (Annex VI internal control, or a notified body)' : 'not required for this risk category'}`, 'CE marking and EU database registration: required for high-risk systems', `DEADLINE: ${DEADLINE}`].join('\n'),
  };
  const doc_hash = createHash('sha256').update(Object.values(sections).join('\n')).digest('hex');
  return { system_name: d.name, system_version: d.version, doc_version: '1.0', sections, generated_at: at, doc_hash };
}

/** Conformity checks for the risk category; overall fail when any check fails, partial when any is partial, else pass. */
export function conformity(d: Descriptor, risk: string, article50: string[], at: string) {
  const need = (article: string, requirement: string, key: string, missing: 'fail' | 'partial'): Check => meta(d, key)
    ? { article, requirement, status: 'pass', evidence: meta(d, key), remediation: '' }
    : { article, requirement, status: missing, evidence: 'NOT SPECIFIED', remediation: `Document ${key.replaceAll('_', ' ')} in .sdd/compliance/system.yaml` };
  const checks: Check[] = risk === 'unacceptable'
    ? [{ article: 'Article 5', requirement: 'Prohibited AI practice', status: 'fail', evidence: 'Article 5 trigger present', remediation: 'Stop placing the system on the market' }]
    : risk === 'high' ? [
      need('Article 9', 'Risk management system', 'risk_management_system', 'fail'), need('Article 10', 'Data and data governance', 'data_governance_practices', 'fail'),
      need('Article 11', 'Technical documentation', 'technical_documentation_reference', 'partial'), need('Article 12', 'Record-keeping', 'logging_capabilities', 'fail'),
      need('Article 13', 'Transparency and instructions for use', 'instructions_for_use', 'partial'), need('Article 14', 'Human oversight', 'human_oversight', 'fail'),
      need('Article 15', 'Accuracy, robustness and cybersecurity', 'robustness_testing', 'partial')]
      : risk === 'limited' ? article50.map((t) => need('Article 50', `Transparency for ${t}`, 'disclosure_mechanism', 'fail'))
        : [{ article: 'General', requirement: 'No mandatory obligations', status: 'pass', evidence: 'minimal risk', remediation: '' }];
  const count = (s: Check['status']) => checks.filter((c) => c.status === s).length;
  const overall = count('fail') ? 'fail' : count('partial') ? 'partial' : 'pass';
  return {
    overall_status: overall, passed: count('pass'), failed: count('fail'), partial: count('partial'),
    mandatory_gaps: checks.filter((c) => c.status === 'fail').map((c) => `${c.article}: ${c.requirement}`),
    assessed_at: at, assessor: 'svc-compliance', checks,
  };
}

/** The whole report; `at` is the assessment time (as-of, so the same tree and flags give the same bytes). */
export function assess(d: Descriptor, at: string) {
  const classification = classify(d, at);
  const risk = classification.risk_category;
  const conf = conformity(d, risk, classification.article50_triggers, at);
  const next_steps = risk === 'unacceptable'
    ? ['STOP: the system falls under a prohibited practice of Article 5', 'Withdraw it from use in the EU', 'Seek legal advice before any redesign']
    : risk === 'high'
      ? [`Close ${conf.failed} mandatory gap(s) and ${conf.partial} partial item(s)`, 'Register in the EU database (Article 49)', 'Affix CE marking after the conformity assessment', 'Run post-market monitoring (Article 72)', `Comply by ${DEADLINE}`]
      : risk === 'limited'
        ? ['Keep disclosing AI-generated output to the people who receive it (Article 50)', `Review this assessment before ${DEADLINE}`]
        : ['No mandatory action required; consider a voluntary code of conduct'];
  const compliance_summary = {
    risk_category: risk, overall_conformity: conf.overall_status, mandatory_gaps_count: conf.mandatory_gaps.length,
    deadline: DEADLINE, action_required: conf.failed > 0 || risk === 'unacceptable', next_steps,
  };
  return { report: { classification, conformity: conf, compliance_summary }, tech_doc: techDoc(d, risk, at) };
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  return v;
}
