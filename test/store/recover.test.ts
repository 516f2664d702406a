import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { manualClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { createCommitter } from '../../src/store/committer.ts';
import { createGit } from '../../src/store/git-cli.ts';
import { sddLayout, shardedRel } from '../../src/store/layout.ts';
import { scanSdd } from '../../src/store/recover.ts';
import { makeRepo, type TempRepo } from '../helpers/repo.ts';

const here = dirname(fileURLToPath(import.meta.url));
const recover = suite('store recover');
let repo: TempRepo;
recover.before.each(() => {
  repo = makeRepo('svc-recover-');
});
recover.after.each(() => repo.cleanup());

const newCommitter = () =>
  createCommitter({ layout: sddLayout(repo.dir), git: createGit(repo.dir), log: silentLogger(), clock: manualClock(), intervalMs: 60_000, gcEveryCommits: 0 });

// The ref's tree as path → blob id, next to the files on disk hashed by git itself.
const refBlobs = () => new Map(repo.git('ls-tree', '-r', 'refs/sdd/state').split('\n').filter(Boolean).map((l) => {
  const [meta, path] = l.split('\t');
  return [path!.slice(5), meta!.split(' ')[2]!] as const;
}));
const diskBlobs = async () => {
  const paths = [...(await scanSdd(sddLayout(repo.dir))).keys()].sort();
  const oids = repo.git('hash-object', '--no-filters', ...paths.map((p) => join(repo.dir, '.sdd', p))).split('\n');
  return new Map(paths.map((p, i) => [p, oids[i]!] as const));
};

// Run the writer until `killAfter` acks past a flush, SIGKILL it, return its stdout lines.
function runWriterAndKill(killAfter: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'writer.ts'), repo.dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const acks = out.match(/^ack (\d+) /gm) ?? [];
      const last = Number(acks.at(-1)?.split(' ')[1] ?? 0);
      if (last >= killAfter && last % 7 === 3) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer ended without SIGKILL: ${out}`));
      else resolve(out.split('\n').filter(Boolean));
    });
  });
}

recover('after SIGKILL, recover() commits exactly the acknowledged-but-uncommitted writes; the ref equals the files', async () => {
  const lines = await runWriterAndKill(30);
  const acks = lines.filter((l) => l.startsWith('ack ')).map((l) => l.split(' ')).map(([, i, id, v]) => ({ i: Number(i), id: id!, version: Number(v) }));
  const lastFlush = Math.max(...lines.filter((l) => l.startsWith('flushed ')).map((l) => Number(l.split(' ')[1])));
  const lastAck = acks.at(-1)!.i;
  const layout = sddLayout(repo.dir);
  for (const a of acks) {
    const onDisk = JSON.parse(readFileSync(layout.task(a.id), 'utf8')) as { version: number };
    assert.ok(onDisk.version >= a.version, `acknowledged ${a.id} v${a.version} is on disk`);
  }
  // Writes after the last commit: the acknowledged ones must be committed, plus at most the one in flight.
  const idOf = (i: number) => `t${String(i % 10).padStart(4, '0')}`;
  const mustIds = new Set(acks.filter((a) => a.i > lastFlush).map((a) => a.id));
  const mayIds = new Set([...mustIds, idOf(lastAck + 1)]);
  const before = repo.git('rev-parse', 'refs/sdd/state');

  const c = newCommitter();
  const r = await c.recover();
  assert.ok(r, 'a recover commit was made');
  assert.match(r!.message, /^recover: \d+ paths? \(/);
  const changed = repo.git('diff', '--name-only', before, 'refs/sdd/state').split('\n').filter(Boolean);
  const changedTasks = new Set(changed.filter((p) => p.startsWith('.sdd/tasks/')).map((p) => p.split('/').pop()!.replace('.json', '')));
  for (const id of mustIds) assert.ok(changedTasks.has(id), `${id} acknowledged after the last commit is recovered`);
  for (const p of changed) {
    const id = p.split('/').pop()!.replace(/\.jsonl?$/, '');
    assert.ok(mayIds.has(id), `${p} changed only after the last commit`);
  }
  assert.equal(refBlobs(), await diskBlobs());
  assert.is(await c.recover(), null, 'a second recover finds nothing');
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
});

recover('recover commits hand edits, new files and deletions, and creates the ref on first start', async () => {
  const layout = sddLayout(repo.dir);
  const c = newCommitter();
  assert.is(await c.recover(), null, 'empty tree, nothing to do');
  for (const id of ['a1', 'b2', 'c3']) {
    const abs = join(layout.sdd, shardedRel('tasks', id, '.json'));
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, `{"id":"${id}"}\n`);
  }
  writeFileSync(layout.config, 'a: 1\n');
  const first = await c.recover();
  assert.is(first?.message, 'recover: 4 paths (config.yaml, tasks/a1/a1.json, tasks/b2/b2.json, tasks/c3/c3.json)');
  rmSync(join(layout.sdd, 'tasks', 'b2'), { recursive: true });
  writeFileSync(layout.task('a1'), '{"id":"a1","edited":true}\n');
  const second = await newCommitter().recover();
  assert.is(second?.message, 'recover: 2 paths (tasks/a1/a1.json, tasks/b2/b2.json)');
  assert.equal(refBlobs(), await diskBlobs());
  assert.is(repo.git('fsck', '--strict', '--no-dangling'), '');
});

recover.run();
