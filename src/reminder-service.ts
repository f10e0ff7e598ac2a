import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from './clock.ts'
import type { Config } from './config/schema.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { createIdentityServices } from './identity-services.ts'
import { creatorDirectory } from './jobs/creator-directory.ts'
import { createSmtpSender } from './modules/reminders/mail.ts'
import { createReminderService } from './modules/reminders/service.ts'

/**
 * Builds the reminder service from the configuration (for `serve`'s job and `reminders run-once`); undefined when no
 * SMTP relay is configured. A key's creator is found through the members and site-users services.
 */
export function reminderServiceFrom(deps: { config: Config; handle: DatabaseHandle; clock: Clock; log: FastifyBaseLogger }) {
  const { config, handle, clock } = deps
  if (!config.smtp) return undefined
  const { members, siteUsers } = createIdentityServices({ config, handle, clock })
  return createReminderService({
    handle,
    clock,
    send: createSmtpSender(config.smtp),
    operatorEmail: config.operatorEmail,
    directory: creatorDirectory({ members, siteUsers }),
    onError: (err, keyId) => deps.log.warn({ keyId, code: (err as { code?: string }).code }, 'reminder send failed; retried on the next poll'),
  })
}
