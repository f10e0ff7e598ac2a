import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Migrator } from 'kysely'
import { testDialects } from '../../../test/harness.ts'
import { createTestDatabase } from '../../../test/postgres.ts'
import { CLI_ACTOR } from '../../identity.ts'
import { systemClock } from '../../clock.ts'
import { connectDatabase } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { migrations } from '../../db/migrations/index.ts'
import type { AlarmsTable } from '../../db/schema.ts'
import { withSystemScope } from '../../db/tenant-scope.ts'
import { createOrgsService } from '../orgs/service.ts'
import { createSitesService } from '../sites/service.ts'
import { activeKey } from './lifecycle.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: migration 1800 (alarm shelve windows)`, () => {
    it("backfills the window of each shelve in force from the alarm's latest shelved transition, and no other", async (t) => {
      let url: string
      if (dialect === 'postgres') url = await createTestDatabase(process.env.TEST_DATABASE_URL!)
      else {
        const dir = mkdtempSync(join(tmpdir(), 'sitegrid-migration-'))
        t.after(() => rmSync(dir, { recursive: true, force: true }))
        url = `sqlite:${join(dir, 'm.db')}`
      }
      const handle = await connectDatabase(url, { poolSize: 1 })
      t.after(() => handle.close())
      await withSystemScope(async () => {
        const migrated = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo('1500-platform-audit')
        assert.equal(migrated.error, undefined)
        const org = await createOrgsService({ handle, clock: systemClock }).provision('shelf-backfill')
        await createSitesService({ handle, clock: systemClock, dependents: [] }).create(org.id, CLI_ACTOR, { code: 'S1', name: 'S1' })
        const alarm = (id: string, shelvedUntil: number | null): AlarmsTable => ({
          org_id: org.id,
          site_code: 'S1',
          id,
          instance_id: 'P1',
          condition: id,
          priority: 'high',
          message: null,
          value: null,
          limit_value: null,
          state: shelvedUntil === null ? 'active_unacknowledged' : 'shelved',
          is_active: 1,
          is_acknowledged: 0,
          is_out_of_service: 0,
          shelved_until: shelvedUntil,
          active_key: activeKey('P1', id),
          activation_count: 1,
          raised_at: 100,
          last_event_at: 100,
          changed_at: 400,
          created_at: 100,
          version: 4,
        })
        await handle.db
          .insertInto('alarms')
          .values([alarm('alm_shelved', 5000), alarm('alm_unshelved', null)])
          .execute()
        const actions = ['activated', 'shelved', 'unshelved', 'shelved']
        await handle.db
          .insertInto('alarm_history')
          .values(
            ['alm_shelved', 'alm_unshelved'].flatMap((alarmId) =>
              actions.map((action, i) => ({
                org_id: org.id,
                site_code: 'S1',
                alarm_id: alarmId,
                seq: i + 1,
                at: 100 * (i + 1),
                action,
                from_state: 'x',
                to_state: 'y',
                actor_kind: 'apiKey',
                actor_id: 'k',
                comment: null,
                event_id: null,
              })),
            ),
          )
          .execute()
        await migrateToLatest(handle.db)
        const windows = await handle.db.selectFrom('alarm_shelves').selectAll().execute()
        assert.deepEqual(
          windows.map((w) => [w.alarm_id, Number(w.seq), w.tag_key, Number(w.starts_at), Number(w.ends_at)]),
          [['alm_shelved', 4, activeKey('P1', 'alm_shelved'), 400, 5000]],
        )
      })
    })
  })
}
