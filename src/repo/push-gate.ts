// What a node may push to /repo.git, decided from the command list of a receive-pack request (pure):
// only refs/heads/agent/<sid> of sessions it holds, never a delete; and the report-status answer of a
// refused push, so `git push` prints `! [remote rejected] <ref> (<why>)` like any other refusal.

/** One ref update of a push: `<old> <new> <ref>`. */
export interface PushCommand {
  oldId: string;
  newId: string;
  ref: string;
}

/** The command list of a receive-pack request, read from its first bytes. */
export type CommandSection =
  | { kind: 'incomplete' }
  | { kind: 'invalid'; why: string }
  | { kind: 'ok'; commands: PushCommand[]; capabilities: string[]; length: number };

const ZERO = /^0{40}$|^0{64}$/;
const OID = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
const SESSION_BRANCH = /^refs\/heads\/agent\/([0-9a-z][0-9a-z_-]{0,63})$/;

/** Parse pkt-lines up to the flush that ends the command list; `length` is where the pack begins. */
export function readCommandSection(buf: Buffer): CommandSection {
  const commands: PushCommand[] = [];
  let capabilities: string[] = [];
  for (let at = 0; ;) {
    if (buf.length < at + 4) return { kind: 'incomplete' };
    const head = buf.subarray(at, at + 4).toString('latin1');
    if (!/^[0-9a-f]{4}$/.test(head)) return { kind: 'invalid', why: 'not a pkt-line' };
    const len = parseInt(head, 16);
    if (len === 0) return commands.length ? { kind: 'ok', commands, capabilities, length: at + 4 } : { kind: 'invalid', why: 'no ref to update' };
    if (len < 4) return { kind: 'invalid', why: 'bad pkt-line length' };
    if (buf.length < at + len) return { kind: 'incomplete' };
    let line = buf.subarray(at + 4, at + len).toString('utf8').replace(/\n$/, '');
    at += len;
    if (line.startsWith('shallow ')) continue;
    const nul = line.indexOf('\0');
    if (nul >= 0) {
      if (commands.length === 0) capabilities = line.slice(nul + 1).split(' ').filter(Boolean);
      line = line.slice(0, nul);
    }
    const [oldId = '', newId = '', ref = '', ...more] = line.split(' ');
    if (!OID.test(oldId) || !OID.test(newId) || !ref || more.length) return { kind: 'invalid', why: `not a ref update: ${JSON.stringify(line.slice(0, 120))}` };
    commands.push({ oldId, newId, ref });
  }
}

/** Why one update is refused, or null when the node may make it (pure). */
export function refusal(cmd: PushCommand, held: ReadonlySet<string>): string | null {
  const m = SESSION_BRANCH.exec(cmd.ref);
  if (!m) return 'only refs/heads/agent/<session> of a task this node holds may be pushed';
  if (!held.has(m[1]!)) return `session ${m[1]} is not held by this node (its task is not claimed by it, or is over)`;
  if (ZERO.test(cmd.newId)) return 'deleting an agent branch is refused';
  return null;
}

/** All-or-nothing: the reasons per ref when any update is refused, else null (pure). */
export function judgePush(commands: readonly PushCommand[], held: ReadonlySet<string>): Map<string, string> | null {
  const why = new Map<string, string>();
  for (const c of commands) {
    const r = refusal(c, held);
    if (r) why.set(c.ref, r);
  }
  if (why.size === 0) return null;
  for (const c of commands) if (!why.has(c.ref)) why.set(c.ref, 'another ref of this push was refused');
  return why;
}

const pkt = (payload: Buffer): Buffer => Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0')), payload]);
const FLUSH = Buffer.from('0000');

/** The receive-pack result that refuses every ref (`ng <ref> <why>`), in side-band 1 when the client asked for it (pure). */
export function refusalReport(why: ReadonlyMap<string, string>, capabilities: readonly string[]): Buffer {
  const lines = [pkt(Buffer.from('unpack ok\n')), ...[...why].map(([ref, r]) => pkt(Buffer.from(`ng ${ref} ${r.replace(/[\r\n]/g, ' ')}\n`))), FLUSH];
  const report = Buffer.concat(lines);
  if (!capabilities.includes('side-band-64k') && !capabilities.includes('side-band')) return report;
  const max = capabilities.includes('side-band-64k') ? 65515 : 995;
  const bands: Buffer[] = [];
  for (let i = 0; i < report.length; i += max) bands.push(pkt(Buffer.concat([Buffer.from([1]), report.subarray(i, i + max)])));
  return Buffer.concat([...bands, FLUSH]);
}
