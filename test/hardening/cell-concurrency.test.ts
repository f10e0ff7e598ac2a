// Concurrency in a cell: two `sitegrid serve` processes on one PostgreSQL (as the app role), many requests at once
// split over both. Every answer is a documented one (never a 5xx for a mere concurrent writer) and the database holds
// exactly what the 2xx answers claim. SQLite serves a file from one process (a second is refused at start-up, tested
// here): there the same requests go at once to that one process.
import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import BetterSqlite3 from 'better-sqlite3'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { httpRequest, runCliAsync, startServer, type Server } from '../cli/process.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { systemClock } from '../../src/clock.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { KEY_SECRET, sleep, testDialects, type TestDialect } from '../harness.ts'
import { startFakeOpenAi } from '../support/fake-openai.ts'
import { seedHistorianSite, startHistorianUpload, trendRows } from '../support/historian-upload.ts'
import { appRoleUrl, createTestDatabase, ensureAppRole, TEST_APP_ROLE } from '../postgres.ts'
import { processWorld, type ProcessWorld } from './process-support.ts'

interface Answer {
  status: number
  body: string
  server: number
}

interface Cell {
  world: ProcessWorld
  servers: Server[]
  /** Request `i` goes to process `i % servers.length`. */
  call: (i: number, method: string, path: string, body?: unknown) => Promise<Answer>
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

async function startCell(
  t: TestContext,
  dialect: TestDialect,
  slug: string,
  mode: 'cloud' | 'site' = 'cloud',
  env: Record<string, string> = {},
): Promise<Cell> {
  // info: the alarm service logs each retry of a transaction that lost a race (counted in the figures).
  const world = await processWorld(t, dialect, slug, { SITEGRID_MODE: mode, SITEGRID_LOG_LEVEL: 'info', SITEGRID_PIN_SCRYPT_LOG2N: '10', ...env })
  const processes = dialect === 'postgres' ? 2 : 1
  const servers = await Promise.all(Array.from({ length: processes }, () => startServer({ cwd: world.cwd, env: world.env })))
  t.after(async () => {
    for (const s of servers) await s.stop()
  })
  const call = (i: number, method: string, path: string, body?: unknown) => callAs({ servers }, i, slug, world.ownerKey, method, path, body)
  return { world, servers, call }
}

/** Request `i` to process `i % servers.length`, as organisation `slug` with `key`. */
function callAs(cell: Pick<Cell, 'servers'>, i: number, slug: string, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const { servers } = cell
  return new Promise<Answer>((resolve, reject) => {
    const server = i % servers.length
    const headers: Record<string, string> = { host: `${slug}.localhost`, 'x-api-key': key }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const req = request(`${servers[server]!.url}${path}`, { method, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, server }))
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** How many alarm transactions the processes retried so far (their info log line). */
function retriesSeen(cell: Cell): number {
  return cell.servers.reduce((sum, s) => sum + s.output().split('alarm write retried after a concurrent change').length - 1, 0)
}

function tally(answers: Answer[]): Record<number, number> {
  return answers.reduce<Record<number, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {})
}

/** The 5xx answers, with their bodies, for the assertion message. */
function serverErrors(answers: Answer[]): string {
  return answers
    .filter((a) => a.status >= 500)
    .map((a) => `${a.status} ${a.body}`)
    .join('\n')
}

async function seedSite(cell: Cell, instanceIds: string[]): Promise<void> {
  const site = await cell.call(0, 'POST', '/api/sites', { code: 'S1', name: 'Plant' })
  assert.equal(site.status, 201, site.body)
  const ctl = await cell.call(0, 'POST', '/api/sites/S1/controllers', {
    name: 'PLC',
    platform: 1,
    assetNumber: 'PLC-1',
    connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
  })
  assert.equal(ctl.status, 201, ctl.body)
  const controllerId = (JSON.parse(ctl.body) as { id: string }).id
  for (const id of instanceIds) {
    const res = await cell.call(0, 'POST', '/api/sites/S1/instances', { id, name: id, typeId: 'conveyor', assetNumber: `A-${id}`, controllerId })
    assert.equal(res.status, 201, res.body)
  }
}

async function countEvents(w: ProcessWorld): Promise<{ rows: number; distinct: number }> {
  const rows = await w.handle.db.selectFrom('alarm_events').select('event_id').where('org_id', '=', w.orgId).execute()
  return { rows: rows.length, distinct: new Set(rows.map((r) => r.event_id)).size }
}

/** Event time of the next round of events: each round's events are newer than every earlier round's. */
let nextEventAt = Date.now() - 86_400_000

/** How the batches are sent: `send` posts them all at once and answers their answers. */
type Fire = (send: () => Promise<Answer[]>) => Promise<Answer[]>
const atOnce: Fire = (send) => send()

/**
 * PostgreSQL: a writer outside the alarm service (the test's own transactions, as a tenant import or a site removal
 * would be) changes P1's open alarm `times` times over, each time holding it until a batch waits for it: that batch
 * then meets a changed alarm again and again. It must retry (with backoff) until it applies, never answer 5xx.
 */
function whileAlarmRewritten(cell: Cell, times: number): Fire {
  return async (send) => {
    const { db } = cell.world.handle
    let answers: Promise<Answer[]> | undefined
    for (let i = 0; i < times; i++) {
      await db.transaction().execute(async (trx) => {
        const held = await trx
          .updateTable('alarms')
          .set((eb) => ({ version: eb('version', '+', 1) }))
          .where('org_id', '=', cell.world.orgId)
          .where('active_key', 'is not', null)
          .executeTakeFirst()
        assert.equal(Number(held.numUpdatedRows), 1)
        answers ??= send()
        for (let poll = 0; poll < 400 && (await lockWaiters(cell)) < 1; poll++) await sleep(25)
      })
    }
    return answers!
  }
}

/** Server connections of this database waiting for a lock (the owner's connection sees every role's activity). */
async function lockWaiters(cell: Cell): Promise<number> {
  const { rows } = await sql<{
    n: number
  }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(cell.world.handle.db)
  return rows[0]!.n
}

/**
 * `batches` batches of `perBatch` events, all of one source (P1 HighTemp), alternating active / normal in event time,
 * posted at once. The batches' events interleave in event time, so whichever batch commits first, every other one
 * still holds newer events and writes the same alarm: each batch contends with every other. Every batch answers 200
 * with every event accepted, and every event is stored exactly once.
 */
async function raiseTogether(cell: Cell, dialect: TestDialect, batches: number, perBatch: number, fire = atOnce): Promise<void> {
  const t0 = nextEventAt
  nextEventAt += batches * perBatch * 100
  const bodies = Array.from({ length: batches }, (_, b) => ({
    events: Array.from({ length: perBatch }, (_, e) => {
      const n = e * batches + b
      return {
        eventId: `${t0}-${n}`,
        instanceId: 'P1',
        condition: 'HighTemp',
        priority: 'high',
        state: e % 2 === 0 ? 'active' : 'normal',
        occurredAt: new Date(t0 + n * 100).toISOString(),
      }
    }),
  }))
  const before = await countEvents(cell.world)
  const retriesBefore = retriesSeen(cell)
  const answers = await fire(() => Promise.all(bodies.map((body, i) => cell.call(i, 'POST', '/api/sites/S1/alarms/events', body))))
  const after = await countEvents(cell.world)
  const ok = answers.filter((a) => a.status === 200)
  const accepted = ok.reduce((sum, a) => sum + (JSON.parse(a.body) as { accepted: number }).accepted, 0)
  const sent = batches * perBatch
  console.log(
    `cell ${dialect}: alarm events, ${batches} concurrent batches x ${perBatch} events of one source over ${cell.servers.length} process(es)${fire === atOnce ? '' : ' while another writer rewrites the alarm 8 times'} -> statuses ${JSON.stringify(tally(answers))}, events sent ${sent}, accepted in 2xx ${accepted}, stored ${after.rows - before.rows} (distinct ${after.distinct - before.distinct}), retries seen ${retriesSeen(cell) - retriesBefore}`,
  )
  assert.equal(serverErrors(answers), '')
  assert.deepEqual(tally(answers), { 200: batches })
  assert.equal(accepted, sent)
  assert.equal(after.rows - before.rows, sent)
  assert.equal(after.distinct - before.distinct, sent)
}

for (const dialect of testDialects()) {
  describe(`${dialect}: two server processes on one database`, () => {
    it('concurrent alarm event batches raising the same source all apply, each event stored exactly once (24 and 50 batches of 30 at once)', async (t) => {
      const cell = await startCell(t, dialect, 'alarms')
      await seedSite(cell, ['P1'])
      await raiseTogether(cell, dialect, 24, 30)
      await raiseTogether(cell, dialect, 50, 30)
      if (dialect === 'postgres') await raiseTogether(cell, dialect, 24, 30, whileAlarmRewritten(cell, 8))
    })
  })
}

if (testDialects().includes('postgres')) {
  describe('postgres: the processes of a cell start together on a fresh database', () => {
    it('three `sitegrid serve` started at once, on the fresh database and again on a restart, all come up: the schema migrated once, each serving as the app role', async (t) => {
      // Stop 39's CI: two processes granting the app role at once, one died of "tuple concurrently updated". Process
      // start-up jitter makes that collision rare here; row-level-security.test.ts reproduces it at will (eight grants).
      const adminUrl = process.env.TEST_DATABASE_URL!
      await ensureAppRole(adminUrl)
      const url = await createTestDatabase(adminUrl)
      const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-cell-start-'))
      t.after(() => rmSync(cwd, { recursive: true, force: true }))
      const env = { DATABASE_URL: url, SITEGRID_DATABASE_APP_URL: appRoleUrl(url), SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_DATA_DIR: join(cwd, 'data') }
      const owner = await connectDatabase(url, { poolSize: 1 })
      t.after(() => owner.close())
      // Round 1 on the fresh database (they migrate and grant); round 2, the cell restarted at once (nothing to migrate).
      for (const round of [1, 2]) {
        const started = await Promise.allSettled(Array.from({ length: 3 }, () => startServer({ cwd, env })))
        const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
        try {
          assert.deepEqual(
            started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : [])),
            [],
            `round ${round}`,
          )
          const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(owner.db)
          assert.equal(applied.rows[0]!.n, Object.keys(migrations).length)
          const slug = `together${round}`
          const org = await createOrgsService({ handle: owner, clock: systemClock }).provision(slug)
          const key = await createApiKeysService({ handle: owner, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') }).mint(org.id, CLI_ACTOR, {
            role: 'owner',
            name: 'owner',
            expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
          })
          for (const server of servers) {
            const answer = await httpRequest(`${server.url}/api/admin/api-keys`, { headers: { host: `${slug}.localhost`, 'x-api-key': key.plaintext } })
            assert.equal(answer.status, 200, answer.body)
          }
          const roles = await sql<{ usename: string }>`select distinct usename from pg_stat_activity
        where datname = current_database() and usename <> current_user`.execute(owner.db)
          assert.deepEqual(
            roles.rows.map((r) => r.usename),
            [TEST_APP_ROLE],
          )
        } finally {
          for (const s of servers) await s.stop()
        }
      }
    })
  })
}

