import { Counter, Histogram, type Registry } from 'prom-client';
import type { Git } from '../store/git-cli.ts';

const STATE_REF = 'refs/sdd/state';
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The git the state committer is given, timed: a state commit is the `git fast-import` that writes its
 * objects through the `update-ref` that moves refs/sdd/state; its duration and result become metrics.
 * (The store is not changed for this: the committer's git calls are observed from outside.)
 */
export function timeStateCommits(git: Git, registry: Registry): Git {
  const seconds = new Histogram({ name: 'svc_state_commit_duration_seconds', help: 'Time to write one state commit (objects through the move of refs/sdd/state)', buckets: BUCKETS, registers: [registry] });
  const commits = new Counter({ name: 'svc_state_commits_total', help: 'State commits tried, by result (ok; lost: the ref moved meanwhile and the commit is retried; error)', labelNames: ['result'], registers: [registry] });
  for (const result of ['ok', 'lost', 'error']) commits.inc({ result }, 0);
  let writeStarted: number | null = null;
  return {
    root: git.root,
    run: (args, opts) => git.run(args, opts),
    exclusive: (fn) => git.exclusive(fn),
    async mutate(args, opts) {
      const t0 = performance.now();
      if (args.includes('fast-import')) writeStarted = t0;
      const movesState = args.includes('update-ref') && args.includes(STATE_REF);
      try {
        const r = await git.mutate(args, opts);
        if (movesState) {
          commits.inc({ result: r.code === 0 ? 'ok' : 'lost' });
          if (r.code === 0) seconds.observe((performance.now() - (writeStarted ?? t0)) / 1000);
          writeStarted = null;
        }
        return r;
      } catch (err) {
        if (movesState) { commits.inc({ result: 'error' }); writeStarted = null; }
        throw err;
      }
    },
  };
}
