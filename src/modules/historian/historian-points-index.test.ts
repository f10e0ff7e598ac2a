import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Migrator, sql } from 'kysely'
import { databaseUrlFor, testDialects } from '../../../test/harness.ts'
import { connectDatabase } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { migrations } from '../../db/migrations/index.ts'
import type { Db } from '../../db/schema.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'
import type { OrgId } from '../../ids.ts'
import { RANGES_PER_STATEMENT, countStoredOfBatch, deleteSamplesOfBatch, ensureSeries, seriesKey } from './store/queries.ts'

const ORG = 'org_n' as OrgId
const WIDE = 'org_w' as OrgId
// Two batches interleaved in one series (bat_2 won the collisions at 2 000 and 4 000), one more series of bat_1, and
// a point of bat_1 in another site that its coverage does not name.
const POINTS = [
  { s: 'p', ts: 1_000, batch: 'bat_1' },
  { s: 'p', ts: 2_000, batch: 'bat_2' },
  { s: 'p', ts: 3_000, batch: 'bat_1' },
  { s: 'p', ts: 4_000, batch: 'bat_2' },
  { s: 'p', ts: 5_000, batch: 'bat_1' },
  { s: 'p', ts: 9_000, batch: 'bat_2' },
  { s: 'q', ts: 1_000, batch: 'bat_1' },
  { s: 'q', ts: 2_000, batch: 'bat_1' },
]

