#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineCommand } from 'citty';
import { runCli } from './run.ts';
import { VERSION } from './version.ts';

// Each subcommand is imported only when it runs (or for --help): `svc task list` never loads the server.
/** The `svc` command tree. */
export const main = defineCommand({
  meta: { name: 'svc', version: VERSION, description: 'Git-native governance layer for AI coding agents' },
  subCommands: {
    up: () => import('./up.ts').then((m) => m.upCommand('up')),
    run: () => import('./up.ts').then((m) => m.upCommand('run')),
    init: () => import('./init.ts').then((m) => m.initCommand),
    token: () => import('./token.ts').then((m) => m.tokenCommand),
    tenant: () => import('./tenant.ts').then((m) => m.tenantCommand),
    audit: () => import('./audit.ts').then((m) => m.auditCommand),
    task: () => import('./task.ts').then((m) => m.taskCommand),
    agents: () => import('./agents.ts').then((m) => m.agentsCommand),
    logs: () => import('./agents.ts').then((m) => m.logsCommand),
    kill: () => import('./agents.ts').then((m) => m.killCommand),
    login: () => import('./login.ts').then((m) => m.loginCommand),
    logout: () => import('./login.ts').then((m) => m.logoutCommand),
    site: () => import('./site.ts').then((m) => m.siteCommand),
    compliance: () => import('./compliance.ts').then((m) => m.complianceCommand),
    cluster: () => import('./cluster.ts').then((m) => m.clusterCommand),
    state: () => import('./state.ts').then((m) => m.stateCommand),
    mcp: () => import('./mcp.ts').then((m) => m.mcpCommand),
    worker: () => import('./worker.ts').then((m) => m.workerCommand),
  },
});

// Run only as the program (the CLI reference generator imports the tree); bin links resolve to this file.
const isProgram = (arg: string | undefined): boolean => {
  try {
    return !!arg && realpathSync(arg) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
};
if (isProgram(process.argv[1])) void runCli(main, process.argv.slice(2));
