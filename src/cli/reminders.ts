import type { Command } from './command.ts'

export const remindersCommand: Command = {
  path: ['reminders', 'run-once'],
  usage: '',
  positionals: [],
  options: {},
  summary: 'Runs one poll of the key-expiry reminder job (for cron and tests) and prints its summary as JSON. Needs SITEGRID_SMTP_HOST.',
  run: async (_args, io) => {
    // Loaded on use: `sitegrid --help` loads no database driver (src/cli/build.ts).
    const [{ systemClock }, { loadConfig }, { openDatabase }, { withSystemScope }, { migrateToLatest }, { createLogger }, { reminderServiceFrom }] =
      await Promise.all([
        import('../clock.ts'),
        import('../config/load.ts'),
        import('./database.ts'),
        import('../db/tenant-scope.ts'),
        import('../db/migrate.ts'),
        import('../http/logger.ts'),
        import('../reminder-service.ts'),
      ])
    const config = loadConfig(io.env, { requireKeySecret: false, requireDatabaseFolder: true })
    if (!config.smtp) {
      io.err('sitegrid reminders run-once: no SMTP relay configured (SITEGRID_SMTP_HOST)')
      return 78
    }
    const handle = await openDatabase(config.databaseUrl, 'DATABASE_URL', { poolSize: 2 })
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
