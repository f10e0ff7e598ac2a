import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { databaseUrlFor, harness, sleep, testDialects, type Harness, type TestDialect } from '../../../../test/harness.ts'
import type { FastifyBaseLogger } from 'fastify'
import { connectDatabase, type Dialect } from '../../../db/connect.ts'
import { loadConfig, type ConfigInvalid } from '../../../config/load.ts'
import type { Db } from '../../../db/schema.ts'
import type { Org } from '../../../identity.ts'
import { auditRow, controllerRow, localDelete, localUpsert, siteRow } from '../sync/test-support.ts'
import { startOutboxRetentionJob, sweepOutbox, type RetentionOptions } from './retention.ts'
import { latestChange, withApplyOrigin } from './store.ts'
import { outboxSettled } from '../../../../test/support/fleet-link.ts'

const DAY = 86_400_000

/** A logger that keeps what the job logs (level, fields, message). */
function logSink(lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }>): FastifyBaseLogger {
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    lines.push({ level, fields, msg })
  }
  return { info: at('info'), error: at('error'), warn: at('warn') } as unknown as FastifyBaseLogger
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !done(); i++) await sleep(25)
  assert.ok(done(), 'not within 15 s')
}

interface Setup {
  h: Harness
  org: Org
  key: string
  db: Db
  dialect: Dialect
  /** Upserts a controller of S1 (or `site`) named `name`, as a change made here or applied from `origin`. */
  plc(id: string, name: string, o?: { site?: string; origin?: string }): Promise<number>
  dropPlc(id: string, site?: string): Promise<number>
  audit(id: string): Promise<number>
  /** Makes every change recorded so far `days` older. */
  age(days: number): Promise<void>
  sweep(mode: 'cloud' | 'site', over?: Partial<RetentionOptions>): ReturnType<typeof sweepOutbox>
  /** The outbox as [table, key, op, origin, seq] rows in seq order. */
  rows(): Promise<Array<{ seq: number; tx: number; table: string; key: string; op: string; origin: string }>>
  lastChange(id: string): Promise<{ op: string; origin: string } | null>
}

async function setup(t: TestContext, dialect: TestDialect, mode: 'cloud' | 'site'): Promise<Setup> {
  const h = await harness(t, dialect, { SITEGRID_MODE: mode })
  const { org, key } = await h.orgWithKey('owner')
  const db = h.handle.db
  // A clean slate: the key's minting recorded an audit event.
  await sql`delete from link_outbox where org_id = ${org.id}`.execute(db)
  for (const code of ['S1', 'S2', 'S3']) await localUpsert(db, 'sites', siteRow(org.id, code))
  const s: Setup = {
    h,
    org,
    key,
    db,
    dialect,
    plc: (id, name, o = {}) => {
      const row = controllerRow(org.id, o.site ?? 'S1', id, { name })
      if (o.origin === undefined) return localUpsert(db, 'controllers', row)
      const origin = o.origin
      return db.transaction().execute((trx) => withApplyOrigin(trx, dialect, origin, () => localUpsert(trx, 'controllers', row)))
    },
    dropPlc: (id, site = 'S1') => localDelete(db, 'controllers', controllerRow(org.id, site, id)),
    audit: (id) => localUpsert(db, 'audit_events', auditRow(org.id, id, 'test.done')),
    age: async (days) => {
      await sql`update link_outbox set at = at - ${days * DAY} where org_id = ${org.id}`.execute(db)
    },
    sweep: async (sweepMode, over = {}) => {
      await outboxSettled(db, dialect, org.id)
      // The application's own pool (PostgreSQL: the role row-level security applies to), as the job runs.
      return sweepOutbox(h.appHandle, h.clock, { mode: sweepMode, retentionMs: 7 * DAY, orgs: [org.id], ...over })
    },
    rows: async () => {
      const { rows } = await sql<{ seq: number; tx: number; table_name: string; row_key: string; op: string; origin: string }>`
        select seq, tx, table_name, row_key, op, origin from link_outbox where org_id = ${org.id} order by seq`.execute(db)
      return rows.map((r) => ({ seq: Number(r.seq), tx: Number(r.tx), table: r.table_name, key: r.row_key, op: r.op, origin: r.origin }))
    },
    lastChange: async (id) => {
      const res = await h.inject(
        { org, apiKey: key },
        { method: 'GET', url: `/api/link/last-change?table=controllers&key=${encodeURIComponent(JSON.stringify(['S1', id]))}` },
      )
      assert.equal(res.statusCode, 200, res.body)
      const change = (res.json() as { items: Array<{ change: { op: string; origin: string } | null }> }).items[0]!.change
      return change && { op: change.op, origin: change.origin }
    },
  }
  return s
}

