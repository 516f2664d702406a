// EU AI Act risk of a task (pure): substring rules over title, description and role, checked from the strictest level down.

export const RISK_LEVELS = ['minimal', 'limited', 'high', 'unacceptable'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
const SVC_LEVEL: Record<RiskLevel, string> = { minimal: 'low', limited: 'medium', high: 'high', unacceptable: 'critical' };

type Rule = [label: string, words: string[]];
const RULES: [RiskLevel, Rule[]][] = [
  ['unacceptable', [
    ['social scoring', ['social scoring', 'citizen score', 'trustworthiness score']],
    ['realtime biometric', ['real-time biometric', 'biometric surveillance', 'live facial recognition']],
    ['subliminal manipulation', ['subliminal', 'manipulate behavior', 'covert persuasion']],
  ]],
  ['high', [
    ['authentication', ['auth', 'authentication', 'authorization', 'credential', 'identity', 'login']],
    ['payments', ['payment', 'payments', 'billing', 'checkout', 'invoice', 'refund']],
    ['health', ['health', 'medical', 'patient', 'diagnosis', 'clinical', 'hospital']],
    ['critical', ['critical infrastructure', 'critical system', 'safety critical', 'critical service']],
  ]],
  ['minimal', [['low-impact maintenance or documentation work', ['docs', 'documentation', 'readme', 'comment', 'typo', 'format', 'formatting', 'lint', 'rename']]]],
];
const LIMITED_REASON = 'general software change outside EU AI Act high-risk domains';

/** The record written to `.sdd/eu_ai_act/<task-id>.json` when a task is created. */
export interface RiskRecord {
  version: 1;
  task_id: string;
  title: string;
  role: string;
  risk_level: RiskLevel;
  approval_required: boolean;
  svc_risk_level: string;
  reasons: string[];
  assessed_at: string;
}

/** What the classifier reads of a task; `metadata.eu_ai_act_risk` is a level the creator declares. */
export interface TaskText {
  id: string;
  title: string;
  description: string;
  role: string;
  created_at: string;
  metadata?: Record<string, unknown>;
}

/** The level and reasons the rules give for a text (lowercased, whitespace collapsed, substring matches). */
export function classifyText(title: string, description: string, role: string): { level: RiskLevel; reasons: string[] } {
  const text = `${title} ${description} ${role}`.toLowerCase().replace(/\s+/g, ' ');
  for (const [level, rules] of RULES) {
    const reasons = rules.filter(([, words]) => words.some((w) => text.includes(w))).map(([label]) => label);
    if (reasons.length) return { level, reasons };
  }
  return { level: 'limited', reasons: [LIMITED_REASON] };
}

/** The task's record: the stricter of the derived level and a declared one (an unknown declared value counts as minimal). */
export function classifyTask(t: TaskText): RiskRecord {
  const derived = classifyText(t.title, t.description, t.role);
  const declared = t.metadata?.eu_ai_act_risk;
  const declaredLevel: RiskLevel = (RISK_LEVELS as readonly unknown[]).includes(declared) ? (declared as RiskLevel) : 'minimal';
  const stricter = RISK_LEVELS.indexOf(declaredLevel) > RISK_LEVELS.indexOf(derived.level);
  const level = stricter ? declaredLevel : derived.level;
  const reasons = stricter ? [`declared ${declaredLevel} by the task creator`, ...derived.reasons] : derived.reasons;
  return {
    version: 1, task_id: t.id, title: t.title, role: t.role, risk_level: level,
    approval_required: level === 'high' || level === 'unacceptable', svc_risk_level: SVC_LEVEL[level], reasons, assessed_at: t.created_at,
  };
}

/** Counts per level and the five latest high or unacceptable records, newest first (ties by task id). */
export function summariseRisk(records: RiskRecord[]) {
  const counts: Record<RiskLevel, number> = { minimal: 0, limited: 0, high: 0, unacceptable: 0 };
  for (const r of records) if (r.risk_level in counts) counts[r.risk_level]++;
  const latest = records
    .filter((r) => r.risk_level === 'high' || r.risk_level === 'unacceptable')
    .sort((a, b) => (a.assessed_at === b.assessed_at ? (a.task_id < b.task_id ? 1 : -1) : a.assessed_at < b.assessed_at ? 1 : -1))
    .slice(0, 5)
    .map(({ task_id, title, role, risk_level, approval_required, assessed_at }) => ({ task_id, title, role, risk_level, approval_required, assessed_at }));
  return { total: records.length, counts, latest_high_risk: latest };
}
