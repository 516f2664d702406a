// Bulk imports into one flat folder (`.sdd/eu_ai_act/`, fixed by the interface): state commits of K new
// records each into a folder of 0, K, 2K, 3K records, with the folder's tree built by the state writer
// (src/store/big-folder.ts) and with `git fast-import` alone (its linear insert: O(k·n)), interleaved, a
// fresh repository each run; prints seconds per commit and the ratio. Run: node --import tsx bench/bulk-import.ts
// (K=30000 by default, RUNS=2; about 2 minutes).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../src/lib/clock.ts';
import { silentLogger } from '../src/lib/log.ts';
import { createGit } from '../src/store/git-cli.ts';
import { sddLayout } from '../src/store/layout.ts';
import { createStateWriter } from '../src/store/state-writer.ts';
import { makeRepo } from '../test/helpers/repo.ts';
import { median } from './lib/stats.ts';

const K = Number(process.env.K ?? 30_000);
const RUNS = Number(process.env.RUNS ?? 2);
const STEPS = 4;

async function run(bigFolderChanges: number): Promise<number[]> {
  const repo = makeRepo('svc-bulk-import-');
  const writer = createStateWriter({ layout: sddLayout(repo.dir), git: createGit(repo.dir), log: silentLogger(), clock: systemClock, bigFolderChanges });
  mkdirSync(join(repo.dir, '.sdd', 'eu_ai_act'), { recursive: true });
  const seconds: number[] = [];
  try {
    for (let step = 0; step < STEPS; step++) {
      const paths: string[] = [];
      for (let i = step * K; i < (step + 1) * K; i++) {
        const rel = `eu_ai_act/01m97${String(i).padStart(21, '0')}.json`;
        writeFileSync(join(repo.dir, '.sdd', rel), JSON.stringify({ risk_level: 'limited', task_id: String(i), title: `bench task ${i}` }, null, 2) + '\n');
        paths.push(rel);
      }
      const t0 = performance.now();
      await writer.commit({ paths, notes: [] });
      seconds.push((performance.now() - t0) / 1000);
    }
  } finally {
    await writer.recycle();
    repo.cleanup();
  }
  return seconds;
}

const built: number[][] = [];
const alone: number[][] = [];
for (let r = 0; r < RUNS; r++) {
  built.push(await run(1000));
  alone.push(await run(Number.POSITIVE_INFINITY));
}
console.log(`| records in the folder before | tree built (s) | fast-import alone (s) | alone / built |`);
console.log(`| --- | --- | --- | --- |`);
for (let step = 0; step < STEPS; step++) {
  const b = median(built.map((s) => s[step]!));
  const a = median(alone.map((s) => s[step]!));
  console.log(`| ${(step * K).toLocaleString('en-US')} | ${b.toFixed(2)} | ${a.toFixed(2)} | ${(a / b).toFixed(1)} |`);
}
console.log(`${K.toLocaleString('en-US')} new records per commit, medians of ${RUNS} runs (interleaved).`);
