#!/usr/bin/env node
import { defineCommand, runMain } from 'citty';
import { upCommand } from './up.ts';
import { initCommand } from './init.ts';
import { tokenCommand } from './token.ts';
import { tenantCommand } from './tenant.ts';
import { auditCommand } from './audit.ts';
import { taskCommand } from './task.ts';
import { VERSION } from './version.ts';


const main = defineCommand({
  meta: { name: 'svc', version: VERSION, description: 'Git-native governance layer for AI coding agents' },
  subCommands: {
    up: upCommand('up'),
    run: upCommand('run'),
    init: initCommand,
    token: tokenCommand,
    tenant: tenantCommand,
    audit: auditCommand,
    task: taskCommand,
    state: () => import('./state.ts').then((m) => m.stateCommand),
  },
});

void runMain(main);
