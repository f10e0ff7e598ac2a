import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { NotFound } from '../../errors/domain-error.ts'
import { deletePlatformAdmin, insertPlatformAdmin, isPlatformAdminAccount, listPlatformAdmins } from './platform-admins-store.ts'

export interface PlatformAdmin {
  accountId: string
  note: string | null
  addedAt: string
}

/** The control plane's operators: a server-side list of OIDC `oid`s, managed by `sitegrid platform-admin`. */
export function createPlatformAdminsService(deps: { handle: DatabaseHandle; clock: Clock }) {
  const { handle, clock } = deps
  const db = handle.db
  return {
    async isPlatformAdmin(accountId: string): Promise<boolean> {
      return (await isPlatformAdminAccount(db, accountId)) !== undefined
    },
    /** Adds an `oid`; true when it was not listed yet. */
    async add(accountId: string, note: string | null): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const added = await insertPlatformAdmin(trx, accountId, note, clock.now())
        await handle.announceInvalidation(trx)
        return added
      }).finally(() => handle.invalidateLocally())
    },
    /** Removes an `oid` at once in every process sharing the database; NotFound when it was not listed. */
    async remove(accountId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const result = await deletePlatformAdmin(trx, accountId)
        if (Number(result.numDeletedRows) === 0) throw new NotFound()
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
    },
    async list(): Promise<PlatformAdmin[]> {
      return (await listPlatformAdmins(db)).map((r) => ({ accountId: r.account_id, note: r.note, addedAt: new Date(r.added_at).toISOString() }))
    },
  }
}

export type PlatformAdminsService = ReturnType<typeof createPlatformAdminsService>
