// svc up's heap growth (src/cli/heap-growth.ts): an absolute headroom past the live heap, so a server that
// promotes a little per request runs a full GC every few tens of MiB, not every 10% of a small heap.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { growthPercent, heapSetByUser } from '../../src/cli/heap-growth.ts';

const MiB = 1024 * 1024;
const T = suite('heap growth');

T('a small heap gets the whole headroom, a large one the floor', () => {
  assert.is(growthPercent(32 * MiB), 200, '32 MiB live (a 10k board): 64 MiB more');
  assert.is(growthPercent(48 * MiB), 133, '48 MiB live: still 64 MiB more');
  assert.is(growthPercent(80 * MiB), 40, '80 MiB live: up to the 112 MiB ceiling');
  assert.is(growthPercent(104 * MiB), 10, 'near the ceiling (a 100k board): the 10% floor');
  assert.is(growthPercent(1024 * MiB), 10, 'past the ceiling: the floor, never less');
  assert.ok(Number.isFinite(growthPercent(0)), 'an empty heap does not divide by zero');
});

T('a heap size or growth the user set is left alone', () => {
  assert.ok(heapSetByUser({}, ['--max-old-space-size=512']));
  assert.ok(heapSetByUser({ NODE_OPTIONS: '--heap-growing-percent=30' }, []));
  assert.not.ok(heapSetByUser({ NODE_OPTIONS: '--enable-source-maps' }, ['--trace-gc']));
});

// A child that keeps ~25 MiB live and makes ~250 MiB of objects that each live for the next 200k (many outlive
// a scavenge, are promoted, then die): it counts its full GCs with the growth svc up used before (10%) and
// with followHeapGrowth.
const CHILD = `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { followHeapGrowth } from ${JSON.stringify(fileURLToPath(new URL('../../src/cli/heap-growth.ts', import.meta.url)))};
const live = Array.from({ length: 250_000 }, (_, i) => ({ i, s: 'live ' + i }));
global.gc();
setFlagsFromString('--heap-growing-percent=10'); // what svc up set before
if (process.argv.at(-1) === 'follow') followHeapGrowth({});
let majors = 0;
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; }).observe({ entryTypes: ['gc'] });
const ring = new Array(200_000);
for (let i = 0; i < 4_000_000; i++) ring[i % ring.length] = { i, s: 'short ' + i, live: live.length };
await new Promise((r) => setTimeout(r, 50));
console.log(JSON.stringify({ majors }));
`;

// Run from a file: code given with -e is in process.execArgv, where its flag text would read as the user's own.
function fullGCs(mode: 'follow' | 'ten'): number {
  const dir = mkdtempSync(join(tmpdir(), 'svc-heap-'));
  try {
    writeFileSync(join(dir, 'child.mjs'), CHILD);
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(dir, 'child.mjs'), mode], { encoding: 'utf8' });
    assert.is(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { majors: number }).majors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

T('followHeapGrowth runs far fewer full GCs than a 10% growth for the same promotion', () => {
  const ten = fullGCs('ten');
  const follow = fullGCs('follow');
  assert.ok(ten >= 6, `the 10% growth ran ${ten} full GCs: the child promotes enough to need several`);
  assert.ok(follow * 3 <= ten, `followHeapGrowth ran ${follow} full GCs against ${ten} with 10%`);
});

T.run();
