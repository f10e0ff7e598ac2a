import type { Actor, Org } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { DomainBindingsTable } from '../../db/schema.ts'
import { NotFound } from '../../errors/domain-error.ts'
import { decodeCursor, toPage } from '../../http/paging.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { checkDomain } from './domains-rules.ts'
import { DomainTaken } from './domains-errors.ts'
import type { DomainBinding } from './domains-schemas.ts'
import {
  deleteDomainBinding,
  domainIsBound,
  findBindingByHost,
  findDomainBinding,
  insertDomainBinding,
  listDomainBindings,
  setDomainBindingEnabled,
} from './domains-store.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'

const iso = (ms: number) => new Date(ms).toISOString()

function toDomainBinding(row: DomainBindingsTable): DomainBinding {
  return { domain: row.domain, isEnabled: row.is_enabled === 1, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) }
}

/**
 * Custom domains that serve an organisation (spec 4.5). Every change announces a cache invalidation in the
 * same transaction, so every process's tenancy cache forgets the old binding once it commits.
 */
export function createDomainsService(deps: { handle: DatabaseHandle; clock: Clock; baseDomain: string }) {
  const { handle, clock, baseDomain } = deps
  const db = handle.db
  return {
    /** Binds a domain, disabled; throws ValidationFailed (naming /domain) or DomainTaken (409, any organisation). */
    async bind(orgId: OrgId, actor: Actor, input: string | null): Promise<DomainBinding> {
      const domain = checkDomain(input, baseDomain)
      const now = clock.now()
      const row: DomainBindingsTable = { org_id: orgId, domain, is_enabled: 0, created_at: now, updated_at: now, created_by: actor.subject }
      try {
        await db.transaction().execute(async (trx) => {
          await insertDomainBinding(trx, row)
          await recordAudit(trx, clock, orgId, actor, { action: 'domain.bound', target: domain })
          await handle.announceInvalidation(trx)
        })
      } catch (err) {
        // The unique index decides a race between two organisations; the loser's transaction rolled back.
        // Row-level security: bound by any organisation, so the lookup runs in the system scope.
        if (await withSystemScope(() => domainIsBound(db, domain))) throw new DomainTaken(domain)
        throw err
      }
      handle.invalidateLocally()
      return toDomainBinding(row)
    },

    /** The organisation's bindings in domain order, keyset-paged. */
    async list(orgId: OrgId, page: { limit: number; cursor: string | undefined }) {
      const after = decodeCursor(page.cursor, ['string'])?.[0] as string | undefined
      const rows = await listDomainBindings(db, orgId, { after, limit: page.limit + 1 })
      return toPage(rows, page.limit, toDomainBinding, (r) => [r.domain])
    },

    /** Enables or disables a binding; an absent or foreign domain: NotFound. Unchanged: no audit row. */
    async setEnabled(orgId: OrgId, actor: Actor, domain: string, isEnabled: boolean): Promise<DomainBinding> {
      const changed = await db.transaction().execute(async (trx) => {
        const row = await findDomainBinding(trx, orgId, domain)
        if (!row) throw new NotFound()
        if ((row.is_enabled === 1) === isEnabled) return { row, changed: false }
        const now = clock.now()
        // Removed since it was read (PostgreSQL reads committed rows): the removal won, this is the 404 it would get after.
        if (Number((await setDomainBindingEnabled(trx, orgId, domain, isEnabled, now)).numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: isEnabled ? 'domain.enabled' : 'domain.disabled', target: domain })
        await handle.announceInvalidation(trx)
        return { row: { ...row, is_enabled: isEnabled ? 1 : 0, updated_at: now }, changed: true }
      })
      if (changed.changed) handle.invalidateLocally()
      return toDomainBinding(changed.row)
    },

    /** Removes a binding; the domain stops serving at once in every process. Absent or foreign: NotFound. */
    async unbind(orgId: OrgId, actor: Actor, domain: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const result = await deleteDomainBinding(trx, orgId, domain)
        if (Number(result.numDeletedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'domain.unbound', target: domain })
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
    },

    /** Tenancy: the organisation a custom host names, with whether the binding is enabled; undefined if unbound. */
    async findByHost(host: string): Promise<{ org: Org; isEnabled: boolean } | undefined> {
      const row = await findBindingByHost(db, host)
      if (!row) return undefined
      return {
        org: { id: row.id as OrgId, slug: row.slug, name: row.name, createdAt: iso(row.created_at) },
        // A suspended organisation's domains serve nothing, as a disabled binding (its subdomain too: tenancy.ts).
        isEnabled: row.is_enabled === 1 && row.suspended_at === null,
      }
    },
  }
}

export type DomainsService = ReturnType<typeof createDomainsService>
