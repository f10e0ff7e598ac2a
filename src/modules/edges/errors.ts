import { domainError } from '../../errors/domain-error.ts'

/** Seconds a gateway waits before it sends a heartbeat again that this process refused for being busy. */
export const EDGE_STATUS_RETRY_AFTER_SECONDS = 1

/** More heartbeats and sweeps wait for their site's turn in this process than SITEGRID_EDGE_STATUS_QUEUE_MAX: refused at once, nothing stored. */
export class EdgeStatusQueueFull extends domainError('ServiceUnavailable') {
  constructor(limit: number) {
    super(
      `${limit} edge heartbeats are already waiting in this server process (SITEGRID_EDGE_STATUS_QUEUE_MAX); nothing was stored. Send it again after Retry-After seconds.`,
      {
        extensions: { retryAfterSeconds: EDGE_STATUS_RETRY_AFTER_SECONDS, limit, setting: 'SITEGRID_EDGE_STATUS_QUEUE_MAX' },
        retryAfterSeconds: EDGE_STATUS_RETRY_AFTER_SECONDS,
      },
    )
  }
}
