import type { Insertable } from 'kysely'
import type { Db, OrgsTable } from '../../db/schema.ts'

export function insertOrg(db: Db, row: Insertable<OrgsTable>) {
  return db.insertInto('orgs').values(row).execute()
}

export function findOrgBySlug(db: Db, slug: string) {
  return db.selectFrom('orgs').selectAll().where('slug', '=', slug).executeTakeFirst()
}

/** The organisation a host serves: none while it is suspended. */
export function findServedOrgBySlug(db: Db, slug: string) {
  return db.selectFrom('orgs').selectAll().where('slug', '=', slug).where('suspended_at', 'is', null).executeTakeFirst()
}

export function setOrgSuspendedAt(db: Db, slug: string, suspendedAt: number | null) {
  return db.updateTable('orgs').set({ suspended_at: suspendedAt }).where('slug', '=', slug).executeTakeFirst()
}

export function listOrgs(db: Db) {
  return db.selectFrom('orgs').selectAll().orderBy('slug').execute()
}

export function countOrgs(db: Db) {
  return db
    .selectFrom('orgs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
}

/** Foreign keys cascade from `orgs`: every tenant table goes with it in the same statement. */
export function deleteOrgBySlug(db: Db, slug: string) {
  return db.deleteFrom('orgs').where('slug', '=', slug).executeTakeFirst()
}