async function indexesOfPoints(db: Db, dialect: string): Promise<string[]> {
  const { rows } =
    dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'historian_points' and sql is not null`.execute(db)
      : await sql<{
          name: string
        }>`select indexname as name from pg_indexes where tablename = 'historian_points' and indexname <> 'historian_points_pk'`.execute(db)
  return rows.map((r) => r.name)
}

const left = async (db: Db) =>
  (
    await db
      .selectFrom('historian_points as p')
      .innerJoin('historian_series as s', 's.id', 'p.series_id')
      .select(['s.site_code', 's.tag_key', 'p.ts', 'p.batch_id'])
      .where('p.org_id', '=', ORG)
      .orderBy('s.site_code')
      .orderBy('s.tag_key')
      .orderBy('p.ts')
      .execute()
  ).map((r) => `${r.site_code}/${r.tag_key}@${Number(r.ts)}:${r.batch_id}`)

for (const dialect of testDialects()) {
  describe(`${dialect}: migration 1900 (historian_points without the batch index)`, () => {
    it('keeps every point, drops the (org_id, batch_id) index, and a batch is still counted and deleted alone through its recorded ranges', async (t) => {
      const handle = await connectDatabase(await databaseUrlFor(t, dialect), { poolSize: 1 })
      t.after(() => handle.close())
      const db = handle.db
      await withSystemScope(async () => {
        const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
        assert.equal((await migrator.migrateTo('1800-alarm-shelves')).error, undefined)
        assert.deepEqual(await indexesOfPoints(db, dialect), ['historian_points_batch_idx'])
        await db.insertInto('orgs').values({ id: ORG, slug: 'org-n', name: 'N', created_at: 0 }).execute()
        for (const code of ['S1', 'S2']) {
          await db
            .insertInto('sites')
            .values({ org_id: ORG, code, name: code, description: null, location: null, time_zone: 'UTC', status: 0, created_at: 0, updated_at: 0 })
            .execute()
        }
        const ids = new Map<string, number>()
        for (const site of ['S1', 'S2']) {
          const found = await ensureSeries(db, ORG, site, [
            { instanceId: 'ins_a', tagKey: 'p' },
            ...(site === 'S1' ? [{ instanceId: 'ins_a', tagKey: 'q' }] : []),
          ])
          for (const tag of ['p', 'q']) if (found.has(seriesKey('ins_a', tag))) ids.set(`${site}/${tag}`, found.get(seriesKey('ins_a', tag))!)
        }
        const rows = [...POINTS.map((p) => ({ ...p, site: 'S1' })), { s: 'p', ts: 3_000, batch: 'bat_1', site: 'S2' }]
        await db
          .insertInto('historian_points')
          .values(
            rows.map((p) => ({
              org_id: ORG,
              series_id: ids.get(`${p.site}/${p.s}`)!,
              ts: p.ts,
              value: p.ts / 1000,
              text: null,
              quality: 192,
              batch_id: p.batch,
            })),
          )
          .execute()
        const before = await left(db)

        assert.equal((await migrator.migrateToLatest()).error, undefined)
        await migrateToLatest(db)
        assert.deepEqual(await indexesOfPoints(db, dialect), [])
        assert.deepEqual(await left(db), before)

        const coverage = [
          { instanceId: 'ins_a', tagKey: 'p', firstTs: 1_000, lastTs: 5_000 },
          { instanceId: 'ins_a', tagKey: 'q', firstTs: 1_000, lastTs: 2_000 },
        ]
        assert.equal(await countStoredOfBatch(db, ORG, 'bat_1', { siteCode: 'S1', coverage }), 5)
        assert.equal(await deleteSamplesOfBatch(db, ORG, 'bat_1', { siteCode: 'S1', coverage }), 5)
        assert.deepEqual(await left(db), ['S1/p@2000:bat_2', 'S1/p@4000:bat_2', 'S1/p@9000:bat_2', 'S2/p@3000:bat_1'])
        // Nothing recorded (a batch that died before its first write): the site's series are scanned instead.
        assert.equal(await countStoredOfBatch(db, ORG, 'bat_2', { siteCode: 'S1', coverage: [] }), 3)
        assert.equal(await deleteSamplesOfBatch(db, ORG, 'bat_2', { siteCode: 'S1', coverage: [] }), 3)
        assert.deepEqual(await left(db), ['S2/p@3000:bat_1'])
      })
    })

    it("a batch over more series than one statement takes is counted and deleted whole, and no other batch's sample goes with it", async (t) => {
      const handle = await connectDatabase(await databaseUrlFor(t, dialect), { poolSize: 1 })
      t.after(() => handle.close())
      const db = handle.db
      await withSystemScope(async () => {
        await migrateToLatest(db)
        await db.insertInto('orgs').values({ id: WIDE, slug: 'org-w', name: 'W', created_at: 0 }).execute()
        await db
          .insertInto('sites')
          .values({ org_id: WIDE, code: 'S1', name: 'S1', description: null, location: null, time_zone: 'UTC', status: 0, created_at: 0, updated_at: 0 })
          .execute()
        const tags = Array.from({ length: RANGES_PER_STATEMENT + 100 }, (_, i) => `t${i}`)
        const ids = await ensureSeries(
          db,
          WIDE,
          'S1',
          tags.map((tagKey) => ({ instanceId: 'ins_a', tagKey })),
        )
        // Each series: two points of bat_1 and, between them, one of bat_2; the first series also has a point of bat_2
        // after bat_1's range there, inside the last series' longer range (a statement's series share one time range).
        const point = (tag: string, ts: number, batch: string) => ({
          org_id: WIDE,
          series_id: ids.get(seriesKey('ins_a', tag))!,
          ts,
          value: 1,
          text: null,
          quality: 192,
          batch_id: batch,
        })
        const points = tags.flatMap((tag) => [point(tag, 1_000, 'bat_1'), point(tag, 2_000, 'bat_2'), point(tag, 3_000, 'bat_1')])
        points.push(point('t0', 5_000, 'bat_2'), point(tags.at(-1)!, 6_000, 'bat_1'))
        for (let i = 0; i < points.length; i += 500)
          await db
            .insertInto('historian_points')
            .values(points.slice(i, i + 500))
            .execute()
        const coverage = tags.map((tagKey, i) => ({ instanceId: 'ins_a', tagKey, firstTs: 1_000, lastTs: i === tags.length - 1 ? 6_000 : 3_000 }))
        const bat1 = 2 * tags.length + 1
        const bat2 = tags.length + 1
        assert.equal(await countStoredOfBatch(db, WIDE, 'bat_1', { siteCode: 'S1', coverage }), bat1)
        assert.equal(
          await countStoredOfBatch(db, WIDE, 'bat_2', { siteCode: 'S1', coverage }),
          tags.length,
          "the point after bat_1's range in t0 is outside this coverage",
        )
        assert.equal(await deleteSamplesOfBatch(db, WIDE, 'bat_1', { siteCode: 'S1', coverage }), bat1)
        assert.equal(await countStoredOfBatch(db, WIDE, 'bat_1', { siteCode: 'S1', coverage }), 0)
        const left = await db
          .selectFrom('historian_points')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', WIDE)
          .where('batch_id', '=', 'bat_2')
          .executeTakeFirstOrThrow()
        assert.equal(Number(left.n), bat2)
        const total = await db
          .selectFrom('historian_points')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', WIDE)
          .executeTakeFirstOrThrow()
        assert.equal(Number(total.n), bat2)
      })
    })
  })
}
