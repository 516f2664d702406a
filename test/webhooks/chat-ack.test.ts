// A slash command is answered before a slow board has created its task, and the task is still created once.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '../../src/lib/clock.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { Background } from '../../src/webhooks/http.ts';
import { openLedger } from '../../src/webhooks/ledger.ts';
import { webhookMetrics } from '../../src/webhooks/metrics.ts';
import { chatRoutes } from '../../src/webhooks/routes-chat.ts';
import type { TaskPort } from '../../src/webhooks/tasks.ts';
import { makeTempDir } from '../helpers/repo.ts';
import { startServer, type Harness } from '../server/harness.ts';
import { chatHeaders } from './support.ts';

const T = suite('webhooks: chat answers first');
let h: Harness;
let tmp: ReturnType<typeof makeTempDir>;
const created: { title: string }[] = [];
let release: () => void = () => undefined;
const background = new Background();

// A board whose writes wait until the test lets them through (a store busy with something else).
const slowBoard: TaskPort = {
  create: async (input) => {
    await new Promise<void>((r) => { release = r; });
    created.push({ title: input.title });
    return { id: `t${created.length}`, title: input.title } as never;
  },
  byTicket: () => undefined, updateOpen: async () => null, cancelOpen: async () => null, tenant: () => 'default', close: () => undefined,
};

T.before(async () => {
  tmp = makeTempDir('svc-chat-ack-');
  const log = silentLogger();
  const ledger = await openLedger(`${tmp.dir}/chat.jsonl`, { nowS: () => Date.now() / 1000, log });
  const routes = chatRoutes({ env: (n) => (n === 'SERVICE_CHAT_SIGNING_SECRET' ? 's3' : undefined), clock: systemClock, ledger, tasks: slowBoard, metrics: webhookMetrics(), log, background, ackMs: 150 });
  h = await startServer({ routes });
});
T.after(async () => { await h.close(); tmp.cleanup(); });

T('the answer says queued while the board is busy; a retry meanwhile and after creates nothing more', async () => {
  const body = new URLSearchParams({ command: '/svc', text: 'ship it', user_id: 'U1', trigger_id: 'tr-slow' }).toString();
  const send = async (retry = false) => (await h.fetch('/webhooks/chat/commands', { method: 'POST', headers: { ...chatHeaders('s3', body), ...(retry ? { 'x-slack-retry-num': '1' } : {}) }, body })).json();
  assert.equal(await send(), { response_type: 'ephemeral', text: 'Task queued: ship it (it is on the board in a moment)' });
  assert.equal((await send(true)).text, 'Task queued: ship it (it is on the board in a moment)');
  release();
  await background.idle();
  assert.equal(created, [{ title: 'ship it' }]);
  assert.equal(await send(true), { response_type: 'ephemeral', text: 'Task `t1` created: ship it' });
  assert.is(created.length, 1);
});

T.run();
