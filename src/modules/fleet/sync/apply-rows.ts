import { createHash } from 'node:crypto'
import { inMultiRowStatements } from '../../../db/multi-row.ts'
import type { Db } from '../../../db/schema.ts'
import { dropDeletedBatch, finishReplacedBatches } from '../historian-chunks/service.ts'
import type { Change } from './outbox-port.ts'
import { deleteRow, upsertRows, type Row } from './store.ts'
import type { LinkedShape } from './validate.ts'

/** SHA-256 (hex) of the canonical change: what the cloud's mark keeps to recognise a site's change at that seq. */
export function changeDigest(change: Pick<Change, 'seq' | 'table' | 'key' | 'op' | 'row'>): string {
  return createHash('sha256')
    .update(JSON.stringify([change.seq, change.table, change.key, change.op, change.row]))
    .digest('hex')
}

/** The row's values in its primary-key order (after org_id). */
export function keyValues(target: LinkedShape, row: Row): unknown[] {
  return target.key.map((c) => row[c])
}

/**
 * Applies a site's own tables as they come (the site is authoritative): consecutive upserts of one table as one
 * multi-row statement (the last image of a key within a run wins, as it would one by one), a delete per tombstone.
 * Two limits keep a site to its own rows: a table whose key lacks the site column (historian batches, commands) never
 * replaces or deletes another site's row with that key; an organisation-wide table (the audit trail) is append-only:
 * a site adds its rows, never replaces or deletes one (the cloud's own audit rows live in the same table). A historian
 * batch's tombstone takes the batch's samples and the server's chunks of it along (dropDeletedBatch); a batch's row
 * ends the server's replacing upload of it (finishReplacedBatches).
 */
export async function applySiteRows(trx: Db, orgId: string, serverId: string, items: ReadonlyArray<{ change: Change; target: LinkedShape }>): Promise<void> {
  let i = 0
  while (i < items.length) {
    const { change, target } = items[i]!
    const site = target.spec.siteColumn
    const guarded = site !== null && !target.key.includes(site)
    if (change.op === 'delete') {
      if (target.spec.name === 'historian_batches') await dropDeletedBatch(trx, orgId, serverId, change.site, String(change.key[0]))
      if (site !== null) await deleteRow(trx, target.shape, orgId, target.key, change.key, guarded ? { column: site, value: change.site } : undefined)
      i += 1
      continue
    }
    const run = new Map<string, Row>()
    while (i < items.length && items[i]!.change.op === 'upsert' && items[i]!.target === target) {
      const c = items[i]!.change
      const k = JSON.stringify(c.key)
      run.delete(k) // keeps the run in order of each key's last image
      run.set(k, c.row)
      i += 1
    }
    const rows = [...run.values()]
    if (target.spec.name === 'historian_batches')
      await finishReplacedBatches(
        trx,
        orgId,
        serverId,
        rows.map((r) => String(r.id)),
      )
    // Under the parameter limit, in power-of-two statements (db/multi-row.ts: a few statement texts a table for SQLite's
    // cache whatever the run's length); a row's columns and the statement's one guard value.
    await inMultiRowStatements(rows, target.shape.columns.length + 1, (chunk) =>
      upsertRows(trx, target.shape, orgId, chunk, site === null ? { insertOnly: true } : guarded ? { sameColumn: site } : {}),
    )
  }
}

/** Whether two images of a row hold the same values (numbers compared as numbers: drivers differ on bigint). */
export function sameContent(columns: readonly string[], a: Row, b: Row): boolean {
  for (const c of columns) {
    const x = a[c] ?? null
    const y = b[c] ?? null
    if (x === y) continue
    if (x !== null && y !== null && (typeof x === 'number' || typeof y === 'number') && Number(x) === Number(y)) continue
    return false
  }
  return true
}
