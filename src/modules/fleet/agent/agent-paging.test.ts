import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { testDialects } from '../../../../test/harness.ts'
import { gate, linkedAlarmEvent } from '../../../../test/support/fleet-link.ts'
import { startTcpProxy } from '../../../../test/support/tcp-proxy.ts'
import { connectDatabase } from '../../../db/connect.ts'
import { CLI_ACTOR } from '../../../identity.ts'
import { alarmEvent, cloudCell, FAST_LINK, register, siteServer, until } from '../enrolment/test-link.ts'
import { LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from '../site-servers/protocol.ts'
import { createLinkHttp } from './http.ts'

// The push pages the site server's outbox by (tx, seq) after the cloud's acknowledged mark (ARCHITECTURE.md § Fleet
// link): a site server on PostgreSQL, whose transactions commit out of seq order, links like one on SQLite. The site
// server runs on the same database kind as the cloud cell (on PostgreSQL, a database of its own).

for (const dialect of testDialects()) {
  describe(`${dialect} cloud and site server: the push pages the outbox by (tx, seq) (issue 26)`, () => {
    it('1 200 alarm events made offline go up exactly once; on PostgreSQL a change committed after a later-seq one was pushed is not lost, and crossing writes of one row leave the newest', async (t) => {
      const cell = await cloudCell(t, dialect, { SITEGRID_LINK_PULL_POLL_MS: '20' })
      const proxy = await startTcpProxy(cell.port)
      t.after(() => proxy.close())
      const cloudUrl = `http://${cell.host}:${proxy.port}`
      const { site, orgs, enrolment } = await siteServer(t, FAST_LINK, dialect)
      const server = await register(cell.cloud, cell.owner, ['S1'])
      const http = createLinkHttp({ cloudUrl, env: {}, timeoutMs: 30_000 })
      t.after(() => http.close())
      await enrolment.enrol({ cloudUrl, code: server.code, http, actor: CLI_ACTOR })
      const local = (await orgs.findBySlug(cell.org.slug))!
      const siteKey = (await site.mintKey(local, 'owner')).plaintext
      const status = async () => (await site.inject({ org: local, apiKey: siteKey }, { method: 'GET', url: '/api/link' })).json()
      await until('online', status, (s) => s.state === 'online')

      /** The cloud's alarm events of the organisation, and how many times the link applied one (its outbox rows). */
      const cloudEvents = async () => {
        const rows = await cell.cloud.handle.db.selectFrom('alarm_events').select('event_id').where('org_id', '=', cell.org.id).execute()
        const applied = await cell.cloud.handle.db
          .selectFrom('link_outbox')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('org_id', '=', cell.org.id)
          .where('table_name', '=', 'alarm_events')
          .where('origin', '=', server.id)
          .executeTakeFirstOrThrow()
        return { events: rows.map((r) => r.event_id), applied: Number(applied.n) }
      }

      // Offline: 1 200 events, each an event, its alarm's change and a history row in the outbox: several push pages.
      proxy.cut()
      const t0 = Date.UTC(2026, 0, 1)
      for (const from of [0, 600]) {
        const events = Array.from({ length: 600 }, (_, i) => alarmEvent(`off-${from + i}`, 'CV-1', t0 + (from + i) * 1000))
        const res = await site.inject({ org: local, apiKey: siteKey }, { method: 'POST', url: '/api/sites/S1/alarms/events', payload: { events } })
        assert.equal(res.statusCode, 200, res.body)
      }
      await until('the backlog seen offline', status, (s) => s.state === 'offline' && s.up.items > 2 * 500)
      proxy.heal()
      await until('every event in the cloud', cloudEvents, (c) => c.events.length === 1200)
      await until('the backlog gone', status, (s) => s.up.items === 0)
      assert.equal((await cloudEvents()).applied, 1200, 'each event applied once')

      // An agent of protocol 1 (`after` a seq alone) is refused with the version status, whatever its body holds.
      const mark = () => cell.cloud.handle.db.selectFrom('link_marks').select(['tx', 'seq']).where('org_id', '=', cell.org.id).executeTakeFirstOrThrow()
      const markBefore = await mark()
      const old = await cell.cloud.inject(
        { org: cell.org, bearer: (await enrolment.credential(local.id))! },
        {
          method: 'POST',
          url: '/api/link/push',
          headers: { [PROTOCOL_HEADER]: '1', [SCHEMA_HEADER]: SCHEMA_VERSION },
          payload: { epoch: 'e', after: 0, changes: [] },
        },
      )
      assert.deepEqual([old.statusCode, old.json().code, old.headers[PROTOCOL_HEADER]], [409, 'LinkVersionMismatch', String(LINK_PROTOCOL)])
      assert.deepEqual(await mark(), markBefore)
      if (dialect !== 'postgres') return

      // Two transactions commit out of seq order: `early` takes its transaction id first, `late` its change's seq
      // first; `early` commits and is pushed while `late` is still open, so the cloud's mark then lies at a higher seq
      // than `late`'s change. A push that skipped by seq alone would lose it.
      const raw = await connectDatabase(site.config.databaseUrl, { poolSize: 2 })
      t.after(() => raw.close())
      const xid = async (trx: typeof raw.db) => (await sql<{ x: string }>`select pg_current_xact_id()::text as x`.execute(trx)).rows[0]!.x
      const insert = (trx: typeof raw.db, id: string) =>
        trx
          .insertInto('alarm_events')
          .values(linkedAlarmEvent(local.id, 'S1', 'CV-1', id, t0) as never)
          .execute()
      const earlyHasXid = gate()
      const lateInserted = gate()
      const lateCommits = gate()
      const early = raw.db.transaction().execute(async (trx) => {
        await xid(trx)
        earlyHasXid.open()
        await lateInserted.opened
        await insert(trx, 'early')
      })
      const late = raw.db.transaction().execute(async (trx) => {
        await earlyHasXid.opened
        await xid(trx)
        await insert(trx, 'late')
        lateInserted.open()
        await lateCommits.opened
      })
      await early
      await until('the early change pushed while the late one is open', cloudEvents, (c) => c.events.includes('early'))
      const seqOf = async (id: string) =>
        Number(
          (
            await raw.db
              .selectFrom('link_outbox')
              .select('seq')
              .where('table_name', '=', 'alarm_events')
              .where('row_key', '=', JSON.stringify(['S1', id]))
              .executeTakeFirstOrThrow()
          ).seq,
        )
      const acked = await raw.db.selectFrom('link_peer').select(['acked_tx', 'acked_seq']).executeTakeFirstOrThrow()
      lateCommits.open()
      await late
      assert.ok((await seqOf('late')) < Number(acked.acked_seq), "the late change's seq lies below the mark the cloud answered")
      await until('the late change in the cloud', cloudEvents, (c) => c.events.includes('late'))
      await until('the backlog gone again', status, (s) => s.up.items === 0)
      assert.equal((await cloudEvents()).applied, 1202, 'each event applied once')

      // Two transactions crossing on one row: `first` takes its transaction id, `second` renames the site and commits,
      // then `first` renames it again. The newest name is first's, which (tx, seq) order reads first: the cloud must
      // not end with second's older one.
      const xidTaken = gate()
      const secondCommitted = gate()
      const rename = (trx: typeof raw.db, name: string) => trx.updateTable('sites').set({ name }).where('code', '=', 'S1').execute()
      const first = raw.db.transaction().execute(async (trx) => {
        await xid(trx)
        xidTaken.open()
        await secondCommitted.opened
        await rename(trx, 'Pit (newest)')
      })
      await xidTaken.opened
      await raw.db.transaction().execute((trx) => rename(trx, 'Pit (older)'))
      secondCommitted.open()
      await first
      const cloudName = async () =>
        (await cell.cloud.handle.db.selectFrom('sites').select('name').where('org_id', '=', cell.org.id).where('code', '=', 'S1').executeTakeFirstOrThrow())
          .name
      await until('the renames pushed', status, (s) => s.up.items === 0)
      assert.equal(await cloudName(), 'Pit (newest)')
    })
  })
}
