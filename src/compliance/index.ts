export { INPUTS, INPUT_NAMES, inputDef, flagOf, type InputDef, type InputName, type InputValue } from './inputs.ts';
export { FRAMEWORKS, SEVERITIES, type Condition, type Framework, type Policy, type Severity } from './policy.ts';
export { CATALOGUE, inputsOf, isFramework, policiesOf } from './catalogue.ts';
export { FAIL_ON, breaches, evaluate, evaluatePolicy, failuresBySeverity, holds, summarise, type Evidence, type EvidenceStatus, type FailOn, type PolicyResult, type Snapshot } from './evaluate.ts';
export { hipaaWarnings, observe, snapshot, type Facts, type Observation, type Observations } from './evidence.ts';
export { RISK_LEVELS, classifyTask, classifyText, summariseRisk, type RiskLevel, type RiskRecord, type TaskText } from './eu-ai-act.ts';
export { regoPackage, renderRego } from './rego.ts';
export { gatherFacts, stateHead } from './gather.ts';
