// The worker's git traffic with the server: the base branch from /repo.git (agents fork from the latest),
// the board from /state.git (read-only mirror), and agent branches pushed to /repo.git. The token goes in
// the environment (GIT_CONFIG_*), never in argv, where `ps` would show it.
import type { Git } from '../store/git-cli.ts';

/** The branch of the worker's clone that holds the server's base as last fetched (agents fork from it). */
export const BASE_BRANCH = 'svc/base';
const BASE_REF = `refs/heads/${BASE_BRANCH}`;

/** Outcome of a push: ok, refused by the server's gate (final), or not reached (retry). */
export type PushResult = { ok: true } | { ok: false; final: boolean; why: string };

// http(s) for these calls only: the hardened git forbids every transport.
const TRANSPORT = ['-c', 'protocol.http.allow=always', '-c', 'protocol.https.allow=always', '-c', 'credential.helper='];
const authEnv = (token: string) => ({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}` });

/** Fetch the server's base branch (its HEAD) into BASE_REF; null on success, else why. */
export async function fetchBase(git: Git, server: string, token: string): Promise<string | null> {
  const r = await git.mutate([...TRANSPORT, 'fetch', '-q', '--no-tags', `${server}/repo.git`, `+HEAD:${BASE_REF}`], { env: authEnv(token), allowFail: true, timeoutMs: 300_000 });
  return r.code === 0 ? null : firstLine(r.stderr);
}

/** Mirror the board: refs/sdd/state from /state.git (read-only; nothing is served here). */
export async function fetchState(git: Git, server: string, token: string): Promise<string | null> {
  const r = await git.mutate([...TRANSPORT, 'fetch', '-q', '--no-tags', `${server}/state.git`, '+refs/sdd/state:refs/sdd/state'], { env: authEnv(token), allowFail: true, timeoutMs: 120_000 });
  return r.code === 0 ? null : firstLine(r.stderr);
}

// receive-pack's own failures (a pack that raced a repack, a ref lock held): another push negotiates afresh.
const GIT_TRANSIENT = /missing necessary objects|unpacker error|failed to (lock|update ref|write)|n\/a \(unpacker error\)/;

/** Push refs/heads/agent/<sid> (forced: the session's branch is the agent's alone). */
export async function pushBranch(git: Git, server: string, token: string, branch: string): Promise<PushResult> {
  const ref = `refs/heads/${branch}`;
  // A push to a URL writes nothing here (no remote-tracking ref): pushes of several sessions run side by side.
  const r = await git.run([...TRANSPORT, 'push', '--porcelain', `${server}/repo.git`, `+${ref}:${ref}`], { env: authEnv(token), allowFail: true, timeoutMs: 600_000 });
  if (r.code === 0) return { ok: true };
  // `!\t<src>:<dst>\t[remote rejected] (<why>)`: the server's gate answered; another try gets the same answer.
  const rejected = /\[remote rejected\] \((.*)\)/.exec(r.stdout);
  if (rejected) return { ok: false, final: !GIT_TRANSIENT.test(rejected[1]!), why: rejected[1]! };
  return { ok: false, final: false, why: firstLine(r.stderr) || firstLine(r.stdout) };
}

const firstLine = (s: string) => s.trim().split('\n').filter((l) => !/^(remote: )?$/.test(l)).slice(-1)[0]?.slice(0, 300) ?? '';
