import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startAgents, type AgentsHarness } from './harness.ts';

const T = suite('orchestrator: dependents wait for merged work; re-runs see why the gates failed');
let h: AgentsHarness | undefined;
T.after.each(async () => { await h?.close(); h = undefined; });

T('a dependent of an agent task starts only after that work is merged and closed, from a base that has it', async () => {
  h = await startAgents({ config: (c) => { c.gates = [{ name: 'settle', command: 'sleep 0.4', required: true, timeout_s: 30 }]; } });
  const schema = await h.create('Add schema', ['edit file=schema.sql content=create table t;', 'commit message=schema', 'complete']);
  const build = await h.create('Build on schema', ['append file=schema.sql content= insert into t;', 'commit message=build', 'complete'], { depends_on: [schema.id] });
  let sawDone = false;
  const deadline = Date.now() + 30_000;
  while (h.task(build.id).status !== 'closed') {
    assert.ok(Date.now() < deadline, `timed out: ${JSON.stringify([h.task(schema.id).status, h.task(build.id).status, h.task(build.id).status_reason])}`);
    if (h.task(schema.id).status === 'done') {
      sawDone = true;
      assert.is(h.task(build.id).status, 'open', 'not started while its dependency waits for gates and merge');
    }
    assert.not.equal(h.task(build.id).status, 'blocked', String(h.task(build.id).status_reason));
    await h.orch.tick();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(sawDone, 'the dependency was seen done before it closed');
  assert.is(h.repo.git('show', 'main:schema.sql'), 'create table t;insert into t;', 'the dependent built on the merged work');
});

T('the attempt after a failed gate is told the attempt number, the gate, its command and its output tail', async () => {
  h = await startAgents({
    config: (c) => {
      c.janitor.max_reopens = 1;
      c.gates = [{ name: 'lint', command: 'echo "lint: src/x.ts:3 missing semicolon"; exit 1', required: true, timeout_s: 30 }];
    },
  });
  const t = await h.create('Format the code', ['edit file=x.ts content=let a = 1', 'commit message=x', 'prompt', 'complete']);
  await h.until(() => h!.task(t.id).status === 'failed', 30_000, 'failed after one reopen');
  const logs = readdirSync(join(h.layout.runtime, 'logs')).filter((f) => f.endsWith('.log')).map((f) => readFileSync(join(h!.layout.runtime, 'logs', f), 'utf8'));
  assert.is(logs.length, 2, 'two attempts');
  const [second] = logs.filter((l) => l.includes('## Attempt 2'));
  assert.ok(second, `one prompt names attempt 2:\n${logs.join('\n----\n')}`);
  for (const needle of ['previous attempt failed its quality gates', '### Gate `lint`: fail (exit 1)', 'Command: `echo "lint: src/x.ts:3 missing semicolon"; exit 1`', 'lint: src/x.ts:3 missing semicolon', 'refs/sdd/graveyard/']) {
    assert.ok(second!.includes(needle), `second prompt has ${needle}`);
  }
  assert.not.ok(logs.find((l) => !l.includes('## Attempt 2'))!.includes('## Attempt'), 'the first prompt has no such section');
});

T.run();
