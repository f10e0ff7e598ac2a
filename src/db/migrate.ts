import { Migrator, type Kysely, type MigrationResult } from 'kysely'
import type { Database } from './schema.ts'
import { migrations } from './migrations/index.ts'

export class MigrationFailed extends Error {
  constructor(name: string, cause: unknown) {
    super(`Migration ${name} failed`, { cause })
    this.name = 'MigrationFailed'
  }
}

/** Brings the schema to the latest version; idempotent, safe to run from N processes at once. */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r) => r.status === 'Error')
    throw new MigrationFailed(failed?.migrationName ?? 'unknown', error)
  }
  return results
}
