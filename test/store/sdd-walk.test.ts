import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { walkSdd, type SddWalk } from '../../src/store/sdd-walk.ts';
import { makeTempDir } from '../helpers/repo.ts';

const walk = suite('store sdd walk');
let tmp: ReturnType<typeof makeTempDir>;
walk.before.each(() => {
  tmp = makeTempDir('svc-walk-');
});
walk.after.each(() => tmp.cleanup());

const put = (rel: string, text: string) => {
  const abs = join(tmp.dir, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, text);
};

// path → [size, last change] as the walk stamped it: the same whatever thread walked the file.
const stamped = (w: SddWalk) => new Map(w.files.map((f, k) => [f, [w.stamps!.size[k], w.stamps!.changed[k]]] as const));

walk('a folder walked on a thread of its own gives the same files, stamps and litter as one walk', async () => {
  for (let i = 0; i < 40; i++) put(`tasks/${String(i % 7).padStart(2, '0')}/t${i}.json`, 'x'.repeat(i + 1));
  for (let i = 0; i < 300; i++) put(`eu_ai_act/r${i}.json`, 'y'.repeat(i + 1));
  put('eu_ai_act/r1.json.4242.tmp', 'torn');
  put('tasks/00/t7.json.lock/x', '');
  put('runtime/journal.jsonl', 'not committed');
  put('config.yaml', 'a: 1\n');
  const one = await walkSdd(tmp.dir, { stat: true });
  const split = await walkSdd(tmp.dir, { stat: true, aside: ['eu_ai_act'] });
  assert.is(one.files.length, 341);
  assert.equal(new Set(split.files), new Set(one.files));
  assert.equal(stamped(split), stamped(one));
  const st = statSync(join(tmp.dir, 'eu_ai_act/r299.json'));
  assert.equal(stamped(split).get('eu_ai_act/r299.json'), [300, Math.max(st.mtimeMs, st.ctimeMs)], 'a file of the thread\'s folder, stamped as the stat says');
  assert.equal(new Set(split.litter), new Set(['eu_ai_act/r1.json.4242.tmp', 'tasks/00/t7.json.lock']));
  assert.equal(new Set(split.litter), new Set(one.litter));
  const unstamped = await walkSdd(tmp.dir, { aside: ['eu_ai_act'] });
  assert.is(unstamped.stamps, null);
  assert.equal(new Set(unstamped.files), new Set(one.files));
});

walk.run();
