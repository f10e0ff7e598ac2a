import type { Actor } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import { isUniqueViolation } from '../../db/constraint-errors.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db, SitesTable } from '../../db/schema.ts'
import { invalidField, NotFound } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { siteStatusName } from './codes.ts'
import { SiteCodeTaken, SiteDeletionUnconfirmed, SiteLinked } from './errors.ts'
import type { CreateSiteInput, ListSitesQueryInput, Site, UpdateSiteInput } from './schemas.ts'
import { deleteSite, findSiteByCode, holdSite, insertSite, listSites, updateSite } from './store.ts'
import { isIanaTimeZone } from './time-zone.ts'

/**
 * What another area owns under a site, for the deletion preview. Areas register one in site-services.ts; their tables
 * reference (org_id, site code) with ON DELETE CASCADE, so the delete itself is one statement. An area whose records
 * outlive the site changed (the API keys restricted to it, revoked) does that in `release`, in the delete's
 * transaction, and answers how many records it changed.
 */
export interface SiteDependent {
  name: string
  count(db: Db, orgId: OrgId, siteCode: string): Promise<number>
  release?(db: Db, orgId: OrgId, siteCode: string, by: { actor: Actor; clock: Clock }): Promise<number>
}

const iso = (ms: number) => new Date(ms).toISOString()

export function toSite(row: SitesTable): Site {
  return {
    code: row.code,
    name: row.name,
    description: row.description,
    location: row.location,
    timeZone: row.time_zone,
    status: row.status,
    statusName: siteStatusName(row.status),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}

export function checkTimeZone(zone: string | undefined): void {
  if (zone !== undefined && !isIanaTimeZone(zone)) throw invalidField('/timeZone', 'must be an IANA time zone such as Europe/Paris or UTC')
}

export interface SitesDeps {
  handle: DatabaseHandle
  clock: Clock
  dependents: readonly SiteDependent[]
  /** Fleet link: where the site is linked (its data lives on both sides), it is not deleted: 'cloud' or 'site' says which side refuses. */
  linked?: { side: 'cloud' | 'site'; isLinked(db: Db, orgId: OrgId, code: string): Promise<boolean> }
}

export function createSitesService(deps: SitesDeps) {
  const { handle, clock } = deps
  const db = handle.db
  return {
    /** The site or the uniform NotFound; every site-scoped area starts here. */
    async require(orgId: OrgId, code: string): Promise<Site> {
      const row = await findSiteByCode(db, orgId, code)
      if (!row) throw new NotFound()
      return toSite(row)
    },

    /**
     * Inside another area's write transaction (`trx`): whether the site exists, held until that transaction ends so
     * that a concurrent delete either comes first (then: false) or waits and sees what the transaction wrote.
     */
    exists(trx: Db, orgId: OrgId, code: string): Promise<boolean> {
      return holdSite(trx, orgId, code, handle.dialect)
    },

    async create(orgId: OrgId, actor: Actor, input: CreateSiteInput): Promise<Site> {
      checkTimeZone(input.timeZone)
      const now = clock.now()
      const row: SitesTable = {
        org_id: orgId,
        code: input.code,
        name: input.name,
        description: input.description ?? null,
        location: input.location ?? null,
        time_zone: input.timeZone ?? 'UTC',
        status: input.status ?? 0,
        created_at: now,
        updated_at: now,
      }
      await db.transaction().execute(async (trx) => {
        try {
          await insertSite(trx, row)
        } catch (err) {
          if (isUniqueViolation(err)) throw new SiteCodeTaken(input.code)
          throw err
        }
        await recordAudit(trx, clock, orgId, actor, { action: 'site.created', target: input.code })
      })
      return toSite(row)
    },

    async list(orgId: OrgId, query: ListSitesQueryInput) {
      const limit = query.limit ?? 50
      const after = decodeCursor(query.cursor, ['string'])
      const rows = await listSites(db, orgId, { limit, after: after?.[0] as string | undefined, status: query.status })
      return toPage(rows, limit, toSite, (r) => [r.code])
    },

    /** Spec 2.2: only the fields present change; a null clears a nullable field. */
    async update(orgId: OrgId, actor: Actor, code: string, input: UpdateSiteInput): Promise<Site> {
      checkTimeZone(input.timeZone)
      const changes: Partial<SitesTable> = { updated_at: clock.now() }
      if (input.name !== undefined) changes.name = input.name
      if (input.description !== undefined) changes.description = input.description
      if (input.location !== undefined) changes.location = input.location
      if (input.timeZone !== undefined) changes.time_zone = input.timeZone
      if (input.status !== undefined) changes.status = input.status
      return db.transaction().execute(async (trx) => {
        const result = await updateSite(trx, orgId, code, changes)
        if (Number(result.numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'site.updated', target: code, detail: { fields: Object.keys(input) } })
        return toSite((await findSiteByCode(trx, orgId, code))!)
      })
    },

    /** What deleting the site would remove, by area. */
    async dependents(orgId: OrgId, code: string): Promise<Record<string, number>> {
      const counts: Record<string, number> = {}
      for (const d of deps.dependents) counts[d.name] = await d.count(db, orgId, code)
      return counts
    },

    /** Deletes the site and all it owns in one transaction, only when `confirm` equals its code. */
    async remove(orgId: OrgId, actor: Actor, code: string, confirm: string | undefined): Promise<void> {
      const released = await db.transaction().execute(async (trx) => {
        if (!(await findSiteByCode(trx, orgId, code))) throw new NotFound()
        if (deps.linked && (await deps.linked.isLinked(trx, orgId, code))) throw new SiteLinked(code, deps.linked.side)
        if (confirm !== code) {
          const counts: Record<string, number> = {}
          for (const d of deps.dependents) counts[d.name] = await d.count(trx, orgId, code)
          throw new SiteDeletionUnconfirmed(code, counts)
        }
        // A concurrent delete may have removed it since it was read (its DELETE waited for that one, then found no row):
        // that request did not delete it, so it answers the uniform 404 and records nothing.
        if (Number((await deleteSite(trx, orgId, code)).numDeletedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'site.deleted', target: code })
        let released = 0
        for (const d of deps.dependents) released += (await d.release?.(trx, orgId, code, { actor, clock })) ?? 0
        // Every process forgets what it remembered of those records (a revoked key's verification).
        if (released > 0) await handle.announceInvalidation(trx)
        return released
      })
      if (released > 0) handle.invalidateLocally()
    },
  }
}

export type SitesService = ReturnType<typeof createSitesService>
