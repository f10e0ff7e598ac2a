import { sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { LINKED_TABLES, rowKey } from './outbox-port.ts'
import { shapeOf } from './validate.ts'

const PAGE = 1000

/**
 * Site, after a seed (a tenant package of the cloud's sites imported at enrolment): every row of a cloud-authoritative
 * table now holds the cloud's version as of `version`, the seq of the cursor taken before the export. Without a base,
 * a site edit of a seeded row would go up as a row the site created, and lose to the cloud's row of the same key. A
 * cloud change the export missed comes by the pull from that cursor and moves the base on. Run it in the seeding
 * transaction; answers how many bases were written.
 */
export async function recordSeedBases(db: Db, dialect: Dialect, orgId: string, version: number): Promise<number> {
  let written = 0
  for (const table of LINKED_TABLES) {
    if (table.direction !== 'down' || table.name === 'link_conflicts') continue
    const shape = await shapeOf(db, dialect, table.name)
    if (!shape) continue
    const key = shape.primaryKey.filter((c) => c !== 'org_id')
    let offset = 0
    for (;;) {
      const { rows } = await sql<Record<string, unknown>>`select ${sql.join(key.map((c) => sql.ref(c)))} from ${sql.table(table.name)}
        where org_id = ${orgId} order by ${sql.join(key.map((c) => sql.ref(c)))} limit ${PAGE} offset ${offset}`.execute(db)
      if (rows.length === 0) break
      await db
        .insertInto('link_base')
        .values(rows.map((r) => ({ org_id: orgId, table_name: table.name, row_key: rowKey(key.map((c) => r[c])), version })))
        .onConflict((oc) => oc.columns(['org_id', 'table_name', 'row_key']).doUpdateSet({ version }))
        .execute()
      written += rows.length
      if (rows.length < PAGE) break
      offset += PAGE
    }
  }
  return written
}
