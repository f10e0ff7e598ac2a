import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Migrator, sql } from 'kysely'
import { databaseUrlFor, testDialects } from '../../../test/harness.ts'
import { connectDatabase } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { migrations } from '../../db/migrations/index.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'

const OLD = [
  { instance_id: 'ins_a', tag_key: 'p', ts: 1_000, value: 1.5, text: null, quality: 192, batch_id: 'bat_1' },
  { instance_id: 'ins_a', tag_key: 'p', ts: 2_000, value: null, text: 'Running', quality: 64, batch_id: 'bat_2' },
  { instance_id: 'ins_b', tag_key: 'q', ts: 1_000, value: -3, text: null, quality: 0, batch_id: 'bat_1' },
]

for (const dialect of testDialects()) {
  describe(`${dialect}: migration 1600 (historian series)`, () => {
    it('carries every stored sample over into series + points, value for value, and drops historian_samples', async (t) => {
      const handle = await connectDatabase(await databaseUrlFor(t, dialect), { poolSize: 1 })
      t.after(() => handle.close())
      const db = handle.db
      await withSystemScope(async () => {
        const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
        const before = await migrator.migrateTo('1500-platform-audit')
        assert.equal(before.error, undefined)
        await db.insertInto('orgs').values({ id: 'org_m', slug: 'org-m', name: 'M', created_at: 0 }).execute()
        await db
          .insertInto('sites')
          .values({ org_id: 'org_m', code: 'S1', name: 'S', description: null, location: null, time_zone: 'UTC', status: 0, created_at: 0, updated_at: 0 })
          .execute()
        for (const r of OLD) {
          await sql`insert into historian_samples (org_id, site_code, instance_id, tag_key, ts, value, text, quality, batch_id)
            values ('org_m', 'S1', ${r.instance_id}, ${r.tag_key}, ${r.ts}, ${r.value}, ${r.text}, ${r.quality}, ${r.batch_id})`.execute(db)
        }
        await migrateToLatest(db)
        const rows = await db
          .selectFrom('historian_points as p')
          .innerJoin('historian_series as s', (j) => j.onRef('s.org_id', '=', 'p.org_id').onRef('s.id', '=', 'p.series_id'))
          .select(['s.site_code', 's.instance_id', 's.tag_key', 'p.ts', 'p.value', 'p.text', 'p.quality', 'p.batch_id'])
          .where('p.org_id', '=', 'org_m')
          .orderBy('s.instance_id')
          .orderBy('p.ts')
          .execute()
        assert.deepEqual(
          rows.map((r) => ({ ...r, ts: Number(r.ts), value: r.value === null ? null : Number(r.value), quality: Number(r.quality) })),
          OLD.map((r) => ({ site_code: 'S1', ...r })),
        )
        assert.equal((await db.selectFrom('historian_series').select('id').where('org_id', '=', 'org_m').execute()).length, 2)
        await assert.rejects(sql`select 1 from historian_samples`.execute(db))
        // Deleting the site removes its series and, by trigger, their points.
        await db.deleteFrom('sites').where('org_id', '=', 'org_m').execute()
        const left = await db
          .selectFrom('historian_points')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', 'org_m')
          .executeTakeFirstOrThrow()
        assert.equal(Number(left.n), 0)
      })
    })
  })
}
