import type { Db, DomainBindingsTable } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'

export function insertDomainBinding(db: Db, row: DomainBindingsTable) {
  return db.insertInto('domain_bindings').values(row).execute()
}

export function listDomainBindings(db: Db, orgId: OrgId, options: { after: string | undefined; limit: number }) {
  let query = db.selectFrom('domain_bindings').selectAll().where('org_id', '=', orgId)
  if (options.after !== undefined) query = query.where('domain', '>', options.after)
  return query.orderBy('domain').limit(options.limit).execute()
}

export function findDomainBinding(db: Db, orgId: OrgId, domain: string) {
  return db.selectFrom('domain_bindings').selectAll().where('org_id', '=', orgId).where('domain', '=', domain).executeTakeFirst()
}

export function setDomainBindingEnabled(db: Db, orgId: OrgId, domain: string, isEnabled: boolean, at: number) {
  return db
    .updateTable('domain_bindings')
    .set({ is_enabled: isEnabled ? 1 : 0, updated_at: at })
    .where('org_id', '=', orgId)
    .where('domain', '=', domain)
    .executeTakeFirst()
}

export function deleteDomainBinding(db: Db, orgId: OrgId, domain: string) {
  return db.deleteFrom('domain_bindings').where('org_id', '=', orgId).where('domain', '=', domain).executeTakeFirst()
}

/** Whether any organisation holds the domain (after a unique-index failure: tells a 409 from a real error). */
export function domainIsBound(db: Db, domain: string) {
  return db.selectFrom('domain_bindings').select('org_id').where('domain', '=', domain).executeTakeFirst()
}

/**
 * Tenancy runs before the organisation is known: the Host header is the lookup, and the binding it finds
 * names the organisation. Like the API-key verifier lookup, a query without an org filter by necessity.
 */
export function findBindingByHost(db: Db, domain: string) {
  return db
    .selectFrom('domain_bindings')
    .innerJoin('orgs', 'orgs.id', 'domain_bindings.org_id')
    .select(['orgs.id', 'orgs.slug', 'orgs.name', 'orgs.created_at', 'orgs.suspended_at', 'domain_bindings.is_enabled'])
    .where('domain_bindings.domain', '=', domain)
    .executeTakeFirst()
}
