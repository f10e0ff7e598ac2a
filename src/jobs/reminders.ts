import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { withSystemScope } from '../db/tenant-scope.ts'
import { createSmtpSender } from '../modules/reminders/mail.ts'
import { createReminderService, type CreatorDirectory } from '../modules/reminders/service.ts'

/** Builds the reminder service from the configuration; undefined when no SMTP relay is configured. */
export function reminderServiceFrom(deps: { config: Config; handle: DatabaseHandle; clock: Clock; directory: CreatorDirectory; log: FastifyBaseLogger }) {
  const { config } = deps
  if (!config.smtp) return undefined
  return createReminderService({
    handle: deps.handle, clock: deps.clock, send: createSmtpSender(config.smtp), operatorEmail: config.operatorEmail, directory: deps.directory,
    onError: (err, keyId) => deps.log.warn({ keyId, code: (err as { code?: string }).code }, 'reminder send failed; retried on the next poll'),
  })
}

/** Polls every `intervalMs` (spec 8: 24 hours), first right after start; safe with N processes. */
export function startReminderJob(service: ReturnType<typeof createReminderService>, intervalMs: number, log: FastifyBaseLogger) {
  let running: Promise<unknown> | undefined
  const tick = () => {
    if (running) return
    // Row-level security: the poll looks at the expiring keys of every organisation.
    running = withSystemScope(() => service.runOnce())
      .then((summary) => log.info({ job: 'reminders', ...summary }, 'reminder poll done'))
      .catch((err: unknown) => log.error({ err, job: 'reminders' }, 'reminder poll failed'))
      .finally(() => { running = undefined })
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
