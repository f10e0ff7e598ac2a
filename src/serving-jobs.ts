import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from './clock.ts'
import type { Config } from './config/schema.ts'
import type { DatabaseHandle } from './db/connect.ts'
import type { Metrics } from './http/metrics.ts'
import { startReminderJob } from './jobs/reminders.ts'
import { startEdgeSweepJob } from './modules/edges/sweep-job.ts'
import type { EdgesService } from './modules/edges/service.ts'
import { startOutboxRetentionJob } from './modules/fleet/outbox/retention.ts'
import { startLiveBatchCloseJob } from './modules/historian/service/open-batch.ts'
import { startHistorianRetentionJob } from './modules/historian/service/retention.ts'
import { reminderServiceFrom } from './reminder-service.ts'

/**
 * Every periodic job of the serving process, started in one place: by app.ts when the app is ready (`runJobs`, which
 * cli/server.ts sets), given the services the app composed. Answers the one stop of them all (each waits for its run
 * under way).
 */
export function startServingJobs(deps: {
  config: Config
  handle: DatabaseHandle
  clock: Clock
  log: FastifyBaseLogger
  metrics: Metrics
  edges: Pick<EdgesService, 'sweep'>
}): () => Promise<void> {
  const { config, handle, clock, log, metrics } = deps
  const reminders = reminderServiceFrom({ config, handle, clock, log })
  if (!reminders) log.info('no SMTP relay configured (SITEGRID_SMTP_HOST): key-expiry reminders are off')
  const stops = [
    ...(reminders ? [startReminderJob(reminders, config.reminderIntervalMs, log, (outcome, summary) => metrics.reminderRun(outcome, summary))] : []),
    // Fleet link (issue 26): the outbox keeps what a peer may still read, and the latest change of each record.
    startOutboxRetentionJob(handle, clock, { mode: config.mode, retentionMs: config.link.outboxRetentionDays * 86_400_000 }, log),
    startHistorianRetentionJob(handle, clock, config.historianRetentionIntervalMs, log),
    // Issue 30: a gateway's open live batch is closed once its window ends, also when no push follows.
    startLiveBatchCloseJob(handle, clock, log),
    startEdgeSweepJob(deps.edges, config.edgeStaleAfterMs, log),
  ]
  return async () => {
    await Promise.all(stops.map((stop) => stop()))
  }
}
