import type { FastifyBaseLogger } from 'fastify'
import { withSystemScope } from '../db/tenant-scope.ts'

/** One poll of the reminders (the reminders module's service; cli/ builds it): its summary is logged. */
export interface ReminderPoll {
  runOnce(): Promise<object>
}

/** Polls every `intervalMs` (spec 8: 24 hours), first right after start; safe with N processes. */
export function startReminderJob(service: ReminderPoll, intervalMs: number, log: FastifyBaseLogger) {
  let running: Promise<unknown> | undefined
  const tick = () => {
    if (running) return
    // Row-level security: the poll looks at the expiring keys of every organisation.
    running = withSystemScope(() => service.runOnce())
      .then((summary) => log.info({ job: 'reminders', ...summary }, 'reminder poll done'))
      .catch((err: unknown) => log.error({ err, job: 'reminders' }, 'reminder poll failed'))
      .finally(() => {
        running = undefined
      })
  }
  const first = setTimeout(tick, 1_000)
  const timer = setInterval(tick, intervalMs)
  first.unref()
  timer.unref()
  return async () => {
    clearTimeout(first)
    clearInterval(timer)
    await running
  }
}
