import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery, sql, type RawBuilder } from 'kysely'
import { databaseUrlFor, harness, testDialects, type TestDialect } from '../../../test/harness.ts'
import { connectDatabase } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { rawSamplesQuery, signalAtQuery, timeWeightedAveragesQuery } from './store/series-reads.ts'

// Issue 30: the interpolated, value-at-time and time-weighted reads must stay cheap on a long series (the bench reads
// 10 M samples of one tag). These tests read the query plans, not the clock: every read of the samples is a
// primary-key search bounded by time (a lookup, a search that stops at the first visible sample, or the page's one
// range), never a read of the whole series; on SQLite the lookups a time run once (materialized), not once per use.

const KEY = { orgId: 'org_plan' as OrgId, seriesId: 1, includeBad: false, isStep: false }
const STATEMENTS: Record<string, RawBuilder<unknown>> = {
  'values at times': signalAtQuery(KEY, [0, 60_000, 120_000]),
  'time-weighted averages': timeWeightedAveragesQuery(KEY, 60_000, 0, [
    { start: 0, a: 0, z: 60_000 },
    { start: 60_000, a: 60_000, z: 120_000 },
  ]),
}

async function planOf(db: Db, dialect: TestDialect, query: RawBuilder<unknown>, edit: (text: string) => string = (s) => s): Promise<string[]> {
  const compiled = query.compile(db)
  const text = `explain ${dialect === 'sqlite' ? 'query plan ' : ''}${edit(compiled.sql)}`
  const { rows } = await db.executeQuery(CompiledQuery.raw(text, [...compiled.parameters]))
  return (rows as Array<Record<string, unknown>>).map((r) => String(r.detail ?? r['QUERY PLAN']))
}

/** The plan's reads of historian_points, each with the condition it searches by. */
function samplesReads(plan: string[], dialect: TestDialect): string[] {
  if (dialect === 'sqlite') return plan.filter((line) => /^(SEARCH|SCAN) [pqaz]\b/.test(line))
  const reads: string[] = []
  plan.forEach((line, i) => {
    if (!/ on historian_points /.test(line)) return
    const condition = plan.slice(i + 1).find((l) => /Index Cond|->/.test(l)) ?? ''
    reads.push(`${line.trim()} ${/Index Cond/.test(condition) ? condition.trim() : ''}`)
  })
  return reads
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the retrieval modes read the samples by time-bounded primary-key searches`, () => {
    it('every read of the samples is a primary-key search bounded by time, never a scan', async (t) => {
      const h = await harness(t, dialect)
      for (const [name, query] of Object.entries(STATEMENTS)) {
        const plan = await planOf(h.handle.db, dialect, query)
        const reads = samplesReads(plan, dialect)
        assert.ok(reads.length > 0, `${name}: ${plan.join('\n')}`)
        for (const read of reads) {
          if (dialect === 'sqlite') assert.match(read, /^SEARCH \w USING PRIMARY KEY \(org_id=\? AND series_id=\? AND ts[<>=]/, `${name}: ${plan.join('\n')}`)
          else assert.match(read, /Index Scan.*Index Cond: .*\bts [<>=]/, `${name}: ${plan.join('\n')}`)
        }
      }
    })

    it('a raw page is one primary-key range bounded by time, read in key order (no sort), over 200 000 samples with statistics', async (t) => {
      // The planner's choice depends on the table's size: over an empty table a join to historian_batches was planned
      // well too, over a large one PostgreSQL scanned the whole table and sorted it (see rawSamplesQuery).
      const handle = await connectDatabase(await databaseUrlFor(t, dialect), { poolSize: 1 })
      t.after(() => handle.close())
      await withSystemScope(async () => {
        await migrateToLatest(handle.db)
        const rows = sql`select ${KEY.orgId}, ${KEY.seriesId}, g * 1000, g / 10.0, null, 192, 'bat_1' from n`
        await sql`with recursive n(g) as (select 0 union all select g + 1 from n where g < 199999)
          insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id) ${rows}`.execute(handle.db)
        if (dialect === 'postgres') await sql`analyze historian_points`.execute(handle.db)
        for (const page of [{ limit: 10_000 }, { limit: 100, after: 60_000 }]) {
          const plan = await planOf(handle.db, dialect, rawSamplesQuery(KEY.orgId, KEY.seriesId, 100_000_000, 200_000_000, page))
          const reads = samplesReads(plan, dialect)
          assert.equal(reads.length, 1, plan.join('\n'))
          if (dialect === 'sqlite') assert.match(reads[0]!, /^SEARCH p USING PRIMARY KEY \(org_id=\? AND series_id=\? AND ts>\? AND ts<\?\)/, plan.join('\n'))
          else assert.match(reads[0]!, /Index Scan.*Index Cond: .*\bts >= /, plan.join('\n'))
          assert.ok(!plan.some((line) => /TEMP B-TREE FOR ORDER BY|Sort\b|Seq Scan/.test(line)), plan.join('\n'))
        }
      })
    })

    if (dialect === 'sqlite') {
      it('the searches a time run once: materialized, and without it (the control) they run again for each use', async (t) => {
        const h = await harness(t, dialect)
        const query = STATEMENTS['values at times']!
        const lookups = (plan: string[]) => plan.filter((line) => line.startsWith('CORRELATED SCALAR SUBQUERY')).length
        // Before, at or after each time, and the values of those two samples.
        assert.equal(lookups(await planOf(h.handle.db, dialect, query)), 4)
        assert.ok(lookups(await planOf(h.handle.db, dialect, query, (text) => text.replaceAll('as materialized', 'as'))) > 4)
      })
    }
  })
}
