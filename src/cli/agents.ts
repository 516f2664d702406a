import { request, type IncomingMessage } from 'node:http';
import { intArg } from './args.ts';
import { call, failure, type Endpoint } from './client.ts';
import { command, type RunContext } from './command.ts';
import { CONN, endpoint, query } from './remote.ts';
import { table } from './table.ts';

const SID = { session: { type: 'positional', description: 'Session id (see svc agents)' } } as const;
const sidOf = (c: RunContext) => encodeURIComponent(c.positionals[0] ?? '');

/** `svc agents`: the agent sessions of the running svc, one per line. */
export const agentsCommand = command({ name: 'agents', description: 'Agent sessions: who works on what, since when' }, { ...CONN }, async (c) => {
  const rows = await call<Record<string, unknown>[]>(endpoint(c), 'GET', '/agents');
  if (c.values.json) return c.out(JSON.stringify(rows, null, 2));
  if (rows.length === 0) return c.out('no agent sessions');
  const view = rows.map((r) => ({ ...r, session_id: r.synthetic ? `${String(r.session_id)} (no agent)` : r.session_id, task_title: r.task_title }));
  c.out(table(view, ['session_id', 'status', 'role', 'adapter', 'model', 'pid', 'task_id', 'task_title', 'started_at'], 40));
});

/** `svc kill SID`: ask the orchestrator to stop a session's agent; its task is blocked until someone unblocks it. */
export const killCommand = command({ name: 'kill', description: 'Stop an agent; its task becomes blocked (svc task unblock ID to retry)' }, { ...SID, ...CONN }, async (c) => {
  const r = await call<{ session_id: string }>(endpoint(c), 'POST', `/agents/${sidOf(c)}/kill`);
  c.out(c.values.json ? JSON.stringify(r) : `kill requested for ${r.session_id}; the orchestrator stops it on its next tick (an agent on a worker: on the worker's next heartbeat)`);
});

/** `svc logs SID [-f]`: the log of a session as plain text; -f follows it over the live stream. */
export const logsCommand = command({ name: 'logs', description: 'Print the log of an agent session (-f: keep following it)' }, {
  ...SID, ...CONN,
  follow: { type: 'boolean', alias: 'f', description: 'Keep printing new lines as the agent writes them (Ctrl-C to stop)' },
  bytes: { type: 'string', valueHint: 'n', description: 'Only about the last n bytes, from a line start (default 65536; 0 = all)' },
}, async (c) => {
  const ep = endpoint(c);
  const tail = intArg('bytes', c.values.bytes, 0, Number.MAX_SAFE_INTEGER) ?? 65_536;
  const log = await call<{ content: string; size: number }>(ep, 'GET', `/agents/${sidOf(c)}/logs?${query({ tail_bytes: tail })}`);
  if (c.values.json && !c.values.follow) return c.out(JSON.stringify(log, null, 2));
  process.stdout.write(log.content);
  if (c.values.follow) await follow(ep, sidOf(c), log.size, (line) => process.stdout.write(`${line}\n`));
});

// Read the SSE stream from byte `from` on; frames are `id: <offset>`, `event: log`, `data: {"line": …}`.
function follow(ep: Endpoint, sid: string, from: number, onLine: (line: string) => void): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream', 'last-event-id': String(from) };
  if (ep.token) headers.authorization = `Bearer ${ep.token}`;
  return new Promise((done, fail) => {
    const req = request(`${ep.url}/agents/${sid}/stream`, { headers }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) return fail(failure(res.statusCode ?? 0, `GET /agents/${sid}/stream`, 'cannot follow the log', ep));
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
          if (/^event: ?log$/m.test(frame) && data) onLine((JSON.parse(data) as { line: string }).line);
        }
      });
      res.on('end', done);
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}
