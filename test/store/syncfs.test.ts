import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSyncFs } from '../../src/store/syncfs.ts';
import { makeTempDir } from '../helpers/repo.ts';

const s = suite('syncfs helper');
let tmp: ReturnType<typeof makeTempDir>;
s.before.each(() => { tmp = makeTempDir('svc-syncfs-'); });
s.after.each(() => tmp.cleanup());

const helpers = () => execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes('svc-syncfs') && l.includes(tmp.dir));

s('many syncs go through one helper process, answered in order; close ends it', async () => {
  const fs = createSyncFs(tmp.dir);
  await Promise.all(Array.from({ length: 20 }, () => fs.sync()));
  await fs.sync();
  assert.is(helpers().length, 1, 'one helper for every sync');
  fs.close();
  for (let i = 0; i < 100 && helpers().length; i++) await new Promise((r) => setTimeout(r, 20));
  assert.is(helpers().length, 0, 'the helper ended with close');
});

s('a sync that fails (the folder is gone) rejects, and the next one works again', async () => {
  const fs = createSyncFs(join(tmp.dir, 'missing'));
  assert.ok(await fs.sync().then(() => false, () => true), 'sync -f of a missing folder is refused');
  fs.close();
  const ok = createSyncFs(tmp.dir);
  await ok.sync();
  ok.close();
});

s('a helper killed between syncs is started again: the next sync still succeeds', async () => {
  const fs = createSyncFs(tmp.dir);
  await fs.sync();
  const pid = Number(helpers()[0]!.trim().split(/\s+/)[0]);
  process.kill(pid, 'SIGKILL');
  await fs.sync(); // a new helper
  assert.is(helpers().length, 1);
  fs.close();
});

s('an idle helper does not keep a process alive', () => {
  const script = `import { createSyncFs } from ${JSON.stringify(join(process.cwd(), 'src/store/syncfs.ts'))}; const f = createSyncFs(${JSON.stringify(tmp.dir)}); await f.sync(); console.log('synced');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.is(r.stdout.trim(), 'synced');
  assert.is(r.status, 0, 'exited on its own');
});

s.run();
