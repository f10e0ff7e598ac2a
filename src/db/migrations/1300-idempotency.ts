import type { Kysely } from 'kysely'
import { enableTenantRowSecurity, isPostgres } from '../row-level-security.ts'

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per organisation and Idempotency-Key: the primary key decides which of N concurrent requests (in any
  // number of processes) executes; the others wait for its stored answer.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_method', 'text', (c) => c.notNull())
    .addColumn('request_path', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('headers', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['org_id', 'key'])
    .execute()
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['org_id', 'created_at']).execute()
  // A tenant table added after 1200-row-level-security: it turns row-level security on itself.
  if (isPostgres(db)) await enableTenantRowSecurity(db, 'idempotency_keys')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute()
}
