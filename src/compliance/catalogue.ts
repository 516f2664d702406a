// The catalogue: every policy, frameworks in sorted order, policies in catalogue order.
import type { InputName } from './inputs.ts';
import { FRAMEWORKS, type Framework, type Policy } from './policy.ts';
import { ISO27001 } from './policies/iso27001.ts';
import { NIST_800_53 } from './policies/nist-800-53.ts';
import { PCI_DSS } from './policies/pci-dss.ts';
import { SOC2 } from './policies/soc2.ts';

const BY_FRAMEWORK: Record<Framework, Policy[]> = { iso27001: ISO27001, nist_800_53: NIST_800_53, pci_dss: PCI_DSS, soc2: SOC2 };

/** Every policy: frameworks in sorted order, each in catalogue order. */
export const CATALOGUE: readonly Policy[] = FRAMEWORKS.flatMap((f) => BY_FRAMEWORK[f]);

/** True for one of the four framework names. */
export function isFramework(name: string): name is Framework {
  return (FRAMEWORKS as readonly string[]).includes(name);
}

/** Policies of the given frameworks (deduplicated, sorted by framework, catalogue order within). */
export function policiesOf(frameworks: readonly Framework[]): Policy[] {
  const set = new Set(frameworks);
  return FRAMEWORKS.filter((f) => set.has(f)).flatMap((f) => BY_FRAMEWORK[f]);
}

/** The inputs a policy reads, sorted and without repeats. */
export function inputsOf(policy: Policy): InputName[] {
  return [...new Set(policy.when.map((c) => c.input))].sort();
}