/** Requests sent at once for one rule. */
const RACERS = 50

interface RaceResult {
  answers: Answer[]
  ok: Answer[]
  codes: Record<string, number>
}

/**
 * Fires `RACERS` requests at once, split over the processes, and prints the figures. No answer is a 5xx; every other
 * answer is a 2xx or one of the `refusals` ("409 Conflict"): the rule's documented answers.
 */
async function race(cell: Cell, dialect: TestDialect, rule: string, refusals: string[], send: (i: number) => Promise<Answer>): Promise<RaceResult> {
  const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => send(i)))
  const codes: Record<string, number> = {}
  for (const a of answers) {
    const code = a.status < 300 ? String(a.status) : `${a.status} ${(JSON.parse(a.body) as { code?: string }).code}`
    codes[code] = (codes[code] ?? 0) + 1
  }
  const ok = answers.filter((a) => a.status < 300)
  const fivexx = answers.filter((a) => a.status >= 500).length
  console.log(
    `cell ${dialect}: ${rule}: sent ${RACERS} over ${cell.servers.length} process(es) -> 2xx ${ok.length}, 409 ${answers.filter((a) => a.status === 409).length}, 5xx ${fivexx}; ${JSON.stringify(codes)}`,
  )
  assert.equal(serverErrors(answers), '', rule)
  for (const code of Object.keys(codes)) assert.ok(/^2\d\d$/.test(code) || refusals.includes(code), `${rule}: undocumented answer ${code}`)
  return { answers, ok, codes }
}

