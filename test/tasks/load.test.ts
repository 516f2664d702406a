// The board at start: it loads while the start restores missing task files from refs/sdd/state, and a
// task restored after the load read its folder is still on the board once the domain is open.
import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { relative } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTenantGate } from '../../src/auth/index.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { manualTimers } from '../../src/lib/timers.ts';
import { createRecordStore, sddLayout } from '../../src/store/index.ts';
import { openTasks } from '../../src/tasks/index.ts';
import { makeTempDir } from '../helpers/repo.ts';

const T = suite('tasks: the board at start');
let tmp: ReturnType<typeof makeTempDir>;
T.before.each(() => { tmp = makeTempDir('svc-tasks-load-'); });
T.after.each(() => tmp.cleanup());

const alice = { actor: 'alice', tenant: 'default' };

T('a task file restored while the board loads is on the board, claimable, once the domain is open', async () => {
  const layout = sddLayout(tmp.dir);
  mkdirSync(layout.sdd, { recursive: true });
  const log = silentLogger();
  const shared = createRecordStore({ layout, committer: { touch() {} }, log, audit: { append: async () => undefined } });
  let n = 0;
  const deps = (store: typeof shared) => ({
    layout, store, clock: manualClock(), ids: { next: () => `t${String(++n).padStart(25, '0')}` }, log,
    tenants: createTenantGate({ layout, log, defaultMax: 100 }), config: defaultConfig(), timers: manualTimers(),
  });
  const first = await openTasks(deps(shared));
  const a = await first.tasks.create({ title: 'on disk', role: 'qa' }, alice);
  const b = await first.tasks.create({ title: 'restored', role: 'qa', priority: 0 }, alice);
  // b's file is away while the board reads the folders, and comes back (as a restore links it) after.
  const away = `${tmp.dir}/b.json`;
  renameSync(layout.task(b.id), away);
  const shards = readdirSync(layout.tasksDir).length;
  const reads: string[] = [];
  let loaded!: () => void;
  const folderRead = new Promise<void>((resolve) => { loaded = resolve; });
  const store = { ...shared, readFolder: async (dir: string) => { const r = await shared.readFolder(dir); reads.push(dir); if (reads.length === shards) loaded(); return r; } };
  let restore!: (paths: readonly string[]) => void;
  const opening = openTasks(deps(store), new Promise((resolve) => { restore = resolve; }));
  await folderRead;
  renameSync(away, layout.task(b.id));
  restore([relative(layout.sdd, layout.task(b.id))]);
  const second = await opening;
  assert.is(second.loaded, 2);
  assert.equal(second.tasks.get(b.id)?.title, 'restored');
  assert.equal(second.tasks.get(a.id)?.title, 'on disk');
  assert.is(reads.length, shards + 1, 'the restored file\'s folder is read again, and only it');
  const next = await second.tasks.next('qa', {}, alice);
  assert.is(next.id, b.id, 'the restored task is in its ready queue (priority 0 first)');
});

T.run();
