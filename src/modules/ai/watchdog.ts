import { performance } from 'node:perf_hooks'

/**
 * A deadline that can be paused and restarted, which AbortSignal.timeout cannot: a call's deadline runs across
 * its retries, and while a stream is read it becomes an idle timer that runs only while we wait for the provider.
 */
export interface Watchdog {
  readonly signal: AbortSignal
  readonly hasFired: boolean
  /** Time left before the deadline (as of now, when running). */
  remainingMs(): number
  /** Starts a fresh full period. */
  restart(): void
  pause(): void
  /** Releases the timer; the signal stays as it is. */
  stop(): void
}

export function startWatchdog(timeoutMs: number): Watchdog {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let deadline = 0
  const arm = (): void => {
    clearTimeout(timer)
    deadline = performance.now() + timeoutMs
    timer = setTimeout(() => controller.abort(new DOMException(`No answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
  }
  arm()
  return {
    signal: controller.signal,
    get hasFired() {
      return controller.signal.aborted
    },
    remainingMs: () => (timer === undefined ? timeoutMs : Math.max(0, deadline - performance.now())),
    restart: () => {
      if (!controller.signal.aborted) arm()
    },
    pause: () => {
      clearTimeout(timer)
      timer = undefined
    },
    stop: () => {
      clearTimeout(timer)
      timer = undefined
    },
  }
}
