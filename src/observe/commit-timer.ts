import { Counter, Histogram, type Registry } from 'prom-client';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Metrics of state commits: each attempt (the `git fast-import` that writes its objects through the move
 * of refs/sdd/state), its duration and result. The committer reports attempts to the function returned.
 */
export function stateCommitMetrics(registry: Registry): (result: 'ok' | 'lost' | 'error', seconds: number) => void {
  const seconds = new Histogram({ name: 'svc_state_commit_duration_seconds', help: 'Time to write one state commit (objects through the move of refs/sdd/state)', buckets: BUCKETS, registers: [registry] });
  const commits = new Counter({ name: 'svc_state_commits_total', help: 'State commits tried, by result (ok; lost: the ref moved meanwhile and the commit is retried; error)', labelNames: ['result'], registers: [registry] });
  for (const result of ['ok', 'lost', 'error']) commits.inc({ result }, 0);
  return (result, s) => {
    commits.inc({ result });
    if (result === 'ok') seconds.observe(s);
  };
}
