import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { newOrgId, ORG_ID_PATTERN, type OrgId } from '../../ids.ts'
import { invalidField, NotFound } from '../../errors/domain-error.ts'
import type { Org } from '../../identity.ts'
import { InvalidOrgSlug, OrgIdTaken, OrgSlugTaken } from './errors.ts'
import { countOrgs, deleteOrgBySlug, findOrgBySlug, findServedOrgBySlug, insertOrg, listOrgs, setOrgSuspendedAt } from './store.ts'

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

function toOrg(row: { id: string; slug: string; name: string; created_at: number }): Org {
  return { id: row.id as OrgId, slug: row.slug, name: row.name, createdAt: new Date(row.created_at).toISOString() }
}

export function createOrgsService(deps: { handle: DatabaseHandle; clock: Clock }) {
  const { handle, clock } = deps
  const db = handle.db

  async function setSuspension(slug: string, at: number | null): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const row = await findOrgBySlug(trx, slug)
      if (!row) throw new NotFound()
      if ((row.suspended_at === null) === (at === null)) return
      await setOrgSuspendedAt(trx, slug, at)
      await handle.announceInvalidation(trx)
    })
    handle.invalidateLocally()
  }
  return {
    /** Provisions an organisation; throws InvalidOrgSlug or OrgSlugTaken (Conflict). */
    async provision(slug: string, name?: string, id?: string): Promise<Org> {
      if (!SLUG_PATTERN.test(slug)) throw new InvalidOrgSlug()
      if (id !== undefined && !ORG_ID_PATTERN.test(id))
        throw invalidField('/id', 'must be org_ followed by 8 Crockford base32 characters (upper case, no I L O U)')
      const row = { id: id ?? newOrgId(), slug, name: name ?? slug, created_at: clock.now() }
      try {
        await insertOrg(db, row)
      } catch (err) {
        if (await findOrgBySlug(db, slug)) throw new OrgSlugTaken(slug)
        if (id !== undefined) throw new OrgIdTaken(id)
        throw err
      }
      return toOrg(row)
    },
    async findBySlug(slug: string): Promise<Org | undefined> {
      const row = await findOrgBySlug(db, slug)
      return row && toOrg(row)
    },
    /** The organisation `{slug}.{base domain}` serves (http/tenancy.ts): none while it is suspended. */
    async findServedBySlug(slug: string): Promise<Org | undefined> {
      const row = await findServedOrgBySlug(db, slug)
      return row && toOrg(row)
    },
    /**
     * Suspends an organisation: from its commit on, in every process, its hosts (subdomain and custom domains) serve
     * nothing, as an unknown host; nothing it owns is changed, so `resume` gives back the same keys, sessions and
     * link credentials. Suspending a suspended one keeps its first time. NotFound if absent.
     */
    async suspend(slug: string): Promise<void> {
      await setSuspension(slug, clock.now())
    },
    /** Serves a suspended organisation again; resuming one not suspended changes nothing. NotFound if absent. */
    async resume(slug: string): Promise<void> {
      await setSuspension(slug, null)
    },
    async list(): Promise<Org[]> {
      return (await listOrgs(db)).map(toOrg)
    },
    async count(): Promise<number> {
      return Number((await countOrgs(db)).n)
    },
    /** Deprovisioning: the organisation and everything it owns, in one transaction; NotFound if absent. */
    async deprovision(slug: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const result = await deleteOrgBySlug(trx, slug)
        if (Number(result.numDeletedRows) === 0) throw new NotFound()
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
    },
  }
}

export type OrgsService = ReturnType<typeof createOrgsService>
