import { domainError } from '../../errors/domain-error.ts'

export class AlarmStateConflict extends domainError('AlarmStateConflict') {
  constructor(reason: string) {
    super(`The alarm's state does not allow this: ${reason}.`)
  }
}

/** Seconds a client waits before it sends an alarm write again that this process refused for being busy. */
export const ALARM_WRITE_RETRY_AFTER_SECONDS = 1

/** A write that lost its race with the site's other writers on every attempt until its deadline: nothing was written. */
export class AlarmWriteRacesLost extends domainError('ServiceUnavailable') {
  constructor(cause: unknown) {
    super("The site's alarms kept changing under this write until it gave up; nothing was changed. Send it again after Retry-After seconds.", {
      extensions: { retryAfterSeconds: ALARM_WRITE_RETRY_AFTER_SECONDS },
      retryAfterSeconds: ALARM_WRITE_RETRY_AFTER_SECONDS,
      cause,
    })
  }
}

/** More alarm writes are waiting in this process than SITEGRID_ALARM_WRITE_QUEUE_MAX: refused at once, nothing written. */
export class AlarmWriteQueueFull extends domainError('ServiceUnavailable') {
  constructor(limit: number) {
    super(
      `${limit} alarm writes are already waiting in this server process (SITEGRID_ALARM_WRITE_QUEUE_MAX); nothing was changed. Send it again after Retry-After seconds.`,
      {
        extensions: { retryAfterSeconds: ALARM_WRITE_RETRY_AFTER_SECONDS, limit, setting: 'SITEGRID_ALARM_WRITE_QUEUE_MAX' },
        retryAfterSeconds: ALARM_WRITE_RETRY_AFTER_SECONDS,
      },
    )
  }
}

/** Cloud: a linked site's alarm events come from its site server through the link, never from a gateway here. */
export class AlarmEventsFromSiteServer extends domainError('AlarmsFromSiteServer') {
  constructor(siteCode: string) {
    super(`Site ${siteCode} is linked to a site server: its alarms come from that server. Post the events to the site server; nothing was stored.`)
  }
}
