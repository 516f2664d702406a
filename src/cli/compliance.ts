import { defineCommand } from 'citty';

// Each subcommand loads its modules only when it runs: a check is a new process over a big tree (bench/README.md).
const other = (name: 'euAiAct' | 'assess' | 'report' | 'enable' | 'disable' | 'list' | 'rego') => () => import('./compliance-commands.ts').then((m) => m[name]);

/** `svc compliance …`. */
export const complianceCommand = defineCommand({
  meta: { name: 'compliance', description: 'Policy checks, EU AI Act records and evidence, offline on the .sdd tree' },
  subCommands: {
    'eu-ai-act': other('euAiAct'), assess: other('assess'), report: other('report'), enable: other('enable'), disable: other('disable'), list: other('list'),
    check: () => import('./compliance-check.ts').then((m) => m.checkCommand),
    rego: other('rego'),
    export: () => import('./compliance-export.ts').then((m) => m.exportCommand),
  },
});
