import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isAlive, runGate, runGates, summarizeGates, type GateResult } from '../../src/agents/index.ts';
import { manualClock } from '../../src/lib/clock.ts';
import { makeTempDir } from '../helpers/repo.ts';

const G = suite('quality gates');
let tmp: ReturnType<typeof makeTempDir>;
G.before.each(() => {
  tmp = makeTempDir('svc-gates-');
});
G.after.each(() => tmp.cleanup());

const gate = (name: string, command: string, required = true, timeout_s = 30) => ({ name, command, required, timeout_s });

G('gates run in the worktree; required failures fail the report, optional ones do not', async () => {
  writeFileSync(join(tmp.dir, 'marker.txt'), 'here');
  const report = await runGates({ clock: manualClock() }, {
    cwd: tmp.dir,
    taskId: 't1',
    sessionId: 's1',
    gates: [gate('lint', 'cat marker.txt && echo " lint ok"'), gate('style', 'echo bad style >&2; exit 1', false), gate('tests', 'echo 2 failing; exit 2')],
  });
  assert.equal(report.results.map((r) => [r.name, r.status, r.exit_code]), [['lint', 'pass', 0], ['style', 'fail', 1], ['tests', 'fail', 2]]);
  assert.is(report.results[0]!.output_tail, 'here lint ok\n');
  assert.is(report.results[1]!.output_tail, 'bad style\n');
  assert.is(report.overall_pass, false);
  assert.equal(report.failed_required, ['tests']);
  assert.is(report.task_id, 't1');
  assert.is(report.started_at, '2026-01-01T00:00:00.000Z');
});

G('only optional failures: the report passes', async () => {
  const report = await runGates({ clock: manualClock() }, { cwd: tmp.dir, taskId: 't', sessionId: 's', gates: [gate('ok', 'true'), gate('meh', 'false', false)] });
  assert.is(report.overall_pass, true);
  assert.equal(report.failed_required, []);
});

G('a gate past its timeout is killed with the children it started', async () => {
  const pidFile = join(tmp.dir, 'child.pid');
  const t0 = Date.now();
  const r = await runGate(gate('slow', `sleep 30 & echo $! > ${pidFile}; echo started; wait`, true, 0.5), { cwd: tmp.dir, killGraceMs: 500 });
  assert.is(r.status, 'timeout');
  assert.ok(Date.now() - t0 < 5000, 'did not wait for the sleep');
  assert.ok(r.output_tail.includes('started'));
  assert.ok(r.output_tail.includes('timed out'));
  const child = Number(readFileSync(pidFile, 'utf8').trim());
  assert.not.ok(isAlive(child), 'the sleeping child was killed with its group');
});

G('the output tail keeps the last bytes only', async () => {
  const r = await runGate(gate('noisy', 'i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done'), { cwd: tmp.dir, tailBytes: 100 });
  assert.ok(r.output_tail.length <= 100);
  assert.ok(r.output_tail.endsWith('line-1999\n'));
  assert.not.ok(r.output_tail.includes('line-1\n'));
});

G('summary: a required gate that timed out or errored blocks the merge', () => {
  const res = (name: string, status: GateResult['status'], required: boolean): GateResult => ({ name, status, required, command: '', exit_code: null, duration_ms: 0, output_tail: '' });
  assert.equal(summarizeGates([res('a', 'pass', true), res('b', 'timeout', true), res('c', 'error', false)]), { overall_pass: false, failed_required: ['b'] });
  assert.equal(summarizeGates([]), { overall_pass: true, failed_required: [] });
});

G.run();
