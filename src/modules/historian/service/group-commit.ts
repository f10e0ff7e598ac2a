import type { OrgId } from '../../../ids.ts'

interface Waiting<T, R> {
  item: T
  resolve: (result: R) => void
  reject: (err: unknown) => void
}

/**
 * Group commit (live pushes, live.ts): an organisation's items that arrive while its previous ones are being written
 * wait, and are then written together, `write` taking up to `maxGroup` of them in one transaction and answering one
 * result each; the first of a quiet moment goes once the event loop's current I/O phase ends, so that the requests
 * read with it join. What a commit costs (the WAL flush, SQLite's checkpoints) is paid once a group instead of once an
 * item. A group that fails is written again one item at a time, so one item's
 * failure is its own. Per organisation: a transaction runs in one organisation's row-level-security scope.
 */
export function createGroupCommit<T, R>(write: (orgId: OrgId, group: T[]) => Promise<R[]>, maxGroup: number) {
  const queues = new Map<OrgId, Array<Waiting<T, R>>>()

  async function drain(orgId: OrgId, queue: Array<Waiting<T, R>>): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, maxGroup)
      try {
        const results = await write(
          orgId,
          group.map((w) => w.item),
        )
        group.forEach((w, i) => w.resolve(results[i]!))
      } catch (err) {
        if (group.length === 1) group[0]!.reject(err)
        else for (const w of group) await write(orgId, [w.item]).then(([result]) => w.resolve(result!), w.reject)
      }
    }
    queues.delete(orgId)
  }

  return (orgId: OrgId, item: T): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      const queue = queues.get(orgId)
      if (queue !== undefined) {
        queue.push({ item, resolve, reject })
        return
      }
      const started = [{ item, resolve, reject }]
      queues.set(orgId, started)
      // Started after the event loop's poll phase, not at once: better-sqlite3 writes a whole transaction without
      // yielding to I/O, so pushes whose requests arrive during it are read only after it; deferred, the requests read
      // in that same poll phase join this group (through HTTP they never did: groups of one).
      setImmediate(() => void drain(orgId, started))
    })
}
