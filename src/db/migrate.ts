import { Migrator, type Kysely, type MigrationResult } from 'kysely'
import type { Database } from './schema.ts'
import { migrations } from './migrations/index.ts'
import { isPostgres, secureTenantTables } from './row-level-security.ts'
import { withSystemScope } from './tenant-scope.ts'

export class MigrationFailed extends Error {
  constructor(name: string, cause: unknown) {
    super(`Migration ${name} failed`, { cause })
    this.name = 'MigrationFailed'
  }
}

/** Brings the schema to the latest version; idempotent, safe to run from N processes at once. */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResult[]> {
  // Migrations run as the owner, and row-level security is forced on the owner too: a data migration sees all rows.
  return withSystemScope(() => migrate(db))
}

async function migrate(db: Kysely<Database>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r) => r.status === 'Error')
    throw new MigrationFailed(failed?.migrationName ?? 'unknown', error)
  }
  if (isPostgres(db)) await secureTenantTables(db)
  return results
}
