// The journal as a transactional outbox: a change's audit record and archive line are durable with it,
// and reach their files exactly once, whatever a crash interrupted (chain intact).
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { silentLogger } from '../../src/lib/log.ts';
import { verifyAudit } from '../../src/observe/audit-verify.ts';
import { replayJournal } from '../../src/store/journal-replay.ts';
import { sddLayout } from '../../src/store/layout.ts';
import { makeTempDir } from '../helpers/repo.ts';

const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
const log = silentLogger();
const outbox = suite('store outbox');
let tmp: ReturnType<typeof makeTempDir>;
outbox.before.each(() => { tmp = makeTempDir('svc-outbox-'); });
outbox.after.each(() => tmp.cleanup());

// Run the child to its SIGKILL; the ids it was told were created.
async function crash(drained: number, total: number): Promise<string[]> {
  const out = await run(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'outbox-child.ts'), tmp.dir, String(drained), String(total)], { timeout: 60_000 })
    .catch((err: { signal?: string; stdout: string }) => err);
  assert.is((out as { signal?: string }).signal, 'SIGKILL', JSON.stringify(out).slice(0, 2000));
  return (out as { stdout: string }).stdout.split('\n').filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));
}
const auditLines = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort().flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n')) : []);
const records = (dir: string) => auditLines(dir).flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } });
const count = (ids: string[], found: string[]) => ids.filter((id) => found.filter((f) => f === id).length !== 1);

outbox('a crash between the journal line and the audit segment: every record appears exactly once, the chain intact', async () => {
  const layout = sddLayout(tmp.dir);
  const acked = await crash(24, 64);
  assert.is(acked.length, 64);
  const before = records(layout.auditDir).map((r) => r.resource_id);
  assert.ok(before.length >= 24 && before.length < 64, `only the drained records are in the segment before replay (${before.length})`);
  const replayed = await replayJournal(layout, log, async () => undefined);
  assert.is(replayed.audit, 64 - before.length, 'replay appends the missing ones, none twice');
  const v = await verifyAudit(layout);
  assert.ok(v.ok, JSON.stringify(v.firstBroken));
  assert.is(v.records, 64);
  assert.equal(count(acked, records(layout.auditDir).map((r) => r.resource_id)), [], 'each acknowledged create audited exactly once');
  assert.equal(records(layout.auditDir).map((r) => r.seq), Array.from({ length: 64 }, (_, i) => i + 1));
  assert.equal((await replayJournal(layout, log, async () => undefined)).lines, 0, 'a second replay has nothing to do');
});

outbox('the same for the archive: each acknowledged line once, after a torn write too', async () => {
  const layout = sddLayout(tmp.dir);
  const acked = await crash(16, 40);
  const archived = () => records(dirname(layout.archive)).map((r) => r.task_id as string);
  assert.ok(archived().length < 40, 'the archive is behind the acknowledgements');
  // A crash tore the next line of each file half way.
  appendFileSync(layout.archive, '{"task_id":"t00');
  const seg = join(layout.auditDir, readdirSync(layout.auditDir).sort().at(-1)!);
  appendFileSync(seg, '{"seq":999,"ts":"20');
  await replayJournal(layout, log, async () => undefined);
  assert.equal(count(acked, archived()), [], 'each acknowledged archive line exactly once');
  assert.is(readFileSync(layout.archive, 'utf8').split('\n').filter((l) => l.startsWith('{"task_id":"t00') && !l.endsWith('}')).length, 1, 'the torn piece stays a line of its own');
  const v = await verifyAudit(layout);
  assert.ok(v.ok, JSON.stringify(v.firstBroken));
  assert.is(v.records, 40);
  assert.is(v.warnings.length, 1, 'the torn audit line is linked over');
  for (const id of acked) assert.ok(existsSync(layout.task(id)), `${id} file restored`);
});

outbox.run();
