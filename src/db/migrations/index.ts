import type { Migration } from 'kysely'
import * as foundation from './0001-foundation.ts'
import * as sites from './0100-sites.ts'

/**
 * The one list of migrations, applied in key order on SQLite and PostgreSQL alike. Append only: a shipped
 * migration never changes. Each area adds its own file and one line here.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0100-sites': sites,
}
