import type { FastifyBaseLogger } from 'fastify'
import { withSystemScope } from '../../db/tenant-scope.ts'
import { startPeriodicJob } from '../../jobs/periodic.ts'
import type { EdgeStatusService } from './status.ts'

/**
 * The stale sweep of edge gateways (issue 30), every quarter of the stale time (at least every second): a controller
 * whose gateway went quiet gets its `COMM_LOSS` alarm within a quarter of the stale time even if nobody reads its
 * status. Started with the serving process's other jobs (serving-jobs.ts), stopped on close; safe with N processes (each mark is
 * conditional, each event id deterministic).
 */
export function startEdgeSweepJob(edges: Pick<EdgeStatusService, 'sweep'>, staleAfterMs: number, log: FastifyBaseLogger): () => Promise<void> {
  const intervalMs = Math.max(1000, Math.floor(staleAfterMs / 4))
  return startPeriodicJob(
    {
      job: 'edge-stale-sweep',
      firstMs: intervalMs,
      intervalMs,
      // Across organisations by design: the sweep finds every organisation with a report gone stale.
      run: () => withSystemScope(() => edges.sweep()),
      done: 'edge gateways swept for stale reports',
      failed: 'edge stale sweep failed',
      isIdle: (summary) => (summary as { raised: number }).raised === 0,
    },
    log,
  )
}
