import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { defineCommand, type ArgsDef } from 'citty';
import { showValue, titleOf, type BoardDiff, type HistoryRow, type TaskDoc } from '../state/board-diff.ts';
import { HistoryError, openHistory, type Rev, type StateHistory } from '../state/history.ts';
import { CliError, UsageError, intArg } from './args.ts';
import { command, type RunContext } from './command.ts';
import { table } from './table.ts';

// `svc state log|show|diff`: the board's history from git alone, in any clone that has the ref.
const REF: ArgsDef = { ref: { type: 'string', description: 'The ref to read (default refs/sdd/state)' } };
const REV_HELP = 'a commit, ~N commits back, or @{2 hours ago}';

const log = command({ name: 'state log', description: 'The board\'s history: time, actor, change, task' }, {
  ...REF,
  task: { type: 'string', description: 'Only this task' },
  since: { type: 'string', description: 'Only changes since, e.g. "2 hours ago" or 2026-11-20' },
  limit: { type: 'string', alias: 'n', description: 'At most N rows (default 50)' },
}, (c) => withHistory(c, async (h) => {
  const rows = await h.log({ task: c.values.task as string | undefined, since: c.values.since as string | undefined, limit: intArg('limit', c.values.limit, 1, 100_000) ?? 50 });
  if (c.values.json) return c.out(JSON.stringify(rows, null, 2));
  c.out(rows.length ? table(rows.map(logLine), ['time', 'rev', 'actor', 'change', 'task', 'title', 'detail']) : 'no changes');
}));

const show = command({ name: 'state show', description: `The board, or one task, as it was at a revision (${REV_HELP})` }, {
  rev: { type: 'positional', required: false, description: 'Revision (default: the tip)' }, ...REF,
  task: { type: 'string', description: 'Show this task only' },
}, (c) => withHistory(c, async (h) => {
  const rev = await h.resolve(c.positionals[0]);
  if (c.values.task !== undefined) {
    const task = await h.task(rev, String(c.values.task));
    if (!task) throw new CliError(`task ${String(c.values.task)} is not on the board at ${short(rev)} (${rev.time})`, 3);
    return c.out(JSON.stringify(task, null, 2));
  }
  const tasks = [...(await h.board(rev)).values()].sort((a, b) => String(a.created_at ?? '').localeCompare(String(b.created_at ?? '')) || a.id.localeCompare(b.id));
  if (c.values.json) return c.out(JSON.stringify({ rev: rev.oid, time: rev.time, tasks }, null, 2));
  c.out(`${short(rev)} (${rev.time}): ${tasks.length} task${tasks.length === 1 ? '' : 's'}${counts(tasks)}`);
  if (tasks.length) c.out(table(tasks, ['id', 'status', 'role', 'priority', 'version', 'title']));
}));

const diff = command({ name: 'state diff', description: `Tasks added, removed and changed between two revisions (${REV_HELP})` }, {
  a: { type: 'positional', description: 'From revision' },
  b: { type: 'positional', required: false, description: 'To revision (default: the tip)' }, ...REF,
}, (c) => withHistory(c, async (h) => {
  const [a, b] = [await h.resolve(c.positionals[0]), await h.resolve(c.positionals[1])];
  const d = await h.diff(a, b);
  if (c.values.json) return c.out(JSON.stringify({ from: { rev: a.oid, time: a.time }, to: { rev: b.oid, time: b.time }, ...d }, null, 2));
  c.out(diffText(a, b, d));
}));

/** `svc state log|show|diff`. */
export const stateCommand = defineCommand({ meta: { name: 'state', description: 'The task board\'s history in refs/sdd/state (offline, git alone)' }, subCommands: { log, show, diff } });

// Open the history of the repository (work tree or bare clone); history errors become exit codes.
async function withHistory(c: RunContext, fn: (h: StateHistory) => Promise<void>): Promise<void> {
  const h = openHistory(gitRoot(resolve(String(c.values.workdir ?? process.cwd()))), (c.values.ref as string | undefined) || undefined);
  try {
    await fn(h);
  } catch (err) {
    if (!(err instanceof HistoryError)) throw err;
    if (err.kind === 'usage') throw new UsageError(err.message);
    throw new CliError(err.message, 3);
  } finally {
    h.close();
  }
}

function gitRoot(dir: string): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return git('rev-parse', '--is-bare-repository') === 'true' ? dir : git('rev-parse', '--show-toplevel');
  } catch {
    throw new CliError(`${dir} is not a git repository`);
  }
}

const short = (r: Rev) => r.oid.slice(0, 10);
const logLine = (r: HistoryRow) => ({ ...r, time: r.time.replace(/\.\d+Z$/, 'Z'), rev: r.rev.slice(0, 10), task: r.task_id, actor: r.actor ?? '-' });

function counts(tasks: TaskDoc[]): string {
  const by = new Map<string, number>();
  for (const t of tasks) by.set(String(t.status), (by.get(String(t.status)) ?? 0) + 1);
  return by.size ? ` (${[...by].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${n} ${s}`).join(', ')})` : '';
}

function diffText(a: Rev, b: Rev, d: BoardDiff): string {
  const head = `${short(a)} (${a.time}) → ${short(b)} (${b.time}): ${d.added.length} added, ${d.removed.length} removed, ${d.changed.length} changed`;
  const lines = [head];
  for (const t of d.added) lines.push(`added    ${t.id}  ${showValue(titleOf(t))}  ${String(t.status ?? '')}`.trimEnd());
  for (const t of d.removed) lines.push(`removed  ${t.id}  ${showValue(titleOf(t))}`);
  for (const t of d.changed) {
    lines.push(`changed  ${t.id}  ${showValue(t.title)}`);
    for (const [k, v] of Object.entries(t.fields)) lines.push(`    ${k}: ${showValue(v.from)} → ${showValue(v.to)}`);
  }
  return lines.join('\n');
}
