// Concurrency in a cell: two `sitegrid serve` processes on one PostgreSQL (as the app role), many requests at once
// split over both. Every answer is a documented one (never a 5xx for a mere concurrent writer) and the database holds
// exactly what the 2xx answers claim. SQLite serves a file from one process (a second is refused at start-up, tested
// here): there the same requests go at once to that one process.
import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { httpRequest, runCliAsync, startServer, type Server } from '../cli/process.ts'
import { CLI_ACTOR } from '../../src/auth/principal.ts'
import { systemClock } from '../../src/clock.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { KEY_SECRET, sleep, testDialects, type TestDialect } from '../harness.ts'
import { processWorld, type ProcessWorld } from './process-support.ts'

interface Answer { status: number; body: string; server: number }

interface Cell {
  world: ProcessWorld
  servers: Server[]
  /** Request `i` goes to process `i % servers.length`. */
  call: (i: number, method: string, path: string, body?: unknown, key?: string) => Promise<Answer>
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

async function startCell(t: TestContext, dialect: TestDialect, slug: string): Promise<Cell> {
  // info: the alarm service logs each retry of a transaction that lost a race (counted in the figures).
  const world = await processWorld(t, dialect, slug, { SITEGRID_MODE: 'cloud', SITEGRID_LOG_LEVEL: 'info' })
  const processes = dialect === 'postgres' ? 2 : 1
  const servers = await Promise.all(Array.from({ length: processes }, () => startServer({ cwd: world.cwd, env: world.env })))
  t.after(async () => {
    for (const s of servers) await s.stop()
  })
  const call = (i: number, method: string, path: string, body?: unknown, key = world.ownerKey) => new Promise<Answer>((resolve, reject) => {
    const server = i % servers.length
    const headers: Record<string, string> = { host: `${slug}.localhost`, 'x-api-key': key }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const req = request(`${servers[server]!.url}${path}`, { method, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => { text += d })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, server }))
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
  return { world, servers, call }
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
  return answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${a.body}`).join('\n')
}

async function seedSite(cell: Cell, instanceIds: string[]): Promise<void> {
  const site = await cell.call(0, 'POST', '/api/sites', { code: 'S1', name: 'Plant' })
  assert.equal(site.status, 201, site.body)
  const ctl = await cell.call(0, 'POST', '/api/sites/S1/controllers', { name: 'PLC', platform: 1, assetNumber: 'PLC-1', connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' } })
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
        const held = await trx.updateTable('alarms').set((eb) => ({ version: eb('version', '+', 1) }))
          .where('org_id', '=', cell.world.orgId).where('active_key', 'is not', null).executeTakeFirst()
        assert.equal(Number(held.numUpdatedRows), 1)
        answers ??= send()
        for (let poll = 0; poll < 400 && await lockWaiters(cell) < 1; poll++) await sleep(25)
      })
    }
    return answers!
  }
}

/** Server connections of this database waiting for a lock (the owner's connection sees every role's activity). */
async function lockWaiters(cell: Cell): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(cell.world.handle.db)
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
      return { eventId: `${t0}-${n}`, instanceId: 'P1', condition: 'HighTemp', priority: 'high', state: e % 2 === 0 ? 'active' : 'normal', occurredAt: new Date(t0 + n * 100).toISOString() }
    }),
  }))
  const before = await countEvents(cell.world)
  const retriesBefore = retriesSeen(cell)
  const answers = await fire(() => Promise.all(bodies.map((body, i) => cell.call(i, 'POST', '/api/sites/S1/alarms/events', body))))
  const after = await countEvents(cell.world)
  const ok = answers.filter((a) => a.status === 200)
  const accepted = ok.reduce((sum, a) => sum + (JSON.parse(a.body) as { accepted: number }).accepted, 0)
  const sent = batches * perBatch
  console.log(`cell ${dialect}: alarm events, ${batches} concurrent batches x ${perBatch} events of one source over ${cell.servers.length} process(es)${fire === atOnce ? '' : ' while another writer rewrites the alarm 8 times'} -> statuses ${JSON.stringify(tally(answers))}, events sent ${sent}, accepted in 2xx ${accepted}, stored ${after.rows - before.rows} (distinct ${after.distinct - before.distinct}), retries seen ${retriesSeen(cell) - retriesBefore}`)
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

if (testDialects().includes('sqlite')) {
  describe('sqlite: one server process per file', () => {
    it('a second `sitegrid serve` on a served SQLite file is refused at start-up naming the first; CLI commands still work beside it; the file is free again once the server ends, SIGKILL included', async (t) => {
      const world = await processWorld(t, 'sqlite', 'site', { SITEGRID_MODE: 'cloud' })
      const { cwd, env } = world
      const first = await startServer({ cwd, env })
      t.after(() => first.stop('SIGKILL'))

      const second = await startServer({ cwd, env }).then((s) => s, (err: Error) => err)
      if (!(second instanceof Error)) await second.stop()
      assert.ok(second instanceof Error, 'the second server started')
      assert.match(second.message, new RegExp(`sitegrid serve: the SQLite database \\S+ is already served by process ${first.child.pid} \\(started \\S+ in ${cwd}\\)`))
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

      await first.stop('SIGKILL')
      const after = await startServer({ cwd, env })
      await after.stop()
    })
  })
}
