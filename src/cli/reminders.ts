import { systemClock } from '../clock.ts'
import { loadConfig } from '../config/load.ts'
import { connectDatabase } from '../db/connect.ts'
import { withSystemScope } from '../db/tenant-scope.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { createLogger } from '../http/logger.ts'
import { reminderServiceFrom } from '../jobs/reminders.ts'
import { creatorDirectory } from '../jobs/creator-directory.ts'
import type { Command } from './command.ts'

export const remindersCommand: Command = {
  path: ['reminders', 'run-once'], usage: '', positionals: [], options: {},
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
      const service = reminderServiceFrom({ config, handle, clock: systemClock, directory: creatorDirectory(handle, systemClock), log })!
      // Row-level security: the poll looks at the expiring keys of every organisation.
      io.out(JSON.stringify(await withSystemScope(() => service.runOnce())))
    } finally {
      await handle.close()
    }
  },
}
