import type { FastifyBaseLogger } from 'fastify'
import { withSystemScope } from '../db/tenant-scope.ts'
import { startPeriodicJob, type PeriodicJob } from './periodic.ts'

/** One poll of the reminders (the reminders module's service; cli/ builds it): its summary is logged. */
export interface ReminderPoll {
  runOnce(): Promise<object>
}

/** Polls every `intervalMs` (spec 8: 24 hours), first right after start; safe with N processes. `observe`: the metrics. */
export function startReminderJob(service: ReminderPoll, intervalMs: number, log: FastifyBaseLogger, observe?: PeriodicJob['observe']) {
  return startPeriodicJob(
    {
      job: 'reminders',
      firstMs: 1_000,
      intervalMs,
      // Row-level security: the poll looks at the expiring keys of every organisation.
      run: () => withSystemScope(() => service.runOnce()),
      done: 'reminder poll done',
      failed: 'reminder poll failed',
      ...(observe ? { observe } : {}),
    },
    log,
  )
}
