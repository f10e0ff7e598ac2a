import type { LoadOptions } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import type { createIdentityServices } from '../identity-services.ts'

/**
 * Opens the configured database (schema brought up to date) and builds the services a command needs. The database
 * code is loaded here, on use, so that `sitegrid --help` and a command's --help load no driver (src/cli/build.ts).
 */
export async function withServices<T>(
  env: NodeJS.ProcessEnv,
  options: LoadOptions,
  fn: (s: { config: Config; handle: DatabaseHandle } & ReturnType<typeof createIdentityServices>) => Promise<T>,
): Promise<T> {
  const [{ createIdentityServices }, { systemClock }, { loadConfig }, { openDatabase }, { migrateToLatest }, { withSystemScope }] = await Promise.all([
    import('../identity-services.ts'),
    import('../clock.ts'),
    import('../config/load.ts'),
    import('./database.ts'),
    import('../db/migrate.ts'),
    import('../db/tenant-scope.ts'),
  ])
  const config = loadConfig(env, { ...options, requireDatabaseFolder: true })
  const handle = await openDatabase(config.databaseUrl, 'DATABASE_URL', { poolSize: 2 })
  try {
    await migrateToLatest(handle.db)
    const clock = systemClock
    // Row-level security: an operator's command acts on any organisation it names (org delete, key mint, tenant
    // export/import, reminders) and connects as the owner (DATABASE_URL); it runs in the system scope.
    return await withSystemScope(() => fn({ config, handle, ...createIdentityServices({ config, handle, clock }) }))
  } finally {
    await handle.close()
  }
}
