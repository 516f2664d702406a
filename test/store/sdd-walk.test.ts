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

// path → [size, last change] as the walk stamped it.
const stamped = (w: SddWalk) => new Map(w.files.map((f, k) => [f, [w.stamps!.size[k], w.stamps!.changed[k]]] as const));

// A large board's start compares the EU AI Act folder on a thread of its own (recover.ts scanForStart): the
// walk that skips it and the walk of it alone must together be the whole walk.
walk('a walk that skips a folder and a walk of that folder alone make the whole walk: files, stamps and litter', async () => {
  for (let i = 0; i < 40; i++) put(`tasks/${String(i % 7).padStart(2, '0')}/t${i}.json`, 'x'.repeat(i + 1));
  for (let i = 0; i < 300; i++) put(`eu_ai_act/r${i}.json`, 'y'.repeat(i + 1));
  put('eu_ai_act/r1.json.4242.tmp', 'torn');
  put('tasks/00/t7.json.lock/x', '');
  put('runtime/journal.jsonl', 'not committed');
  put('config.yaml', 'a: 1\n');
  const whole = await walkSdd(tmp.dir, { stat: true });
  const rest = await walkSdd(tmp.dir, { stat: true, skip: ['eu_ai_act'] });
  const folder = await walkSdd(tmp.dir, { stat: true, roots: ['eu_ai_act'] });
  assert.is(whole.files.length, 341);
  assert.is(rest.files.length, 41);
  assert.ok(rest.files.every((f) => !f.startsWith('eu_ai_act/')));
  assert.equal(new Set([...rest.files, ...folder.files]), new Set(whole.files));
  assert.equal(new Map([...stamped(rest), ...stamped(folder)]), stamped(whole));
  const st = statSync(join(tmp.dir, 'eu_ai_act/r299.json'));
  assert.equal(stamped(folder).get('eu_ai_act/r299.json'), [300, Math.max(st.mtimeMs, st.ctimeMs)], 'stamped as the stat says');
  assert.equal(rest.litter, ['tasks/00/t7.json.lock']);
  assert.equal(folder.litter, ['eu_ai_act/r1.json.4242.tmp']);
  assert.is((await walkSdd(tmp.dir, { roots: ['eu_ai_act'] })).stamps, null);
  assert.equal((await walkSdd(tmp.dir, { roots: ['no_such_folder'] })).files, []);
});

walk.run();
