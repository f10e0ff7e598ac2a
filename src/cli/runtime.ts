import { createIdentityServices } from '../app.ts'
import { systemClock } from '../clock.ts'
import { loadConfig, type LoadOptions } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { connectDatabase, type DatabaseHandle } from '../db/connect.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { withSystemScope } from '../db/tenant-scope.ts'

/** Opens the configured database (schema brought up to date) and builds the services a command needs. */
export async function withServices<T>(
  env: NodeJS.ProcessEnv,
  options: LoadOptions,
  fn: (s: { config: Config; handle: DatabaseHandle } & ReturnType<typeof createIdentityServices>) => Promise<T>,
): Promise<T> {
  const config = loadConfig(env, options)
  const handle = await connectDatabase(config.databaseUrl, { poolSize: 2 })
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
