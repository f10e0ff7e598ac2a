import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { testDialects } from '../../../../test/harness.ts'
import { LINKED_TABLES } from '../../../db/link-triggers.ts'
import type { Db } from '../../../db/schema.ts'
import { createController, equipmentSetup } from '../../controllers/test-support.ts'
import { describeTable } from '../../tenant-transfer/introspect.ts'
import { backlog, currentCursor, latestChange, readChanges, rowKey, START, withApplyOrigin, type Change } from './store.ts'
import { outboxSettled } from '../../../../test/support/fleet-link.ts'

const ALL = { tables: LINKED_TABLES.map((t) => t.name), limit: 10_000 }

async function insertSite(db: Db, orgId: string, code: string): Promise<void> {
  await sql`insert into sites (org_id, code, name, time_zone, status, created_at, updated_at)
    values (${orgId}, ${code}, ${`Site ${code}`}, 'UTC', 1, 1, 1)`.execute(db)
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the fleet link's outbox (issue 26)`, () => {
    it("each linked table's key is its primary key after org_id", async (t) => {
      const { h } = await equipmentSetup(t, dialect)
      for (const table of LINKED_TABLES) {
        const shape = await describeTable(h.handle.db, dialect, table.name)
        assert.ok(shape, table.name)
        assert.deepEqual(
          shape.primaryKey.filter((c) => c !== 'org_id'),
          [...table.key],
          table.name,
        )
        if (table.siteColumn !== null) assert.ok(shape.columns.includes(table.siteColumn), table.name)
      }
    })

    it('records every write through the API in its transaction: images, keys, ops, site, origin', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const created = await createController(as, 'S1', { name: 'Crusher "A" \\ ü' })
      assert.equal((await as('PUT', `/api/sites/S1/controllers/${created.id}`, { name: 'Crusher B' })).statusCode, 200)
      assert.equal((await as('DELETE', `/api/sites/S1/controllers/${created.id}`)).statusCode, 204)
      await outboxSettled(h.handle.db, dialect, org.id)
      const changes = await readChanges(h.handle.db, dialect, org.id, START, ALL)
      const summary = changes.filter((c) => c.table !== 'audit_events').map((c) => [c.table, c.op, c.key, c.site, c.origin])
      assert.deepEqual(summary, [
        ['sites', 'upsert', ['S1'], 'S1', ''],
        ['controllers', 'upsert', ['S1', created.id], 'S1', ''],
        ['controllers', 'upsert', ['S1', created.id], 'S1', ''],
        ['controllers', 'delete', ['S1', created.id], 'S1', ''],
      ])
      const [, made, renamed, deleted] = changes.filter((c) => c.table !== 'audit_events') as [Change, Change, Change, Change]
      assert.equal(made.row.name, 'Crusher "A" \\ ü')
      assert.equal(renamed.row.name, 'Crusher B')
      assert.equal(deleted.row.name, 'Crusher B', 'a delete carries the row as it was')
      assert.equal(made.row.org_id, org.id)
      const stored = await h.handle.db
        .selectFrom('link_outbox')
        .select('row_key')
        .where('org_id', '=', org.id)
        .where('table_name', '=', 'controllers')
        .execute()
      for (const r of stored) assert.equal(r.row_key, rowKey(['S1', created.id]), 'the triggers write the key as JSON.stringify does')
      // The audit trail of the same writes goes up too (organisation-wide rows: site '').
      assert.ok(changes.some((c) => c.table === 'audit_events' && c.site === ''))
      // Ordered, and a cursor reads only what follows it.
      const after = await readChanges(h.handle.db, dialect, org.id, { tx: made.tx, seq: made.seq }, ALL)
      assert.deepEqual(
        after.map((c) => c.seq),
        changes.filter((c) => c.tx > made.tx || (c.tx === made.tx && c.seq > made.seq)).map((c) => c.seq),
      )
    })

    it('a rolled-back change leaves nothing; a change applied for a peer carries its origin; bases are recorded', async (t) => {
      const { h, org } = await equipmentSetup(t, dialect)
      const db = h.handle.db
      await outboxSettled(db, dialect, org.id)
      const before = (await readChanges(db, dialect, org.id, START, ALL)).length
      await assert.rejects(
        db.transaction().execute(async (trx) => {
          await insertSite(trx, org.id, 'GONE')
          throw new Error('rolled back')
        }),
      )
      assert.equal((await readChanges(db, dialect, org.id, START, ALL)).length, before)

      await sql`insert into link_base (org_id, table_name, row_key, version) values (${org.id}, 'sites', ${rowKey(['P'])}, 41)`.execute(db)
      await db.transaction().execute((trx) => withApplyOrigin(trx, dialect, 'cloud', () => insertSite(trx, org.id, 'P')))
      await sql`update sites set name = 'edited here' where org_id = ${org.id} and code = 'P'`.execute(db)
      await outboxSettled(db, dialect, org.id)
      const p = (await readChanges(db, dialect, org.id, START, ALL)).filter((c) => c.table === 'sites' && c.site === 'P')
      assert.deepEqual(
        p.map((c) => [c.origin, c.base, c.row.name]),
        [
          ['cloud', 41, 'Site P'],
          ['', 41, 'edited here'],
        ],
      )
      assert.equal((await readChanges(db, dialect, org.id, START, { ...ALL, origin: { not: 'cloud' } })).filter((c) => c.site === 'P').length, 1)
      const latest = await latestChange(db, org.id, 'sites', ['P'], { afterSeq: 0, notOrigin: '' })
      assert.equal(latest?.origin, 'cloud')
      const waiting = await backlog(db, dialect, org.id, START, { tables: ['sites'], sites: ['P'] })
      assert.equal(waiting.items, 2)
      assert.ok(waiting.bytes > 0 && waiting.oldestAt !== null)
    })

    it('a historian batch is recorded once it is no longer running', async (t) => {
      const { h, org } = await equipmentSetup(t, dialect)
      const db = h.handle.db
      await sql`insert into historian_batches (org_id, site_code, id, format, status, rows_read, samples_stored, rejected_count, collision_count,
        replaced_count, bytes_read, tags, report, options, trend_sha256, mapping_sha256, is_forced, created_by, created_at, updated_at)
        values (${org.id}, 'S1', 'b1', 'csv', 'running', 0, 0, 0, 0, 0, 0, '[]', '{}', '{}', 'x', 'y', 0, 'test', 1, 1)`.execute(db)
      await sql`update historian_batches set rows_read = 10 where org_id = ${org.id} and id = 'b1'`.execute(db)
      const batches = async () => {
        await outboxSettled(db, dialect, org.id)
        return (await readChanges(db, dialect, org.id, START, { tables: ['historian_batches'], limit: 100 })).map((c) => c.row.status)
      }
      assert.deepEqual(await batches(), [])
      await sql`update historian_batches set status = 'complete' where org_id = ${org.id} and id = 'b1'`.execute(db)
      assert.deepEqual(await batches(), ['complete'])
    })

    it('a statement writing many rows records each of them as a row-level trigger would (issue 29: statement-level on PostgreSQL)', async (t) => {
      const { h, org } = await equipmentSetup(t, dialect)
      const db = h.handle.db
      await outboxSettled(db, dialect, org.id)
      const from = (await currentCursor(db, dialect, org.id)).seq
      const recorded = async () => {
        await outboxSettled(db, dialect, org.id)
        const { rows } = await sql<{ table_name: string; site_code: string; row_key: string; op: string; row: string; base: number | null; origin: string }>`
          select table_name, site_code, row_key, op, "row", base, origin from link_outbox where org_id = ${org.id} and seq > ${from} order by seq`.execute(db)
        await sql`delete from link_outbox where org_id = ${org.id}`.execute(db)
        // A statement's rows have distinct keys, so their order within it means nothing to the link (the heap's order).
        rows.sort((a, b) => a.row_key.localeCompare(b.row_key))
        return rows.map((r) => {
          const row = JSON.parse(r.row) as Record<string, unknown>
          return [
            r.table_name,
            r.site_code,
            r.row_key,
            r.op,
            r.table_name === 'sites' ? row.name : row.status,
            Number(row.org_id === org.id),
            r.base === null ? null : Number(r.base),
            r.origin,
          ]
        })
      }
      await sql`insert into link_base (org_id, table_name, row_key, version) values (${org.id}, 'sites', '["B"]', 7)`.execute(db)
      await sql`insert into sites (org_id, code, name, time_zone, status, created_at, updated_at)
        values (${org.id}, 'A', 'a', 'UTC', 1, 1, 1), (${org.id}, 'B', 'b', 'UTC', 1, 1, 1), (${org.id}, 'C', 'c', 'UTC', 1, 1, 1)`.execute(db)
      assert.deepEqual(await recorded(), [
        ['sites', 'A', '["A"]', 'upsert', 'a', 1, null, ''],
        ['sites', 'B', '["B"]', 'upsert', 'b', 1, 7, ''],
        ['sites', 'C', '["C"]', 'upsert', 'c', 1, null, ''],
      ])
      await db
        .transaction()
        .execute((trx) =>
          withApplyOrigin(trx, dialect, 'cloud', () =>
            sql`update sites set name = name || '2' where org_id = ${org.id} and code in ('A', 'B', 'C')`.execute(trx),
          ),
        )
      assert.deepEqual(await recorded(), [
        ['sites', 'A', '["A"]', 'upsert', 'a2', 1, null, 'cloud'],
        ['sites', 'B', '["B"]', 'upsert', 'b2', 1, 7, 'cloud'],
        ['sites', 'C', '["C"]', 'upsert', 'c2', 1, null, 'cloud'],
      ])
      await sql`delete from sites where org_id = ${org.id} and code in ('A', 'C')`.execute(db)
      assert.deepEqual(await recorded(), [
        ['sites', 'A', '["A"]', 'delete', 'a2', 1, null, ''],
        ['sites', 'C', '["C"]', 'delete', 'c2', 1, null, ''],
      ])

      // The only-filter, row by row within one statement: a running batch is recorded neither written nor deleted.
      const batch = (id: string, status: string) =>
        sql`(${org.id}, 'S1', ${id}, 'csv', ${status}, 0, 0, 0, 0, 0, 0, '[]', '{}', '{}', 'x', 'y', 0, 'test', 1, 1)`
      await sql`insert into historian_batches (org_id, site_code, id, format, status, rows_read, samples_stored, rejected_count, collision_count,
        replaced_count, bytes_read, tags, report, options, trend_sha256, mapping_sha256, is_forced, created_by, created_at, updated_at)
        values ${batch('b1', 'running')}, ${batch('b2', 'complete')}, ${batch('b3', 'running')}`.execute(db)
      assert.deepEqual(await recorded(), [['historian_batches', 'S1', '["b2"]', 'upsert', 'complete', 1, null, '']])
      await sql`update historian_batches set status = case id when 'b1' then 'failed' else status end, rows_read = 5 where org_id = ${org.id}`.execute(db)
      assert.deepEqual(await recorded(), [
        ['historian_batches', 'S1', '["b1"]', 'upsert', 'failed', 1, null, ''],
        ['historian_batches', 'S1', '["b2"]', 'upsert', 'complete', 1, null, ''],
      ])
      await sql`delete from historian_batches where org_id = ${org.id}`.execute(db)
      assert.deepEqual(await recorded(), [
        ['historian_batches', 'S1', '["b1"]', 'delete', 'failed', 1, null, ''],
        ['historian_batches', 'S1', '["b2"]', 'delete', 'complete', 1, null, ''],
      ])
    })

    if (dialect === 'postgres') {
      it('a reader never passes a change whose transaction has not committed yet (commit out of seq order)', async (t) => {
        const { h, org } = await equipmentSetup(t, dialect)
        const db = h.handle.db
        const seen: Change[] = []
        // The set-up's own changes (site S1) first readable, so the cursor starts past them.
        await outboxSettled(db, dialect, org.id)
        let cursor = await currentCursor(db, dialect, org.id)
        const read = async () => {
          const page = await readChanges(db, dialect, org.id, cursor, { tables: ['sites'], limit: 100 })
          seen.push(...page)
          const last = page.at(-1)
          if (last) cursor = { tx: last.tx, seq: last.seq }
        }
        let release!: () => void
        const gate = new Promise<void>((resolve) => {
          release = resolve
        })
        let written!: () => void
        const started = new Promise<void>((resolve) => {
          written = resolve
        })
        // Transaction A takes the lower seq and stays open; B takes the next seq and commits first.
        const slow = db.transaction().execute(async (trx) => {
          await insertSite(trx, org.id, 'A')
          written()
          await gate
        })
        await started
        await insertSite(db, org.id, 'B')
        await read()
        assert.deepEqual(
          seen.map((c) => c.site),
          [],
          'B committed, but A (earlier in seq) is still open: nothing is read past it',
        )
        release()
        await slow
        await outboxSettled(db, dialect, org.id)
        await read()
        assert.deepEqual(seen.map((c) => c.site).sort(), ['A', 'B'])
      })
    }
  })
}
