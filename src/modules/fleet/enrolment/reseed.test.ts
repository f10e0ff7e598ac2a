import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { testDialects, type Harness } from '../../../../test/harness.ts'
import type { Db } from '../../../db/schema.ts'
import { CLI_ACTOR } from '../../../identity.ts'
import { createLinkHttp } from '../agent/http.ts'
import { samplesOfBatch, seedBatch } from '../historian-chunks/test-chunks-setup.ts'
import { LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from '../site-servers/protocol.ts'
import { alarmEvent, cloudCell, FAST_LINK, register, siteServer, until } from './test-link.ts'

// A site server restored from an old backup, then reseeded (issue 26): the backup is a real copy of the site's SQLite
// database (VACUUM INTO, consistent under WAL), and the restore puts every table of it back in place in one transaction
// on the running server's connection (the outbox and its sequence included, so the seq goes backwards), as copying the
// file back would, without restarting the in-process server. Fast agent timings, as agent.test.ts.
async function backup(db: Db, file: string): Promise<void> {
  await sql`vacuum into ${sql.lit(file)}`.execute(db)
}

/** Every table of the backup back in place; the tables triggers write (the outbox, the edge configuration versions) and sqlite_sequence last. */
const TRIGGER_WRITTEN = ['link_outbox', 'edge_config_versions']
async function restore(db: Db, file: string): Promise<void> {
  await sql`attach database ${sql.lit(file)} as bak`.execute(db)
  // Off while the tables are emptied and filled (a consistent copy goes back; the deletes must not cascade meanwhile).
  await sql`pragma foreign_keys = off`.execute(db)
  try {
    const { rows } = await sql<{ name: string }>`select name from bak.sqlite_master
      where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' and name not in (${sql.join(TRIGGER_WRITTEN)}, 'link_apply_origin') order by name`.execute(
      db,
    )
    await db.transaction().execute(async (trx) => {
      for (const { name } of rows) await sql`delete from ${sql.table(name)}`.execute(trx)
      for (const { name } of rows) await sql`insert into ${sql.table(name)} select * from ${sql.table(`bak.${name}`)}`.execute(trx)
      for (const name of TRIGGER_WRITTEN) {
        await sql`delete from ${sql.table(name)}`.execute(trx)
        await sql`insert into ${sql.table(name)} select * from ${sql.table(`bak.${name}`)}`.execute(trx)
      }
      await sql`delete from sqlite_sequence`.execute(trx)
      await sql`insert into sqlite_sequence select * from bak.sqlite_sequence`.execute(trx)
    })
  } finally {
    await sql`pragma foreign_keys = on`.execute(db)
    await sql`detach database bak`.execute(db)
  }
}

for (const dialect of testDialects()) {
  describe(`${dialect} cloud, SQLite site server: a restore from an old backup is detected and reseeded (issue 26)`, () => {
    it('restored: refused as diverged, nothing applied; reseed: the sites equal the cloud, the unacknowledged changes kept in a file, the link online both ways, the old epoch refused', async (t) => {
      const cell = await cloudCell(t, dialect, { SITEGRID_LINK_PULL_POLL_MS: '20' })
      const { site, orgs, enrolment } = await siteServer(t, FAST_LINK)
      const server = await register(cell.cloud, cell.owner, ['S1'])
      const http = createLinkHttp({ cloudUrl: cell.url, env: {}, timeoutMs: 30_000 })
      t.after(() => http.close())
      const enrolled = await enrolment.enrol({ cloudUrl: cell.url, code: server.code, http, actor: CLI_ACTOR })
      // The cloud stored the epoch the site sent: a push of another one is refused from now on.
      const stored = await cell.cloud.handle.db.selectFrom('site_servers').select('epoch').where('id', '=', server.id).executeTakeFirstOrThrow()
      assert.equal(stored.epoch, enrolled.epoch)

      const local = (await orgs.findBySlug(cell.org.slug))!
      const siteKey = (await site.mintKey(local, 'owner')).plaintext
      const onSite = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        site.inject({ org: local, apiKey: siteKey }, { method, url, ...(payload ? { payload } : {}) })
      const inCloud = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        cell.cloud.inject(cell.owner, { method, url, ...(payload ? { payload } : {}) })
      const list = async (h: Harness, url: string, as: typeof onSite) => {
        const res = await as('GET', url)
        assert.equal(res.statusCode, 200, `${h.config.mode} ${url}: ${res.body}`)
        return res.json().items as Array<Record<string, unknown>>
      }
      const controllers = (h: Harness, as: typeof onSite) => list(h, '/api/sites/S1/controllers', as)
      const instances = (h: Harness, as: typeof onSite) => list(h, '/api/sites/S1/instances', as)
      const alarms = (h: Harness, as: typeof onSite) => list(h, '/api/sites/S1/alarms', as)
      const batches = async (h: Harness) => {
        const rows = await h.handle.db
          .selectFrom('historian_batches')
          .select(['id', 'status', 'samples_stored'])
          .where('org_id', '=', local.id)
          .where('site_code', '=', 'S1')
          .orderBy('id')
          .execute()
        return Promise.all(rows.map(async (b) => ({ ...b, samples: await samplesOfBatch(h.handle.db, local.id, 'S1', b.id) })))
      }
      const same = async (what: string, read: (h: Harness, as: typeof onSite) => Promise<unknown>) =>
        until(
          what,
          async () => [await read(cell.cloud, inCloud), await read(site, onSite)],
          ([a, b]) => JSON.stringify(a) === JSON.stringify(b),
        )
      const status = async () => (await onSite('GET', '/api/link')).json() as { state: string; up: { items: number }; lastError: string | null }

      await site.app.ready() // the agent starts with the server
      const [plc] = await controllers(cell.cloud, inCloud)
      assert.ok(plc)
      const t0 = Date.now()
      assert.equal((await onSite('POST', '/api/sites/S1/alarms/events', { events: [alarmEvent('e1', 'CV-1', t0)] })).statusCode, 200)
      await seedBatch(site.handle.db, local.id, { id: 'bat_before', siteCode: 'S1', series: [{ instanceId: 'CV-1', tagKey: 'speed', n: 30 }] })
      await same('an alarm raised on the site', alarms)
      await same('a historian batch made on the site', batches)

      // The backup, with everything acknowledged both ways.
      await until('all acknowledged', status, (s) => s.state === 'online' && s.up.items === 0)
      const dir = mkdtempSync(join(tmpdir(), 'sitegrid-reseed-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      await backup(site.handle.db, join(dir, 'backup.db'))

      // After the backup: more made on the site and pushed, and a cloud edit pulled.
      const after = Array.from({ length: 5 }, (_, i) => alarmEvent(`after-${i}`, 'CV-2', t0 + 1000 + i))
      assert.equal((await onSite('POST', '/api/sites/S1/alarms/events', { events: after })).statusCode, 200)
      await seedBatch(site.handle.db, local.id, { id: 'bat_after', siteCode: 'S1', series: [{ instanceId: 'CV-2', tagKey: 'load', n: 20 }] })
      assert.equal((await inCloud('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'renamed in the cloud' })).statusCode, 200)
      await same('alarms after the backup', alarms)
      await same('batches after the backup', batches)
      await same('controllers after the backup', controllers)
      await until('all acknowledged again', status, (s) => s.state === 'online' && s.up.items === 0)
      const cloudAlarms = await alarms(cell.cloud, inCloud)
      const cloudEvents = async () =>
        (await cell.cloud.handle.db.selectFrom('alarm_events').select('event_id').where('org_id', '=', cell.org.id).orderBy('event_id').execute()).map(
          (e) => e.event_id,
        )
      const eventsBefore = await cloudEvents()
      assert.equal(eventsBefore.length, 6)

      // The restore: the site's outbox goes back in time; work goes on there (a new alarm, an instance edit).
      await restore(site.handle.db, join(dir, 'backup.db'))
      assert.equal((await alarms(site, onSite)).length, 1, 'the restored server holds what the backup held')
      assert.equal((await onSite('POST', '/api/sites/S1/alarms/events', { events: [alarmEvent('restored-1', 'CV-2', t0 + 5000)] })).statusCode, 200)
      assert.equal((await onSite('PUT', '/api/sites/S1/instances/CV-1', { name: 'edited on the restored server' })).statusCode, 200)
      const diverged = await until('the site sees the divergence', status, (s) => s.state === 'diverged')
      assert.match(diverged.lastError ?? '', /diverged/)
      // Nothing of it was applied in the cloud.
      assert.deepEqual(await cloudEvents(), eventsBefore)
      assert.deepEqual(await alarms(cell.cloud, inCloud), cloudAlarms)
      assert.equal(((await instances(cell.cloud, inCloud)).find((i) => i.id === 'CV-1') as { name: string }).name, 'Conveyor CV-1')
      const oldEpoch = enrolled.epoch
      const credential = (await enrolment.credential(local.id))!

      // The reseed.
      const keep = join(dir, 'unacknowledged.jsonl')
      const result = await enrolment.reseed({ http, actor: CLI_ACTOR, unacknowledgedFile: keep })
      assert.deepEqual(result.seeded, ['S1'])
      assert.notEqual(result.epoch, oldEpoch)
      assert.equal(result.unacknowledgedFile, keep)
      const kept = readFileSync(keep, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { table: string; op: string; row: Record<string, unknown> })
      assert.equal(result.unacknowledged, kept.length)
      assert.ok(
        kept.some((c) => c.table === 'alarm_events' && c.row.event_id === 'restored-1'),
        'the new alarm event is kept',
      )
      assert.ok(
        kept.some((c) => c.table === 'instances' && c.row.name === 'edited on the restored server'),
        'the instance edit is kept',
      )
      assert.equal(
        (await cell.cloud.handle.db.selectFrom('site_servers').select('epoch').where('id', '=', server.id).executeTakeFirstOrThrow()).epoch,
        result.epoch,
      )
      const audited = await cell.cloud.handle.db
        .selectFrom('audit_events')
        .select(['action', 'target'])
        .where('org_id', '=', cell.org.id)
        .where('action', '=', 'site_server.reseeded')
        .execute()
      assert.deepEqual(audited, [{ action: 'site_server.reseeded', target: server.id }])

      // The site's data of its sites is the cloud's again, and the agent resumes by itself.
      for (const [what, read] of [
        ['controllers', controllers],
        ['instances', instances],
        ['alarms', alarms],
      ] as const) {
        await same(`${what} after the reseed`, read)
      }
      await same('historian batches after the reseed', batches)
      assert.deepEqual(
        (await batches(site)).map((b) => [b.id, b.samples.length]),
        [
          ['bat_after', 20],
          ['bat_before', 30],
        ],
      )
      await until('online again', status, (s) => s.state === 'online' && s.up.items === 0 && s.lastError === null)
      assert.deepEqual(await cloudEvents(), eventsBefore, 'nothing of the restored server went up')

      // A change on each side flows.
      assert.equal((await inCloud('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'after the reseed (cloud)' })).statusCode, 200)
      await same('a cloud edit after the reseed', controllers)
      assert.equal((await onSite('POST', '/api/sites/S1/alarms/events', { events: [alarmEvent('n1', 'CV-1', t0 + 9000)] })).statusCode, 200)
      await same('a site alarm after the reseed', alarms)
      assert.deepEqual(await cloudEvents(), [...eventsBefore, 'n1'].sort())
      assert.equal(((await controllers(site, onSite))[0] as { name: string }).name, 'after the reseed (cloud)')

      // A push of the old epoch is refused (the restored server's outbox, replayed): nothing applied.
      const replay = await cell.cloud.inject(undefined, {
        method: 'POST',
        url: '/api/link/push',
        host: cell.host,
        headers: { authorization: `Bearer ${credential}`, [PROTOCOL_HEADER]: String(LINK_PROTOCOL), [SCHEMA_HEADER]: SCHEMA_VERSION },
        payload: { epoch: oldEpoch, after: { tx: 0, seq: 0 }, changes: [] },
      })
      assert.equal(replay.statusCode, 409, replay.body)
      assert.deepEqual([replay.json().code, replay.json().reason], ['LinkDiverged', 'epoch'])
      assert.ok(existsSync(keep))
    })

    it('a reseed cut during its seed says so (seeding) and `link seed` finishes it; the reseed route takes only a link credential and a well-formed epoch', async (t) => {
      const cell = await cloudCell(t, dialect, { SITEGRID_LINK_PULL_POLL_MS: '20' })
      const { site, orgs, enrolment } = await siteServer(t, FAST_LINK)
      const server = await register(cell.cloud, cell.owner, ['S1', 'S2'])
      const http = createLinkHttp({ cloudUrl: cell.url, env: {}, timeoutMs: 30_000 })
      t.after(() => http.close())
      const enrolled = await enrolment.enrol({ cloudUrl: cell.url, code: server.code, http, actor: CLI_ACTOR })
      const local = (await orgs.findBySlug(cell.org.slug))!
      const siteKey = (await site.mintKey(local, 'owner')).plaintext
      const onSite = (url: string) => site.inject({ org: local, apiKey: siteKey }, { method: 'GET', url })
      await site.app.ready()
      await until(
        'online',
        async () => (await onSite('/api/link')).json(),
        (s) => s.state === 'online',
      )
      const credential = (await enrolment.credential(local.id))!

      // The route: an owner's key is not a link credential (403); an epoch that is not 32 hex digits is a 400 naming
      // it; nothing changed by either.
      const reseedAs = (headers: Record<string, string>, payload: object) =>
        cell.cloud.inject(undefined, { method: 'POST', url: '/api/link/reseed', host: cell.host, headers, payload })
      const link = { authorization: `Bearer ${credential}`, [PROTOCOL_HEADER]: String(LINK_PROTOCOL) }
      assert.equal(
        (await reseedAs({ 'x-api-key': cell.owner.apiKey, [PROTOCOL_HEADER]: String(LINK_PROTOCOL) }, { epoch: 'a'.repeat(32), after: { tx: 0, seq: 0 } }))
          .statusCode,
        403,
      )
      const bad = await reseedAs(link, { epoch: 'not-hex', after: { tx: 0, seq: 0 } })
      assert.equal(bad.statusCode, 400, bad.body)
      assert.match(bad.body, /epoch/)
      assert.equal(
        (await reseedAs({ authorization: link.authorization }, { epoch: 'a'.repeat(32), after: { tx: 0, seq: 0 } })).json().code,
        'LinkVersionMismatch',
      )
      const row = () => cell.cloud.handle.db.selectFrom('site_servers').select('epoch').where('id', '=', server.id).executeTakeFirstOrThrow()
      assert.equal((await row()).epoch, enrolled.epoch)

      // A reseed whose seed of S2 is cut: ReseedIncomplete, S2 missing, and the link says why.
      let cut = true
      const flaky = {
        request: (path: string, init: Parameters<typeof http.request>[1]) =>
          cut && path.includes('site=S2') ? Promise.reject(new Error('ECONNRESET')) : http.request(path, init),
      }
      const dir = mkdtempSync(join(tmpdir(), 'sitegrid-reseed-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      await assert.rejects(
        enrolment.reseed({ http: flaky, actor: CLI_ACTOR, unacknowledgedFile: join(dir, 'kept.jsonl') }),
        (err: Error & { code?: string }) => err.code === 'LinkCloudUnavailable' && err.message.includes('sitegrid link seed'),
      )
      assert.ok(!existsSync(join(dir, 'kept.jsonl')), 'nothing was left unacknowledged: no file')
      assert.notEqual((await row()).epoch, enrolled.epoch)
      assert.equal((await onSite('/api/sites/S2')).statusCode, 404)
      const seeding = await until(
        'the link says it is seeding',
        async () => (await onSite('/api/link')).json(),
        (s) => s.state === 'seeding',
      )
      assert.match(seeding.lastError, /sitegrid link seed/)

      // `sitegrid link seed` finishes it, even past a mark a pull of the previous epoch left meanwhile; the agent resumes.
      await site.handle.db
        .insertInto('link_marks')
        .values({ org_id: local.id, peer: 'cloud', epoch: enrolled.epoch, tx: 0, seq: 0, digest: null, updated_at: 0 })
        .onConflict((oc) => oc.columns(['org_id', 'peer']).doNothing())
        .execute()
      cut = false
      const resumed = await enrolment.resumeSeeding({ http, actor: CLI_ACTOR })
      assert.deepEqual(resumed.seeded, ['S2'])
      assert.equal((await site.handle.db.selectFrom('link_peer').select('last_error').executeTakeFirstOrThrow()).last_error, null, 'the note is gone')
      for (const url of ['/api/sites/S1/instances', '/api/sites/S2/instances']) {
        assert.deepEqual((await onSite(url)).json(), (await cell.as('GET', url)).json(), url)
      }
      await until(
        'online after the seed',
        async () => (await onSite('/api/link')).json(),
        (s) => s.state === 'online',
      )

      // Revoked: the cloud refuses the reseed (its uniform 401) and nothing changes here.
      assert.equal((await cell.as('POST', `/api/admin/site-servers/${server.id}/revoke`)).statusCode, 200)
      const epochBefore = (await row()).epoch
      await assert.rejects(
        enrolment.reseed({ http, actor: CLI_ACTOR, unacknowledgedFile: join(dir, 'revoked.jsonl') }),
        (err: Error & { code?: string }) => err.code === 'Unauthorized' && /re-enrol/i.test(err.message),
      )
      assert.equal((await row()).epoch, epochBefore)
      assert.equal((await onSite('/api/sites/S2')).statusCode, 200, 'the sites are kept')
      assert.equal((await site.handle.db.selectFrom('link_peer').select('epoch').executeTakeFirstOrThrow()).epoch, epochBefore)
    })
  })
}
