import type { Db, OrgsTable } from '../../db/schema.ts'

export function insertOrg(db: Db, row: OrgsTable) {
  return db.insertInto('orgs').values(row).execute()
}

export function findOrgBySlug(db: Db, slug: string) {
  return db.selectFrom('orgs').selectAll().where('slug', '=', slug).executeTakeFirst()
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
