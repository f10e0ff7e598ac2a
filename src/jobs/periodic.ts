import type { FastifyBaseLogger } from 'fastify'

export interface PeriodicJob {
  /** The `job` field of its log lines. */
  job: string
  /** The first run after this long, then one every `intervalMs`. */
  firstMs: number
  intervalMs: number
  /** One run; its summary is logged with `done`, a failure with `failed` (the next run tries again). */
  run: () => Promise<object>
  done: string
  failed: string
  /** A run that did nothing worth an info line (a frequent sweep that found nothing) is logged at debug. */
  isIdle?: (summary: object) => boolean
  /** Hears each run's end, with its summary when it did not fail (the metrics). */
  observe?: (outcome: 'done' | 'failed', summary: object | undefined) => void
}

/**
 * A job of the serving process: one run at a time in this process (a tick while one runs is skipped), timers that
 * never hold the process open. Returns its stop, which waits for a run under way.
 */
export function startPeriodicJob(o: PeriodicJob, log: FastifyBaseLogger): () => Promise<void> {
  let running: Promise<unknown> | undefined
  const tick = () => {
    if (running) return
    running = o
      .run()
      .then((summary) => {
        if (o.isIdle?.(summary)) log.debug({ job: o.job, ...summary }, o.done)
        else log.info({ job: o.job, ...summary }, o.done)
        o.observe?.('done', summary)
      })
      .catch((err: unknown) => {
        log.error({ err, job: o.job }, o.failed)
        o.observe?.('failed', undefined)
      })
      .finally(() => {
        running = undefined
      })
  }
  const first = setTimeout(tick, o.firstMs)
  const timer = setInterval(tick, o.intervalMs)
  first.unref()
  timer.unref()
  return async () => {
    clearTimeout(first)
    clearInterval(timer)
    await running
  }
}
