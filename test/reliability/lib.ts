// Shared checks of the reliability suites (not a test file: the runner only collects *.test.ts).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCommitted } from '../../src/store/layout.ts';

/** Scale of a suite: the short CI value, RELIABILITY_LONG's value, or RELIABILITY_ROUNDS exactly. */
export function rounds(short: number, long: number): number {
  const given = Number(process.env.RELIABILITY_ROUNDS);
  if (Number.isInteger(given) && given > 0) return given;
  return isLong() ? long : short;
}

export const isLong = (): boolean => ['1', 'true', 'yes'].includes((process.env.RELIABILITY_LONG ?? '').toLowerCase());

/** Print one machine-readable line of figures (RELIABILITY.md quotes them). */
export function report(suite: string, figures: Record<string, unknown>): void {
  process.stdout.write(`RELIABILITY ${JSON.stringify({ suite, long: isLong(), ...figures })}\n`);
}

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with RELIABILITY_SEED. */
export function seeded(seed = Number(process.env.RELIABILITY_SEED ?? Date.now() % 2 ** 31)) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { seed, next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` until it returns true or `ms` passes; returns the last result. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number, every = 50): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(every);
  }
}

/** Every regular file under `dir` (relative paths, forward slashes). */
export function walk(dir: string, rel = ''): string[] {
  if (!existsSync(join(dir, rel))) return [];
  const out: string[] = [];
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(dir, p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Every task file under .sdd/tasks, parsed; a file that does not parse is reported, not thrown. */
export function readTaskFiles(repo: string): { tasks: Map<string, any>; broken: string[] } {
  const dir = join(repo, '.sdd', 'tasks');
  const tasks = new Map<string, any>();
  const broken: string[] = [];
  for (const rel of walk(dir).filter((p) => p.endsWith('.json'))) {
    try {
      const t = JSON.parse(readFileSync(join(dir, rel), 'utf8'));
      if (rel !== `${t.id.slice(-2)}/${t.id}.json`) broken.push(`${rel}: holds id ${t.id}`);
      else tasks.set(t.id, t);
    } catch (err) {
      broken.push(`${rel}: ${(err as Error).message}`);
    }
  }
  return { tasks, broken };
}

/** Temp files left under .sdd (a write that was interrupted and not cleaned up). */
export function leftoverTemps(repo: string): string[] {
  return walk(join(repo, '.sdd')).filter((p) => p.endsWith('.tmp') && !p.startsWith('worktrees/'));
}

/** The git blob id of a file's bytes (what `git hash-object` prints). */
export const gitBlobId = (buf: Buffer): string => createHash('sha1').update(`blob ${buf.length}\0`).update(buf).digest('hex');

/** Differences between refs/sdd/state and the committed files under .sdd ([] when they match). */
export function refMismatches(repo: string): string[] {
  let listing: string;
  try {
    listing = execFileSync('git', ['ls-tree', '-r', '--full-tree', 'refs/sdd/state', '--', '.sdd'], { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 28 });
  } catch {
    return ['refs/sdd/state missing'];
  }
  const ref = new Map<string, string>();
  for (const line of listing.split('\n').filter(Boolean)) {
    const [meta, path] = line.split('\t') as [string, string];
    ref.set(path.slice('.sdd/'.length), meta.split(' ')[2]!);
  }
  const disk = new Map<string, string>();
  for (const rel of walk(join(repo, '.sdd')).filter(isCommitted)) disk.set(rel, gitBlobId(readFileSync(join(repo, '.sdd', rel))));
  const out: string[] = [];
  for (const [p, oid] of disk) if (ref.get(p) !== oid) out.push(`${p}: disk ${oid.slice(0, 8)} ref ${ref.get(p)?.slice(0, 8) ?? 'absent'}`);
  for (const p of ref.keys()) if (!disk.has(p)) out.push(`${p}: in the ref, not on disk`);
  return out;
}

/** `git hash-object` agrees with our blob ids (guards the in-process hashing used by refMismatches). */
export function hashObject(repo: string, rel: string): string {
  return execFileSync('git', ['hash-object', join('.sdd', rel)], { cwd: repo, encoding: 'utf8' }).trim();
}

/** Output of `git fsck --strict` when it fails, else null. */
export function fsckErrors(repo: string): string | null {
  try {
    execFileSync('git', ['fsck', '--strict', '--no-progress', '--no-dangling'], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return null;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message;
  }
}

/** Every audit record of the repository, in chain order. */
export function auditRecords(repo: string): any[] {
  const dir = join(repo, '.sdd', 'audit');
  const out: any[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      try { if (line.trim()) out.push(JSON.parse(line)); } catch { /* torn line: the verifier judges it */ }
    }
  }
  return out;
}

/** Files of the repository outside .git and .sdd with their sizes and mtimes, plus `git status --porcelain`. */
export function snapshotOutsideSdd(repo: string): string {
  const files = walk(repo).filter((p) => !p.startsWith('.git/') && !p.startsWith('.sdd/')).sort();
  const lines = files.map((p) => {
    const st = statSync(join(repo, p));
    return `${p} ${st.size} ${st.mtimeMs} ${createHash('sha1').update(readFileSync(join(repo, p))).digest('hex')}`;
  });
  const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo, encoding: 'utf8' });
  return `${lines.join('\n')}\n--- status\n${status}`;
}

/** Let the default tenant hold many active tasks (the suites create thousands). */
export function liftQuota(repo: string): void {
  mkdirSync(join(repo, '.sdd'), { recursive: true });
  writeFileSync(join(repo, '.sdd', 'tenants.json'), '{\n  "default": {\n    "max_tasks": 100000000\n  }\n}\n');
}

/** One HTTP request with exact bytes (no URL normalisation); a server that hangs up early gives status 0. */
export function rawRequest(port: number, o: { method: string; path: string; headers?: Record<string, string>; body?: Buffer | string; timeoutMs?: number }): Promise<{ status: number; text: string; json: any; error?: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: { status: number; text: string; json: any; error?: string }) => { if (!settled) { settled = true; resolve(v); } };
    const headers = { ...(o.body !== undefined ? { 'content-length': String(Buffer.byteLength(o.body)) } : {}), ...o.headers };
    const req = httpRequest({ host: '127.0.0.1', port, method: o.method, path: o.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const finish = () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try { json = JSON.parse(text); } catch { json = undefined; }
        done({ status: res.statusCode ?? 0, text, json });
      };
      res.on('end', finish);
      res.on('error', finish);
    });
    req.setTimeout(o.timeoutMs ?? 10_000, () => req.destroy(new Error('timeout')));
    // A server that answers 413 and closes makes our write fail; its answer is still read above.
    req.on('error', (err) => setTimeout(() => done({ status: 0, text: '', json: undefined, error: err.message }), 200));
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}