/** The rows of one controller as "op/origin" in seq order ('' origin shown as 'here'). */
function historyOf(rows: Awaited<ReturnType<Setup['rows']>>, site: string, id: string): string[] {
  return rows.filter((r) => r.table === 'controllers' && r.key === JSON.stringify([site, id])).map((r) => `${r.op}/${r.origin || 'here'}`)
}

async function registerServer(s: Setup, id: string, sites: string[], o: { enrolled: boolean; revoked?: boolean; pulledTo?: { tx: number; seq: number } }) {
  await s.db
    .insertInto('site_servers')
    .values({
      org_id: s.org.id,
      id,
      name: `Server ${id}`,
      sites: JSON.stringify(sites),
      code_hash: null,
      code_expires_at: null,
      credential_verifier: o.enrolled && !o.revoked ? `verifier-${id}` : null,
      epoch: null,
      created_at: 1,
      created_by: 'test',
      enrolled_at: o.enrolled ? 2 : null,
      revoked_at: o.revoked ? 3 : null,
      revoked_by: o.revoked ? 'test' : null,
      last_contact_at: null,
      last_error: null,
      peer_versions: null,
      backlog: o.pulledTo ? JSON.stringify({ up: { items: 0, bytes: 0, oldestAt: null }, pulledTo: o.pulledTo, state: 'idle' }) : null,
    })
    .execute()
}

/** Enrolled here, the cloud's mark of this outbox at `acked` (a (tx, seq) cursor, as the push answers it). */
async function enrolHere(s: Setup, acked: { tx: number; seq: number }) {
  await s.db
    .insertInto('link_peer')
    .values({
      org_id: s.org.id,
      server_id: 'srv_here',
      cloud_url: 'https://acme.cloud.example',
      sealed_credential: null,
      epoch: 'e1',
      sites: JSON.stringify(['S1']),
      enrolled_at: 1,
      acked_tx: acked.tx,
      acked_seq: acked.seq,
      last_contact_at: null,
      last_error: null,
      peer_versions: null,
    })
    .execute()
}

