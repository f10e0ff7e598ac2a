// A forced import meets its staged samples with the stored ones (count, replaced batches, the first collisions). As
// joins, the order and method were PostgreSQL's choice from the tables' statistics, which never know a new batch: in
// CI and here a forced import of 50 000 samples ran one such join for over 15 minutes (pg_stat_activity showed it;
// the plan could not be reproduced on demand afterwards). Each staged sample now looks its stored twin up by primary
// key in a scalar subquery, which the planner runs once per staged sample and never turns into a join. This test
// reads the executed plan (nodes and loops), not the clock, with statistics made stale as autovacuum leaves them.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery, sql, type RawBuilder } from 'kysely'
import { harness, testDialects } from '../../../test/harness.ts'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { stagedCollisionQueries } from './store/queries.ts'

const N = 5_000

async function explain(db: Db, query: RawBuilder<unknown>, analyze: boolean): Promise<string[]> {
  const compiled = query.compile(db)
  const prefix = analyze ? 'explain (analyze, costs off, timing off, summary off)' : 'explain (costs off)'
  const { rows } = await db.executeQuery(CompiledQuery.raw(`${prefix} ${compiled.sql}`, [...compiled.parameters]))
  return (rows as Array<Record<string, unknown>>).map((r) => String(r['QUERY PLAN']))
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: a forced import's collision queries stay linear whatever the staging table's statistics`, () => {
    it('the staged samples are read once and each stored twin is one primary-key lookup, with statistics that never saw the batch', async (t) => {
      const h = await harness(t, dialect)
      const db = h.handle.db
      const { org, key } = await h.orgWithKey('owner')
      const orgId = org.id as OrgId
      const site = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: { code: 'S1', name: 'Plant 1' } })
      assert.equal(site.statusCode, 201, site.body)
      const { rows } = await sql<{ id: number }>`insert into historian_series (org_id, site_code, instance_id, tag_key)
        values (${orgId}, 'S1', 'ins_a', 'a') returning id`.execute(db)
      const series = rows[0]!.id
      const stage = (batch: string) =>
        sql`insert into historian_staging (org_id, batch_id, series_id, ts, value, text, quality)
        select ${orgId}, ${batch}, ${series}, g, g, null, 192 from generate_series(1, ${N}) g`.execute(db)
      // Stale statistics, as autovacuum leaves them between two imports: analysed after a batch's staged samples were
      // deleted (pages kept, no rows: any batch is then estimated at 1 row).
      await stage('bat_old')
      await sql`delete from historian_staging where org_id = ${orgId}`.execute(db)
      await sql`analyze historian_staging`.execute(db)
      await stage('bat_new')
      await sql`insert into historian_points (org_id, series_id, ts, value, text, quality, batch_id)
        select ${orgId}, ${series}, g, -g, null, 192, 'bat_stored' from generate_series(1, ${N}) g`.execute(db)

      for (const [name, query] of [
        ['count', stagedCollisionQueries.count(orgId, 'bat_new')],
        ['replaced batches', stagedCollisionQueries.replacedBatches(orgId, 'bat_new')],
        ['first collisions', stagedCollisionQueries.first(orgId, 'bat_new', 100)],
      ] as const) {
        const plan = await explain(db, query, true)
        const text = `${name}:\n${plan.join('\n')}`
        const staging = plan.filter((l) => /on historian_staging s\b/.test(l))
        assert.equal(staging.length, 1, text)
        assert.match(staging[0]!, /loops=1\)/, text)
        assert.ok(!plan.some((l) => /Seq Scan on historian_points/.test(l)), text)
        assert.ok(
          plan.some((l) => /Index (Only )?Scan using historian_points_pk on historian_points h/.test(l)),
          text,
        )
      }
      assert.equal(Number((await stagedCollisionQueries.count(orgId, 'bat_new').execute(db)).rows[0]!.n), N)
      assert.deepEqual(
        (await stagedCollisionQueries.replacedBatches(orgId, 'bat_new').execute(db)).rows.map((r) => r.batch_id),
        ['bat_stored'],
      )
      const first = (await stagedCollisionQueries.first(orgId, 'bat_new', 3).execute(db)).rows
      assert.deepEqual(
        first.map((r) => [Number(r.ts), Number(r.value), Number(r.old_value), r.old_batch]),
        [
          [1, 1, -1, 'bat_stored'],
          [2, 2, -2, 'bat_stored'],
          [3, 3, -3, 'bat_stored'],
        ],
      )
    })
  })
}
