import type { FastifyBaseLogger } from 'fastify'
import { createIdentityServices } from '../app.ts'
import { systemClock, type Clock } from '../clock.ts'
import { loadConfig } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { connectDatabase, type DatabaseHandle } from '../db/connect.ts'
import { withSystemScope } from '../db/tenant-scope.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { createLogger } from '../http/logger.ts'
import { creatorDirectory } from '../jobs/creator-directory.ts'
import { createSmtpSender } from '../modules/reminders/mail.ts'
import { createReminderService } from '../modules/reminders/service.ts'
import type { Command } from './command.ts'

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

export const remindersCommand: Command = {
  path: ['reminders', 'run-once'],
  usage: '',
  positionals: [],
  options: {},
  summary: 'Runs one poll of the key-expiry reminder job (for cron and tests) and prints its summary as JSON. Needs SITEGRID_SMTP_HOST.',
  run: async (_args, io) => {
    const config = loadConfig(io.env, { requireKeySecret: false })
    if (!config.smtp) {
      io.err('sitegrid reminders run-once: no SMTP relay configured (SITEGRID_SMTP_HOST)')
      return 78
    }
    const handle = await connectDatabase(config.databaseUrl, { poolSize: 2 })
    try {
      await migrateToLatest(handle.db)
      const log = createLogger(config.logLevel, process.stderr) // stdout carries the summary alone
      const service = reminderServiceFrom({ config, handle, clock: systemClock, log })!
      // Row-level security: the poll looks at the expiring keys of every organisation.
      io.out(JSON.stringify(await withSystemScope(() => service.runOnce())))
    } finally {
      await handle.close()
    }
  },
}