for (const dialect of testDialects()) {
  describe(`${dialect}: outbox retention (issue 26)`, () => {
    it('cloud, no site server: older versions and the audit trail go; the latest change of each record and the tombstones of the cloud tables stay', async (t) => {
      const s = await setup(t, dialect, 'cloud')
      for (const name of ['v1', 'v2', 'v3']) await s.plc('c1', name)
      await s.plc('c2', 'v1')
      await s.dropPlc('c2')
      await s.audit('aud_1')
      await s.audit('aud_2')
      await s.age(30)
      // Three days old: younger than the retention (7 days).
      await s.plc('c4', 'v1')
      await s.plc('c4', 'v2')
      await s.age(3)
      // New.
      await s.plc('c3', 'v1')
      await s.plc('c3', 'v2')
      const before = await s.rows()

      const summary = await s.sweep('cloud')
      const after = await s.rows()
      assert.equal(summary.orgs, 1)
      assert.equal(summary.deleted, before.length - after.length)
      assert.equal(summary.deleted, 2 + 1 + 2) // c1 v1 and v2, c2's upsert, both audit events
      assert.deepEqual(historyOf(after, 'S1', 'c1'), ['upsert/here'])
      assert.deepEqual(historyOf(after, 'S1', 'c2'), ['delete/here'])
      assert.deepEqual(historyOf(after, 'S1', 'c3'), ['upsert/here', 'upsert/here'])
      assert.deepEqual(historyOf(after, 'S1', 'c4'), ['upsert/here', 'upsert/here'])
      assert.equal(after.filter((r) => r.table === 'audit_events').length, 0)
      assert.equal(after.filter((r) => r.table === 'sites').length, 3)
      // The kept row is the newest one.
      assert.equal(after.find((r) => r.key === JSON.stringify(['S1', 'c1']))!.seq, before.filter((r) => r.key === JSON.stringify(['S1', 'c1'])).at(-1)!.seq)

      // GET /api/link/last-change still answers for a record whose older changes went, and for a deleted one.
      assert.deepEqual(await s.lastChange('c1'), { op: 'upsert', origin: 'here' })
      assert.deepEqual(await s.lastChange('c2'), { op: 'delete', origin: 'here' })

      // A second sweep finds nothing more; retention 0 takes the three-day-old and new older versions.
      assert.equal((await s.sweep('cloud')).deleted, 0)
      s.h.clock.advance(DAY)
      assert.equal((await s.sweep('cloud', { retentionMs: 0 })).deleted, 2)
      const last = await s.rows()
      assert.deepEqual(historyOf(last, 'S1', 'c3'), ['upsert/here'])
      assert.deepEqual(historyOf(last, 'S1', 'c4'), ['upsert/here'])
    })

    it('cloud, site servers behind: each keeps what it has not pulled of its sites; the conflict rule still finds the cloud change after a base', async (t) => {
      const s = await setup(t, dialect, 'cloud')
      // S1 is served by srv_a, which reported pulling to the change of c6 it made itself.
      await s.plc('c1', 'v1')
      await s.plc('c1', 'v2')
      // A record the cloud changed, then srv_a changed: the conflict rule asks for the cloud's change after a base.
      const cloudEdit = await s.plc('c6', 'cloud edit')
      await s.plc('c6', 'site edit', { origin: 'srv_a' })
      const mark = (await s.rows()).at(-1)!
      await s.plc('c1', 'v3')
      await s.plc('c1', 'v4')
      // srv_a's own changes applied here: it never reads them back.
      await s.plc('c5', 'a1', { origin: 'srv_a' })
      await s.plc('c5', 'a2', { origin: 'srv_a' })
      // S2: its server was registered, never enrolled (it will be seeded from a package).
      for (const name of ['v1', 'v2', 'v3']) await s.plc('c9', name, { site: 'S2' })
      // S3: its server was revoked before it ever reported a position: it may resume from the start.
      await s.plc('c7', 'v1', { site: 'S3' })
      await s.plc('c7', 'v2', { site: 'S3' })
      await s.age(30)
      await registerServer(s, 'srv_a', ['S1'], { enrolled: true, pulledTo: { tx: mark.tx, seq: mark.seq } })
      await registerServer(s, 'srv_b', ['S2'], { enrolled: false })
      await registerServer(s, 'srv_c', ['S3'], { enrolled: true, revoked: true })

      const summary = await s.sweep('cloud')
      const after = await s.rows()
      assert.deepEqual(historyOf(after, 'S1', 'c1'), ['upsert/here', 'upsert/here']) // v1 and v2 went, v3 and v4 wait for srv_a
      assert.deepEqual(historyOf(after, 'S1', 'c5'), ['upsert/srv_a'])
      assert.deepEqual(historyOf(after, 'S1', 'c6'), ['upsert/here', 'upsert/srv_a'])
      assert.deepEqual(historyOf(after, 'S2', 'c9'), ['upsert/here'])
      assert.deepEqual(historyOf(after, 'S3', 'c7'), ['upsert/here', 'upsert/here'])
      assert.equal(summary.deleted, 2 + 1 + 2)
      const later = await latestChange(s.db, s.org.id, 'controllers', ['S1', 'c6'], { afterSeq: cloudEdit - 1, notOrigin: 'srv_a' })
      assert.equal(later?.seq, cloudEdit)

      // srv_a catches up: its S1 history goes down to the latest change of each record.
      const newest = after.at(-1)!
      await s.db
        .updateTable('site_servers')
        .set({ backlog: JSON.stringify({ pulledTo: { tx: newest.tx, seq: newest.seq } }) })
        .where('org_id', '=', s.org.id)
        .where('id', '=', 'srv_a')
        .execute()
      assert.equal((await s.sweep('cloud')).deleted, 1)
      assert.deepEqual(historyOf(await s.rows(), 'S1', 'c1'), ['upsert/here'])
    })

    it('site server not enrolled: what it made stays (its first enrolment sends it up); older versions that came from the cloud go', async (t) => {
      const s = await setup(t, dialect, 'site')
      for (const name of ['v1', 'v2', 'v3']) await s.plc('c1', name)
      await s.plc('c2', 'v1')
      await s.dropPlc('c2')
      await s.audit('aud_1')
      for (const name of ['v1', 'v2', 'v3']) await s.plc('c3', name, { origin: 'cloud' })
      await s.age(30)
      const before = await s.rows()

      const summary = await s.sweep('site')
      const after = await s.rows()
      assert.equal(summary.deleted, 2)
      assert.equal(after.length, before.length - 2)
      assert.deepEqual(historyOf(after, 'S1', 'c1'), ['upsert/here', 'upsert/here', 'upsert/here'])
      assert.deepEqual(historyOf(after, 'S1', 'c2'), ['upsert/here', 'delete/here'])
      assert.deepEqual(historyOf(after, 'S1', 'c3'), ['upsert/cloud'])
      assert.equal(after.filter((r) => r.table === 'audit_events').length, 1)
      assert.deepEqual(await s.lastChange('c3'), { op: 'upsert', origin: 'cloud' })
    })

    it('site server enrolled, the cloud behind: what the cloud acknowledged goes (a deleted record wholly), what it has not stays', async (t) => {
      const s = await setup(t, dialect, 'site')
      await s.plc('c1', 'v1')
      await s.plc('c1', 'v2')
      await s.plc('c2', 'v1')
      await s.dropPlc('c2')
      await s.audit('aud_1')
      // c8's delete may go, but its older upsert not yet (younger than the retention: the database's time can step
      // back; on PostgreSQL a change can also lie after the peer's position while its tombstone lies before it).
      const young = await s.plc('c8', 'v1')
      await s.dropPlc('c8')
      const acked = (await s.rows()).at(-1)!
      await s.plc('c1', 'v3')
      await s.plc('c1', 'v4')
      await s.audit('aud_2')
      await s.age(30)
      await sql`update link_outbox set at = ${s.h.clock.now()} where org_id = ${s.org.id} and seq = ${young}`.execute(s.db)
      await enrolHere(s, acked)

      const summary = await s.sweep('site')
      const after = await s.rows()
      // c1 v1 and v2, c2's upsert and tombstone, aud_1.
      assert.equal(summary.deleted, 5)
      assert.deepEqual(historyOf(after, 'S1', 'c1'), ['upsert/here', 'upsert/here'])
      assert.deepEqual(historyOf(after, 'S1', 'c2'), [])
      assert.deepEqual(
        after.filter((r) => r.table === 'audit_events').map((r) => r.key),
        [JSON.stringify(['aud_2'])],
      )
      assert.ok(after.every((r) => r.table === 'sites' || r.key === JSON.stringify(['S1', 'c8']) || r.seq > acked.seq))
      assert.deepEqual(await s.lastChange('c1'), { op: 'upsert', origin: 'here' })
      assert.equal(await s.lastChange('c2'), null)
      // The tombstone stays until its key's older change may go too: the key never shows an older change as its latest.
      assert.deepEqual(historyOf(after, 'S1', 'c8'), ['upsert/here', 'delete/here'])
      assert.deepEqual(await s.lastChange('c8'), { op: 'delete', origin: 'here' })
      s.h.clock.advance(8 * DAY)
      assert.equal((await s.sweep('site')).deleted, 2)
      assert.deepEqual(historyOf(await s.rows(), 'S1', 'c8'), [])
    })

    if (dialect === 'postgres')
      it('site server on PostgreSQL: a change committed after the acknowledged one, under a lower seq, stays until the cloud has it', async (t) => {
        const s = await setup(t, dialect, 'site')
        const raw = await connectDatabase(s.h.config.databaseUrl, { poolSize: 2 })
        t.after(() => raw.close())
        // `early` takes its transaction id first, `late` its seq first; `early` commits first.
        const signal = () => {
          let resolve = () => {}
          const promise = new Promise<void>((r) => {
            resolve = r
          })
          return { promise, resolve }
        }
        const steps = { earlyHasXid: signal(), lateWrote: signal() }
        const audit = (trx: Db, id: string) =>
          trx
            .insertInto('audit_events')
            .values(auditRow(s.org.id, id, 'test.done') as never)
            .execute()
        const late = raw.db.transaction().execute(async (trx) => {
          await steps.earlyHasXid.promise
          await sql`select pg_current_xact_id()`.execute(trx)
          await audit(trx, 'aud_late')
          steps.lateWrote.resolve()
        })
        await raw.db.transaction().execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx)
          steps.earlyHasXid.resolve()
          await steps.lateWrote.promise
          await audit(trx, 'aud_early')
        })
        await late
        const of = async (id: string) => (await s.rows()).find((r) => r.key === JSON.stringify([id]))!
        const [early, lateRow] = [await of('aud_early'), await of('aud_late')]
        assert.ok(lateRow.seq < early.seq && lateRow.tx > early.tx, 'late: a lower seq in a later transaction')
        await s.age(30)
        // The cloud acknowledged `early` (its mark); `late` lies after the mark in (tx, seq) order and was never sent.
        await enrolHere(s, { tx: early.tx, seq: early.seq })
        await s.sweep('site')
        const left = (await s.rows()).filter((r) => r.table === 'audit_events').map((r) => r.key)
        assert.deepEqual(left, [JSON.stringify(['aud_late'])])
      })

    it('deletes in bounded windows: no statement deletes more than the window', async (t) => {
      const s = await setup(t, dialect, 'cloud')
      for (let i = 0; i < 40; i++) await s.plc('c1', `v${i}`)
      await s.age(30)
      const deletes: number[] = []
      const summary = await s.sweep('cloud', { windowRows: 7, onDelete: (n) => deletes.push(n) })
      assert.equal(summary.deleted, 39)
      assert.ok(
        deletes.every((n) => n <= 7),
        deletes.join(','),
      )
      // 43 rows (3 sites, 40 versions) in windows of 7: 7 deletes, each after its window's read.
      assert.equal(deletes.length, 7)
      assert.equal(summary.statements, 14)
      assert.equal(
        deletes.reduce((a, b) => a + b, 0),
        39,
      )
      assert.deepEqual(historyOf(await s.rows(), 'S1', 'c1'), ['upsert/here'])
    })

    it('changes written while a sweep runs are all kept', async (t) => {
      const s = await setup(t, dialect, 'cloud')
      for (let i = 0; i < 120; i++) await s.plc('c1', `v${i}`)
      await s.age(30)
      await outboxSettled(s.db, dialect, s.org.id)
      const written: number[] = []
      let sweeping = true
      const writer = (async () => {
        for (let i = 0; sweeping || i < 20; i++) written.push(await s.plc(`w${i % 5}`, `n${i}`))
      })()
      const summary = await sweepOutbox(s.h.appHandle, s.h.clock, { mode: 'cloud', retentionMs: 7 * DAY, orgs: [s.org.id], windowRows: 5 })
      sweeping = false
      await writer
      const after = new Set((await s.rows()).map((r) => r.seq))
      assert.equal(summary.deleted, 119)
      assert.ok(written.length >= 20)
      assert.deepEqual(
        written.filter((seq) => !after.has(seq)),
        [],
      )
      assert.deepEqual(historyOf(await s.rows(), 'S1', 'c1'), ['upsert/here'])
    })

    it('the job sweeps on its timer, logs each sweep with the rows deleted, and logs a failed sweep without stopping', async (t) => {
      const s = await setup(t, dialect, 'cloud')
      for (let i = 0; i < 4; i++) await s.plc('c1', `v${i}`)
      await s.age(30)
      await outboxSettled(s.db, dialect, s.org.id)
      const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = []
      const log = logSink(lines)
      const stop = startOutboxRetentionJob(s.h.appHandle, s.h.clock, { mode: 'cloud', retentionMs: 7 * DAY, orgs: [s.org.id] }, log, 20)
      await until(() => lines.some((l) => l.msg === 'link outbox swept'))
      await stop()
      const swept = lines.find((l) => l.msg === 'link outbox swept')!
      assert.equal(swept.level, 'info')
      assert.equal(swept.fields.deleted, 3)
      assert.equal(swept.fields.orgs, 1)
      assert.deepEqual(historyOf(await s.rows(), 'S1', 'c1'), ['upsert/here'])

      // A database the sweep fails on (never migrated): each sweep is logged as failed, and the job goes on.
      const unmigrated = await connectDatabase(await databaseUrlFor(t, 'sqlite'), { poolSize: 1 })
      t.after(() => unmigrated.close())
      const failures: typeof lines = []
      const stopFailing = startOutboxRetentionJob(unmigrated, s.h.clock, { mode: 'cloud', retentionMs: 0 }, logSink(failures), 20)
      await until(() => failures.filter((l) => l.msg === 'link outbox sweep failed').length >= 2)
      await stopFailing()
      assert.ok(failures.every((l) => l.level === 'error' && l.fields.job === 'link-outbox-retention'))
    })
  })
}

describe('SITEGRID_LINK_OUTBOX_RETENTION_DAYS', () => {
  const base = { SITEGRID_DATA_DIR: tmpdir() }
  it('is 7 days unless set; 0 is allowed; a negative number, more than ten years or a word is refused, naming the setting', () => {
    assert.equal(loadConfig(base, { requireKeySecret: false }).link.outboxRetentionDays, 7)
    assert.equal(loadConfig({ ...base, SITEGRID_LINK_OUTBOX_RETENTION_DAYS: '0' }, { requireKeySecret: false }).link.outboxRetentionDays, 0)
    for (const bad of ['-1', '3651', 'week']) {
      assert.throws(
        () => loadConfig({ ...base, SITEGRID_LINK_OUTBOX_RETENTION_DAYS: bad }, { requireKeySecret: false }),
        (err: ConfigInvalid) => err.problems.some((p) => p.startsWith('SITEGRID_LINK_OUTBOX_RETENTION_DAYS')),
        bad,
      )
    }
  })
})