const count = async (
  cell: Cell,
  table: 'sites' | 'controllers' | 'instances' | 'electrical_nodes' | 'electrical_edges' | 'domain_bindings' | 'alarm_history' | 'audit_events',
  where: Record<string, string | number> = {},
) => {
  let q = cell.world.handle.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'))
  for (const [column, value] of Object.entries(where)) q = q.where(column as 'org_id', '=', value as string)
  return Number((await q.executeTakeFirstOrThrow()).n)
}

if (testDialects().includes('sqlite')) {
  describe('sqlite: one server process per file', () => {
    it('a second `sitegrid serve` on a served SQLite file is refused at start-up naming the first; CLI commands still work beside it; the file is free again once the server ends, SIGKILL included', async (t) => {
      const world = await processWorld(t, 'sqlite', 'site', { SITEGRID_MODE: 'cloud' })
      const { cwd, env } = world
      const first = await startServer({ cwd, env })
      t.after(() => first.stop('SIGKILL'))

      const second = await startServer({ cwd, env }).then(
        (s) => s,
        (err: Error) => err,
      )
      if (!(second instanceof Error)) await second.stop()
      assert.ok(second instanceof Error, 'the second server started')
      assert.match(
        second.message,
        new RegExp(`sitegrid serve: the SQLite database \\S+ is already served by process ${first.child.pid} \\(started \\S+ in ${cwd}\\)`),
      )
      console.log(`cell sqlite: second server on one file -> refused: ${second.message.split('\n').find((l) => l.includes('already served'))}`)

      // The CLI is another process on the same file: a key it revokes stops authenticating at once in the server,
      // whose cache had verified it (PRAGMA data_version, db/connect.ts).
      const keys = createApiKeysService({ handle: world.handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
      const victim = await keys.mint(world.orgId, CLI_ACTOR, { role: 'admin', name: 'victim', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
      const listKeys = () => httpRequest(`${first.url}/api/admin/api-keys`, { headers: { host: 'site.localhost', 'x-api-key': victim.plaintext } })
      assert.equal((await listKeys()).status, 200)
      const revoke = await runCliAsync(['key', 'revoke', '--org', 'site', victim.keyId], { cwd, env })
      assert.equal(revoke.code, 0, revoke.stderr)
      assert.equal((await listKeys()).status, 401)

      // Another process (here the test) writing while the server's requests begin their transactions: they wait for
      // its write lock (BEGIN IMMEDIATE) and apply after its commit, none answers 5xx ("database is locked").
      const other = new BetterSqlite3(world.databaseUrl.slice('sqlite:'.length), { timeout: 10_000 })
      t.after(() => other.close())
      const asOwner = { host: 'site.localhost', 'x-api-key': world.ownerKey, 'content-type': 'application/json' }
      assert.equal(
        (await httpRequest(`${first.url}/api/sites`, { method: 'POST', headers: asOwner, body: JSON.stringify({ code: 'W', name: 'Beside the CLI' }) })).status,
        201,
      )
      other.exec('begin immediate')
      other.prepare('update orgs set slug = slug where id = ?').run(world.orgId)
      // A controller create reads (the asset number) before it writes, in one transaction.
      const writes = Array.from({ length: 10 }, (_, i) =>
        httpRequest(`${first.url}/api/sites/W/controllers`, {
          method: 'POST',
          headers: asOwner,
          body: JSON.stringify({ name: 'PLC', platform: 1, assetNumber: `W-${i}`, connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.4' } }),
        }),
      )
      await sleep(500)
      other.exec('commit')
      const statuses = (await Promise.all(writes)).map((w) => w.status)
      console.log(`cell sqlite: 10 controller creates while another process holds the write lock -> ${JSON.stringify(statuses)}`)
      assert.deepEqual(statuses, Array(10).fill(201))

      await first.stop('SIGKILL')
      const after = await startServer({ cwd, env })
      await after.stop()
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: every unique rule, lock and state rule under ${RACERS} concurrent requests (two processes on PostgreSQL)`, () => {
    it('exactly the allowed requests succeed, the others get the documented 409/404/422, none a 5xx, and the database holds what the 2xx answers claim', async (t) => {
      const cell = await startCell(t, dialect, 'rules')
      const { world } = cell
      await seedSite(cell, ['P1', 'P2'])
      const controllerId = (JSON.parse((await cell.call(0, 'GET', '/api/sites/S1/controllers')).body) as { items: Array<{ id: string }> }).items[0]!.id
      const post = (path: string, body: unknown) => (i: number) => cell.call(i, 'POST', path, body)
      const one = async (rule: string, refusal: string, path: string, body: unknown, table: Parameters<typeof count>[1], where: Record<string, string>) => {
        const r = await race(cell, dialect, rule, [refusal], post(path, body))
        assert.equal(r.ok.length, 1, rule)
        assert.equal(await count(cell, table, { org_id: world.orgId, ...where }), 1, rule)
      }

      await one('site code', '409 Conflict', '/api/sites', { code: 'R1', name: 'Race' }, 'sites', { code: 'R1' })
      await one(
        'controller asset number',
        '409 Conflict',
        '/api/sites/S1/controllers',
        { name: 'PLC', platform: 1, assetNumber: 'RACE-1', connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.2' } },
        'controllers',
        { asset_number: 'RACE-1' },
      )
      await one(
        'instance id',
        '409 Conflict',
        '/api/sites/S1/instances',
        { id: 'R1', name: 'R1', typeId: 'conveyor', assetNumber: 'A-R1', controllerId },
        'instances',
        { id: 'R1' },
      )
      await one('electrical node id', '409 Conflict', '/api/sites/S1/electrical/nodes', { id: 'N1', name: 'Bus 1', nodeType: 0 }, 'electrical_nodes', {
        id: 'N1',
      })
      assert.equal((await cell.call(0, 'POST', '/api/sites/S1/electrical/nodes', { id: 'N2', name: 'Bus 2', nodeType: 0 })).status, 201)
      await one(
        'electrical edge (source, target, type)',
        '409 Conflict',
        '/api/sites/S1/electrical/edges',
        { sourceId: 'N1', targetId: 'N2', edgeType: 0 },
        'electrical_edges',
        { source_id: 'N1', target_id: 'N2' },
      )

      // A bound domain serves one organisation: the same domain asked for by two organisations at once.
      const other = await createOrgsService({ handle: world.handle, clock: systemClock }).provision('rivals')
      const keys = createApiKeysService({ handle: world.handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
      const rivalKey = (await keys.mint(other.id, CLI_ACTOR, { role: 'owner', name: 'owner', expiresAt: new Date(Date.now() + 86_400_000).toISOString() }))
        .plaintext
      const domains = await race(cell, dialect, 'domain binding across two organisations', ['409 Conflict'], (i) =>
        i % 4 < 2
          ? cell.call(i, 'POST', '/api/admin/orgs/rules/domains', { domain: 'plant.example.com' })
          : callAs(cell, i, 'rivals', rivalKey, 'POST', '/api/admin/orgs/rivals/domains', { domain: 'plant.example.com' }),
      )
      assert.equal(domains.ok.length, 1)
      assert.equal(await count(cell, 'domain_bindings', { domain: 'plant.example.com' }), 1)

      // Alarm state rules: one acknowledge and one shelve of an alarm succeed, the others are AlarmStateConflict.
      const raised = await cell.call(0, 'POST', '/api/sites/S1/alarms/events', {
        events: [{ eventId: 'rule-1', instanceId: 'P2', condition: 'Trip', priority: 'high', state: 'active', occurredAt: new Date().toISOString() }],
      })
      const alarmId = (JSON.parse(raised.body) as { results: Array<{ alarmId: string }> }).results[0]!.alarmId
      const acks = await race(
        cell,
        dialect,
        'alarm acknowledge',
        ['409 AlarmStateConflict'],
        post(`/api/sites/S1/alarms/${alarmId}/acknowledge`, { comment: 'seen' }),
      )
      assert.equal(acks.ok.length, 1)
      assert.equal(await count(cell, 'alarm_history', { org_id: world.orgId, alarm_id: alarmId, action: 'acknowledged' }), 1)
      const until = new Date(Date.now() + 3_600_000).toISOString()
      const shelves = await race(
        cell,
        dialect,
        'alarm shelve',
        ['409 AlarmStateConflict'],
        post(`/api/sites/S1/alarms/${alarmId}/shelve`, { comment: 'maintenance', until }),
      )
      assert.equal(shelves.ok.length, 1)
      assert.equal(await count(cell, 'alarm_history', { org_id: world.orgId, alarm_id: alarmId, action: 'shelved' }), 1)

      // Bulk acknowledge is per alarm: all 200, and the alarm is acknowledged by exactly one of them.
      const second = await cell.call(0, 'POST', '/api/sites/S1/alarms/events', {
        events: [{ eventId: 'rule-2', instanceId: 'P1', condition: 'Trip', priority: 'high', state: 'active', occurredAt: new Date().toISOString() }],
      })
      const secondId = (JSON.parse(second.body) as { results: Array<{ alarmId: string }> }).results[0]!.alarmId
      const bulkAcks = await race(cell, dialect, 'alarm bulk acknowledge', [], post('/api/sites/S1/alarms/acknowledge', { alarmIds: [secondId] }))
      assert.equal(bulkAcks.ok.length, RACERS)
      assert.equal(
        bulkAcks.ok.reduce((n, a) => n + (JSON.parse(a.body) as { acknowledged: number }).acknowledged, 0),
        1,
      )
      assert.equal(await count(cell, 'alarm_history', { org_id: world.orgId, alarm_id: secondId, action: 'acknowledged' }), 1)

      // Bulk create-or-replace of the same new instances: every request applies (200), each instance is created once.
      const bulkBody = ['B1', 'B2', 'B3', 'B4', 'B5'].map((id) => ({ id, name: id, typeId: 'conveyor', assetNumber: `A-${id}`, controllerId }))
      const bulks = await race(cell, dialect, 'instances bulk create-or-replace of the same 5 new ids', [], post('/api/sites/S1/instances/bulk', bulkBody))
      assert.equal(bulks.ok.length, RACERS)
      assert.equal(
        bulks.ok.reduce((n, a) => n + (JSON.parse(a.body) as { created: number }).created, 0),
        bulkBody.length,
      )
      for (const { id } of bulkBody) assert.equal(await count(cell, 'instances', { org_id: world.orgId, id }), 1)

      // Revoking one key: one 204, the others the uniform 404 (already revoked).
      const victim = await keys.mint(world.orgId, CLI_ACTOR, { role: 'member', name: 'victim', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
      const revokes = await race(cell, dialect, 'api key revoke', ['404 NotFound'], (i) => cell.call(i, 'DELETE', `/api/admin/api-keys/${victim.keyId}`))
      assert.equal(revokes.ok.length, 1)
      assert.equal(await count(cell, 'audit_events', { org_id: world.orgId, action: 'api_key.revoked', target: victim.keyId }), 1)

      // Check-then-write across rows: a controller deleted while instances are created on it. Either outcome holds
      // for each request, and no instance is left on a deleted controller.
      const ctl = await cell.call(0, 'POST', '/api/sites/S1/controllers', {
        name: 'PLC 9',
        platform: 1,
        assetNumber: 'RACE-9',
        connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.9' },
      })
      const ctlId = (JSON.parse(ctl.body) as { id: string }).id
      const inUse = await race(
        cell,
        dialect,
        'controller delete against instance creates on it',
        ['409 Conflict', '404 NotFound', '422 UnprocessableEntity'],
        (i) =>
          i % 2 === 0
            ? cell.call(i, 'DELETE', `/api/sites/S1/controllers/${ctlId}`)
            : cell.call(i, 'POST', '/api/sites/S1/instances', { id: `C${i}`, name: `C${i}`, typeId: 'conveyor', assetNumber: `A-C${i}`, controllerId: ctlId }),
      )
      const deleted = inUse.answers.filter((a, i) => i % 2 === 0 && a.status === 204).length
      const created = inUse.answers.filter((a, i) => i % 2 === 1 && a.status === 201).length
      assert.ok(deleted <= 1)
      assert.equal(await count(cell, 'controllers', { org_id: world.orgId, id: ctlId }), 1 - deleted)
      assert.equal(await count(cell, 'instances', { org_id: world.orgId, controller_id: ctlId }), created)
      assert.ok(deleted === 0 || created === 0, 'instances were created on a controller that was deleted')

      // The same for a node deleted while edges to it are created.
      assert.equal((await cell.call(0, 'POST', '/api/sites/S1/electrical/nodes', { id: 'N9', name: 'Bus 9', nodeType: 0 })).status, 201)
      const hasEdges = await race(cell, dialect, 'node delete against edge creates on it', ['409 Conflict', '404 NotFound', '422 UnprocessableEntity'], (i) =>
        i % 2 === 0
          ? cell.call(i, 'DELETE', '/api/sites/S1/electrical/nodes/N9')
          : cell.call(i, 'POST', '/api/sites/S1/electrical/edges', { sourceId: 'N9', targetId: 'N1', edgeType: i % 5 }),
      )
      const nodeGone = hasEdges.answers.filter((a, i) => i % 2 === 0 && a.status < 300).length
      const edges = await count(cell, 'electrical_edges', { org_id: world.orgId, source_id: 'N9' })
      assert.ok(nodeGone <= 1)
      assert.equal(await count(cell, 'electrical_nodes', { org_id: world.orgId, id: 'N9' }), 1 - nodeGone)
      assert.equal(edges, hasEdges.answers.filter((a, i) => i % 2 === 1 && a.status === 201).length)
      assert.ok(nodeGone === 0 || edges === 0, 'edges were created on a node that was deleted')

      // A site deleted while controllers are created in it.
      assert.equal((await cell.call(0, 'POST', '/api/sites', { code: 'S9', name: 'Doomed' })).status, 201)
      // Mostly creates, the deletes among them: some creates have found the site (404 otherwise) when it goes.
      const isDelete = (i: number) => i % 10 === 5
      const doomed = await race(cell, dialect, 'site delete against controller creates in it', ['404 NotFound', '409 ConfirmationRequired'], (i) =>
        isDelete(i)
          ? cell.call(i, 'DELETE', '/api/sites/S9?confirm=S9')
          : cell.call(i, 'POST', '/api/sites/S9/controllers', {
              name: 'PLC',
              platform: 1,
              assetNumber: `S9-${i}`,
              connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.3' },
            }),
      )
      const siteGone = doomed.answers.filter((a, i) => isDelete(i) && a.status === 204).length
      assert.ok(siteGone <= 1)
      assert.equal(await count(cell, 'sites', { org_id: world.orgId, code: 'S9' }), 1 - siteGone)
      if (siteGone === 1) assert.equal(await count(cell, 'controllers', { org_id: world.orgId, site_code: 'S9' }), 0)
      // Every 204 claims a deletion: the audit trail holds one per 204 (a delete that found the row gone is a 404).
      assert.equal(await count(cell, 'audit_events', { org_id: world.orgId, action: 'site.deleted', target: 'S9' }), siteGone)
    })

    it('a site deleted while every kind of record is written in it: each write is done before the delete or answers 404, none a 5xx, nothing left behind', async (t) => {
      const cell = await startCell(t, dialect, 'doomed')
      const { world } = cell
      for (let round = 0; round < 3; round++) {
        const code = `D${round}`
        assert.equal((await cell.call(0, 'POST', '/api/sites', { code, name: 'Doomed' })).status, 201)
        const ctl = await cell.call(0, 'POST', `/api/sites/${code}/controllers`, {
          name: 'PLC',
          platform: 1,
          assetNumber: 'PLC-1',
          connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
        })
        const controllerId = (JSON.parse(ctl.body) as { id: string }).id
        assert.equal(
          (await cell.call(0, 'POST', `/api/sites/${code}/instances`, { id: 'P1', name: 'P1', typeId: 'conveyor', assetNumber: 'A-P1', controllerId })).status,
          201,
        )
        for (const id of ['N0', 'NX'])
          assert.equal((await cell.call(0, 'POST', `/api/sites/${code}/electrical/nodes`, { id, name: id, nodeType: 0 })).status, 201)
        // Every kind of write under a site, the deletes among them (a tenth of the requests).
        const writes: Array<(i: number) => Promise<Answer>> = [
          (i) => cell.call(i, 'POST', `/api/sites/${code}/electrical/nodes`, { id: `N${i}`, name: `Bus ${i}`, nodeType: 0 }),
          (i) => cell.call(i, 'POST', `/api/sites/${code}/electrical/edges`, { sourceId: 'N0', targetId: 'NX', edgeType: i % 5 }),
          (i) => cell.call(i, 'POST', `/api/sites/${code}/instances`, { id: `I${i}`, name: `I${i}`, typeId: 'conveyor', assetNumber: `A-I${i}`, controllerId }),
          (i) =>
            cell.call(i, 'POST', `/api/sites/${code}/instances/bulk`, [
              { id: `B${i}`, name: `B${i}`, typeId: 'conveyor', assetNumber: `A-B${i}`, controllerId },
            ]),
          (i) =>
            cell.call(i, 'POST', `/api/sites/${code}/alarms/events`, {
              events: [
                { eventId: `e-${round}-${i}`, instanceId: 'P1', condition: `C${i}`, priority: 'high', state: 'active', occurredAt: new Date().toISOString() },
              ],
            }),
          (i) => cell.call(i, 'PUT', `/api/sites/${code}/controllers/${controllerId}`, { name: `PLC ${i}` }),
        ]
        const answers = await race(
          cell,
          dialect,
          `site delete against every kind of write in it (round ${round})`,
          ['404 NotFound', '409 Conflict', '422 UnprocessableEntity'],
          (i) => (i % 10 === 5 ? cell.call(i, 'DELETE', `/api/sites/${code}?confirm=${code}`) : writes[i % writes.length]!(i)),
        )
        const siteGone = answers.answers.filter((_, i) => i % 10 === 5).filter((a) => a.status === 204).length
        assert.equal(siteGone, 1, 'the site is deleted once')
        for (const table of ['controllers', 'instances', 'electrical_nodes', 'electrical_edges'] as const) {
          assert.equal(await count(cell, table, { org_id: world.orgId, site_code: code }), 0, `${table} left in the deleted site`)
        }
      }
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: historian batches under ${RACERS} concurrent requests (two processes on PostgreSQL)`, () => {
    it('the same two files uploaded at once make one batch (the others 409 with the earlier batch); one batch deleted at once is deleted once', async (t) => {
      const cell = await startCell(t, dialect, 'historian')
      const { world } = cell
      await seedHistorianSite(world.handle, world.orgId)
      const headers = { host: 'historian.localhost', 'x-api-key': world.ownerKey }
      const rows = trendRows(20, Date.parse('2026-01-01T00:00:00Z'))
      const uploads = await race(cell, dialect, 'historian upload of the same two files', ['409 Conflict'], async (i) => {
        const upload = startHistorianUpload(cell.servers[i % cell.servers.length]!.url, headers, rows, { end: true })
        const status = await upload.done
        return { status, body: upload.answer().slice(String(status).length + 1), server: i % cell.servers.length }
      })
      const batches = await world.handle.db.selectFrom('historian_batches').select(['id', 'status']).where('org_id', '=', world.orgId).execute()
      const complete = batches.filter((b) => b.status === 'complete')
      assert.equal(uploads.ok.length, 1)
      assert.equal(complete.length, 1)
      assert.equal((JSON.parse(uploads.ok[0]!.body) as { id: string }).id, complete[0]!.id)

      const batchId = complete[0]!.id
      const deletes = await race(cell, dialect, 'historian batch delete', ['404 NotFound'], (i) =>
        cell.call(i, 'DELETE', `/api/historian/import-batches/${batchId}`),
      )
      assert.equal(deletes.ok.length, 1)
      assert.equal(await count(cell, 'audit_events', { org_id: world.orgId, action: 'historian.batch.deleted', target: batchId }), 1)
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: site users under ${RACERS} concurrent requests (site mode; two processes on PostgreSQL)`, () => {
    it('one e-mail added at once makes one user (the others 409); two owners removed at once leave one owner (the others 409 LastSiteOwner or 404)', async (t) => {
      const cell = await startCell(t, dialect, 'plant', 'site')
      const { world } = cell
      const user = (email: string, siteRole: string) => ({ email, displayName: 'Operator', siteRole, pin: '482913' })
      const adds = await race(cell, dialect, 'site user e-mail', ['409 Conflict'], (i) =>
        cell.call(i, 'POST', '/api/site/users', user('same@plant.example', 'member')),
      )
      assert.equal(adds.ok.length, 1)
      const users = () => world.handle.db.selectFrom('site_users').select(['id', 'email', 'site_role']).where('org_id', '=', world.orgId).execute()
      assert.equal((await users()).filter((u) => u.email === 'same@plant.example').length, 1)

      const owners = await Promise.all(
        ['a', 'b'].map(
          async (name) => JSON.parse((await cell.call(0, 'POST', '/api/site/users', user(`${name}@plant.example`, 'owner'))).body) as { id: string },
        ),
      )
      const removals = await race(cell, dialect, 'last site owner (two owners removed at once)', ['409 Conflict', '404 NotFound'], (i) =>
        cell.call(i, 'DELETE', `/api/site/users/${owners[i % 2]!.id}`),
      )
      assert.equal(removals.ok.length, 1)
      assert.equal((await users()).filter((u) => u.site_role === 'owner').length, 1)
      assert.equal(await count(cell, 'audit_events', { org_id: world.orgId, action: 'site_user.removed' }), 1)
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: AI limits under ${RACERS} concurrent requests (two processes on PostgreSQL)`, () => {
    it('requestsPerMinute of a tier admits exactly that many of the requests sent at once; the others 429 RateLimited, reaching no provider', async (t) => {
      const box = await startFakeOpenAi()
      t.after(() => box.close())
      const dir = mkdtempSync(join(tmpdir(), 'sitegrid-cell-ai-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      const file = join(dir, 'ai.json')
      const allowed = 10
      writeFileSync(
        file,
        JSON.stringify({
          providers: [{ name: 'box', baseUrl: box.baseUrl, trusted: true, allowPrivateNetwork: true, timeoutMs: 30_000, maxRetries: 0 }],
          tiers: [{ name: 'fast', provider: 'box', model: 'qwen-local', maxTokensCeiling: 512, requestsPerMinute: allowed, tokensPerDay: 1_000_000 }],
          defaultTier: 'fast',
        }),
      )
      const cell = await startCell(t, dialect, 'thinkers', 'cloud', { SITEGRID_AI_CONFIG_FILE: file })
      const asks = await race(cell, dialect, `AI requestsPerMinute ${allowed}`, ['429 RateLimited'], (i) =>
        cell.call(i, 'POST', '/api/ai/complete', { prompt: `question ${i}` }),
      )
      const usage = await cell.world.handle.db.selectFrom('ai_usage').select('id').where('org_id', '=', cell.world.orgId).execute()
      assert.equal(asks.ok.length, allowed)
      assert.equal(usage.length, allowed)
      assert.equal(box.requests.length, allowed)
    })
  })
}
