import { mkdirSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { systemClock } from '../src/lib/clock.ts';
import { sddLayout, ulidIds, stableStringify } from '../src/store/index.ts';
import { newTask, Board } from '../src/tasks/index.ts';
import { makeTempDir } from '../test/helpers/repo.ts';
const N = 100000;
const tmp = makeTempDir('lp-');
const layout = sddLayout(tmp.dir);
const ids = ulidIds();
for (let i = 0; i < N; i++) {
  const t = newTask({ title: `t ${i}`, role: 'bench' } as never, { id: ids.next(), now: systemClock.iso(), tenant: 'default' });
  const f = layout.task(t.id); mkdirSync(dirname(f), { recursive: true }); writeFileSync(f, stableStringify(t));
}
for (let r = 0; r < 2; r++) {
  let t = performance.now();
  const lap = (w: string) => { const n = performance.now(); console.log(w, Math.round(n - t), 'ms'); t = n; };
  const texts: string[] = [];
  for (const s of readdirSync(layout.tasksDir)) for (const f of readdirSync(join(layout.tasksDir, s))) texts.push(readFileSync(join(layout.tasksDir, s, f), 'utf8'));
  lap('readdir+readFileSync');
  const tasks = texts.map((x) => JSON.parse(x));
  lap('JSON.parse');
  const b = new Board();
  for (const x of tasks) b.upsert(x);
  lap('board upsert');
}
tmp.cleanup();
