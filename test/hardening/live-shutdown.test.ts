// Issues 30 and 29, hostile checks of the live push and heartbeat paths with real `sitegrid serve` processes.
// 1. SIGTERM with pushes on the wire: GATEWAYS gateways (each its own key, controller and instance) push batches of
//    SAMPLES samples back to back over keep-alive connections (on SQLite the group commit is busy), every third turn a
//    heartbeat, when SIGTERM arrives. Then:
//    - the process exits 0 within the grace period;
//    - every push answered 200 is stored exactly: its samples are readable after a restart;
//    - every push not answered stored nothing or all of it, and its resend (same batchKey) after the restart is
//      answered with SAMPLES stored, once: never half a push, never twice;
//    - every heartbeat answered 200 is stored (the stored error count is at least the last one answered).
// 2. Two processes on one PostgreSQL: a tag mapping changed through process A is honoured by the very next push
//    through process B (each process keeps tag mappings per site, invalidated by the site's equipment version).
import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, it } from 'node:test'
import { CLI_ACTOR } from '../../src/identity.ts'
import { systemClock } from '../../src/clock.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { KEY_SECRET, sleep, testDialects, type TestDialect } from '../harness.ts'
import { startServer, type Server } from '../cli/process.ts'
import { seedPlant, waitHealthy } from '../support/historian-upload.ts'
import { processWorld, type ProcessWorld } from './process-support.ts'
import type { TestContext } from 'node:test'

const GATEWAYS = 8
const SAMPLES = 50
const GRACE_MS = 20_000
/** The sequence number of each gateway's push on a new connection, queued in the listen backlog at SIGTERM. */
const LATE_SEQ = 50_000
/** SIGTERM once this many pushes were answered. */
const PUSHES_BEFORE_SIGTERM = 120

interface Gateway {
  edgeId: string
  controllerId: string
  instanceId: string
  key: string
}

/** processWorld plus one site whose GATEWAYS controllers each sit on their own edge, with one instance mapping tag `v`. */
async function liveWorld(t: TestContext, dialect: TestDialect, slug: string, env: Record<string, string> = {}) {
  const w = await processWorld(t, dialect, slug, env)
  const now = Date.now()
  const instances = Array.from({ length: GATEWAYS }, (_, g) => ({ id: `ins_${g}` }))
  await seedPlant(w.handle.db, w.orgId, { siteCode: 'plant-1', instances, at: now })
  const plc = await w.handle.db.selectFrom('controllers').selectAll().where('org_id', '=', w.orgId).executeTakeFirstOrThrow()
  const keys = createApiKeysService({ handle: w.handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
  const gateways: Gateway[] = []
  for (let g = 0; g < GATEWAYS; g++) {
    const controllerId = `plc-gw${g}`
    await w.handle.db
      .insertInto('controllers')
      .values({ ...plc, id: controllerId, asset_number: `A-gw${g}`, ip_address: `10.0.1.${g + 1}`, edge_id: `gw-${g}` })
      .execute()
    await w.handle.db
      .updateTable('instances')
      .set({ controller_id: controllerId, tag_mappings: JSON.stringify({ v: 'N7:0' }), tag_count: 1 })
      .where('org_id', '=', w.orgId)
      .where('id', '=', `ins_${g}`)
      .execute()
    const key = await keys.mint(w.orgId, CLI_ACTOR, { role: 'member', name: `gw-${g}`, expiresAt: new Date(now + 86_400_000).toISOString() })
    gateways.push({ edgeId: `gw-${g}`, controllerId, instanceId: `ins_${g}`, key: key.plaintext })
  }
  return { w, gateways }
}

interface Answer {
  /** When the request was written whole. */
  writtenAt?: number
  status?: number
  body?: Record<string, unknown>
  error?: string
}

function call(
  server: Server,
  agent: Agent | false,
  w: ProcessWorld,
  key: string,
  method: string,
  path: string,
  body: unknown,
  onWritten?: () => void,
): Promise<Answer> {
  let writtenAt: number | undefined
  return new Promise<Omit<Answer, 'writtenAt'>>((resolve) => {
    const headers = { host: `${w.slug}.localhost`, 'x-api-key': key, 'content-type': 'application/json' }
    const req = request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
      })
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, body: JSON.parse(text) as Record<string, unknown> })
        } catch {
          resolve({ status: res.statusCode, error: 'incomplete body' })
        }
      })
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
    })
    req.on('finish', () => {
      writtenAt = performance.now()
      onWritten?.()
    })
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }))
    req.end(body === undefined ? undefined : JSON.stringify(body))
  }).then((answer) => ({ ...answer, writtenAt }))
}

/** Push `seq` of gateway `g`: SAMPLES samples at timestamps of its own (no two pushes share one). */
const pushBody = (g: Gateway, seq: number, t0: number) => ({
  samples: Array.from({ length: SAMPLES }, (_, i) => ({
    instanceId: g.instanceId,
    tagKey: 'v',
    ts: new Date(t0 + seq * SAMPLES + i).toISOString(),
    value: seq,
  })),
})
const pushPath = (batchKey: string) => `/api/sites/plant-1/historian/samples?batchKey=${encodeURIComponent(batchKey)}`
const heartbeat = (g: Gateway, seq: number) => ({
  gatewayVersion: '1.0.0',
  controllers: [{ controllerId: g.controllerId, communication: 'ok', lastGoodPollAt: new Date().toISOString(), errorCount: seq }],
})

const tally = (items: unknown[]) =>
  [...items.reduce((m: Map<unknown, number>, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<unknown, number>())]
    .map(([k, n]) => `${n}×${String(k)}`)
    .join(', ') || 'none'

/**
 * Samples stored per batchKey and the batch rows' own counts. A gateway's pushes of a window share one open batch
 * (service/open-batch.ts), so a key's share is its batch's points (and its row's count) less what its other keys'
 * stored answers say they stored: a push stored in part, or a count lost, leaves some key's share off.
 */
async function storedByKey(w: ProcessWorld): Promise<Map<string, { points: number; counted: number }>> {
  const keys = await w.handle.db.selectFrom('historian_live_batches').select(['batch_key', 'batch_id', 'answer']).where('org_id', '=', w.orgId).execute()
  const batches = await w.handle.db
    .selectFrom('historian_batches as b')
    .leftJoin('historian_points as p', (j) => j.onRef('p.org_id', '=', 'b.org_id').onRef('p.batch_id', '=', 'b.id'))
    .select((eb) => ['b.id', 'b.samples_stored', eb.fn.count<number>('p.ts').as('n')])
    .where('b.org_id', '=', w.orgId)
    .groupBy(['b.id', 'b.samples_stored'])
    .execute()
  const stored = new Map(keys.map((k) => [k.batch_key, (JSON.parse(k.answer) as { stored: number }).stored]))
  const answeredIn = new Map<string, number>()
  for (const k of keys) answeredIn.set(k.batch_id, (answeredIn.get(k.batch_id) ?? 0) + stored.get(k.batch_key)!)
  const batch = new Map(batches.map((b) => [b.id, { points: Number(b.n), counted: Number(b.samples_stored) }]))
  return new Map(
    keys.map((k) => {
      const others = answeredIn.get(k.batch_id)! - stored.get(k.batch_key)!
      const b = batch.get(k.batch_id)!
      return [k.batch_key, { points: b.points - others, counted: b.counted - others }]
    }),
  )
}

for (const dialect of testDialects()) {
  describe(`${dialect}: live pushes and heartbeats at SIGTERM`, () => {
    it(`SIGTERM with ${GATEWAYS} gateways pushing and reporting (the server paused, pushes and heartbeats waiting in its sockets and backlog): exit 0 in the grace period; each answered push stored whole, each unanswered one stored whole or not at all and stored once by its resend; each answered heartbeat stored`, async (t) => {
      const { w, gateways } = await liveWorld(t, dialect, 'livedrain', { SITEGRID_SHUTDOWN_GRACE_MS: String(GRACE_MS) })
      let server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      const t0 = Date.now() - 3_600_000
      let exitedAt: number | undefined
      const exited = new Promise<number | null>((resolve) =>
        server.child.once('exit', (code) => {
          exitedAt = performance.now()
          resolve(code)
        }),
      )
      const pushes: Array<{ g: Gateway; seq: number; batchKey: string; answer: Answer }> = []
      const heartbeats: Array<{ batchKey: string; answer: Answer }> = []
      const beats = new Map<string, { answered: number; sent: number }>()
      const agents: Agent[] = []
      t.after(() => {
        for (const a of agents) a.destroy()
      })
      const loops = gateways.map(async (g) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 })
        agents.push(agent)
        const beat = { answered: -1, sent: -1 }
        beats.set(g.controllerId, beat)
        for (let seq = 0; exitedAt === undefined; seq++) {
          const batchKey = `${g.edgeId}-${seq}`
          const answer = await call(server, agent, w, g.key, 'POST', pushPath(batchKey), pushBody(g, seq, t0))
          pushes.push({ g, seq, batchKey, answer })
          if (seq % 3 === 2) {
            beat.sent = seq
            const hb = await call(server, agent, w, g.key, 'PUT', `/api/sites/plant-1/edges/${g.edgeId}/status`, heartbeat(g, seq))
            heartbeats.push({ batchKey: `${g.edgeId} heartbeat ${seq}`, answer: hb })
            if (hb.status === 200) beat.answered = seq
          }
          if (answer.error !== undefined) await sleep(5)
        }
      })
      for (let i = 0; i < 1200 && pushes.filter((p) => p.answer.status === 200).length < PUSHES_BEFORE_SIGTERM; i++) await sleep(50)
      // Paused (SIGSTOP, a server too busy to read its sockets), each gateway's next push and heartbeat wait in its
      // socket, and a push of each gateway on a new connection waits in the listen backlog, when SIGTERM arrives.
      server.child.kill('SIGSTOP')
      let lateWritten = 0
      const late = gateways.map(async (g) => {
        const batchKey = `${g.edgeId}-late`
        const answer = await call(server, false, w, g.key, 'POST', pushPath(batchKey), pushBody(g, LATE_SEQ, t0), () => lateWritten++)
        pushes.push({ g, seq: LATE_SEQ, batchKey, answer })
      })
      for (let i = 0; i < 1000 && lateWritten < GATEWAYS; i++) await sleep(5)
      await sleep(200)
      const sigtermAt = performance.now()
      server.child.kill('SIGTERM')
      server.child.kill('SIGCONT')
      const code = await exited
      await Promise.all([...loops, ...late])

      const answered = pushes.filter((p) => p.answer.status === 200)
      const sentBefore = [...pushes, ...heartbeats].filter((p) => p.answer.writtenAt !== undefined && p.answer.writtenAt < sigtermAt)
      assert.deepEqual(
        heartbeats.filter((p) => p.answer.status !== 200 && p.answer.error === undefined).map((p) => [p.batchKey, p.answer.status, p.answer.body]),
        [],
        'a heartbeat is answered 200 or fails at the connection',
      )
      const unanswered = pushes.filter((p) => p.answer.status !== 200)
      assert.deepEqual(
        unanswered.filter((p) => p.answer.error === undefined).map((p) => [p.answer.status, p.answer.body]),
        [],
        'a push is answered 200 or fails at the connection',
      )
      for (const p of answered)
        assert.deepEqual([p.answer.body!.stored, p.answer.body!.refused, p.answer.body!.replayed], [SAMPLES, 0, false], `push ${p.batchKey} answered whole`)

      // After a restart: answered pushes are stored whole; unanswered ones are whole or absent.
      server = await startServer({ cwd: w.cwd, env: w.env })
      await waitHealthy(server)
      const before = await storedByKey(w)
      const half = [...before].filter(([, s]) => s.points !== SAMPLES || s.counted !== SAMPLES)
      assert.deepEqual(half, [], 'no push stored in part')
      assert.deepEqual(
        answered.filter((p) => !before.has(p.batchKey)).map((p) => p.batchKey),
        [],
        'every push answered 200 is stored',
      )
      const committedUnanswered = unanswered.filter((p) => before.has(p.batchKey)).length
      // Resends of the unanswered pushes: each stores its samples once (or answers what the first stored).
      const resends = await Promise.all(unanswered.map((p) => call(server, false, w, p.g.key, 'POST', pushPath(p.batchKey), pushBody(p.g, p.seq, t0))))
      assert.deepEqual(
        resends.map((r) => [r.status, r.body?.stored]),
        resends.map(() => [200, SAMPLES]),
        'each resend after the restart answers the whole push',
      )
      assert.deepEqual(
        unanswered.filter((p, i) => resends[i]!.body!.replayed !== before.has(p.batchKey)).map((p) => p.batchKey),
        [],
        'a resend replays exactly the pushes already committed',
      )
      const after = await storedByKey(w)
      const points = await w.handle.db
        .selectFrom('historian_points')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', w.orgId)
        .executeTakeFirstOrThrow()
      assert.equal(after.size, pushes.length, 'every push is stored once')
      assert.equal(Number(points.n), pushes.length * SAMPLES, 'no sample stored twice or lost')
      // One answered push read back through the API after the restart.
      const last = answered.at(-1)!
      const read = await call(
        server,
        false,
        w,
        w.ownerKey,
        'GET',
        `/api/sites/plant-1/historian/series?instanceId=${last.g.instanceId}&tag=v&from=${new Date(t0 + last.seq * SAMPLES).toISOString()}&to=${new Date(t0 + (last.seq + 1) * SAMPLES).toISOString()}`,
        undefined,
      )
      assert.equal(read.status, 200, JSON.stringify(read.body))
      assert.equal((read.body!.samples as unknown[]).length, SAMPLES, 'an answered push reads back whole')

      const reported = await w.handle.db.selectFrom('edge_controller_status').select(['controller_id', 'error_count']).where('org_id', '=', w.orgId).execute()
      const storedCount = new Map(reported.map((r) => [r.controller_id, Number(r.error_count)]))
      const lostBeats = [...beats].filter(([id, b]) => b.answered >= 0 && !((storedCount.get(id) ?? -1) >= b.answered && storedCount.get(id)! <= b.sent))
      console.log(
        `# live shutdown ${dialect}: ${pushes.length} pushes (${sentBefore.length} pushes and heartbeats written before SIGTERM, ${GATEWAYS} of them on new connections in the backlog; ${answered.length} answered, ${unanswered.length} not: ${tally(unanswered.map((p) => p.answer.error))}, ${committedUnanswered} of them committed), heartbeats answered ${[...beats.values()].filter((b) => b.answered >= 0).length}/${GATEWAYS} gateways; exit ${code} ${(exitedAt! - sigtermAt).toFixed(0)} ms after SIGTERM`,
      )
      assert.deepEqual(lostBeats, [], 'every heartbeat answered 200 is stored')
      assert.deepEqual(
        sentBefore.filter((p) => p.answer.status !== 200).map((p) => [p.batchKey, p.answer.status ?? p.answer.error]),
        [],
        'every push and heartbeat written before SIGTERM is answered 200',
      )
      assert.equal(code, 0, 'drained and exited 0 within the grace period')
    })
  })
}

// Two processes share a PostgreSQL database (SQLite is one process's file).
if (testDialects().includes('postgres'))
  describe('postgres: tag mappings across two serve processes', () => {
    it('a tag mapping changed through process A is honoured by the next push through process B, added and removed', async (t) => {
      const { w, gateways } = await liveWorld(t, 'postgres', 'livetags')
      const [a, b] = [await startServer({ cwd: w.cwd, env: w.env }), await startServer({ cwd: w.cwd, env: w.env })]
      t.after(() => Promise.all([a.stop('SIGKILL'), b.stop('SIGKILL')]))
      await Promise.all([waitHealthy(a), waitHealthy(b)])
      const g = gateways[0]!
      const t0 = Date.now() - 60_000
      let n = 0
      const pushW = async (server: Server) => {
        const seq = n++
        const r = await call(server, false, w, g.key, 'POST', pushPath(`tags-${seq}`), {
          samples: [
            { instanceId: g.instanceId, tagKey: 'v', ts: new Date(t0 + seq).toISOString(), value: 1 },
            { instanceId: g.instanceId, tagKey: 'w', ts: new Date(t0 + seq).toISOString(), value: 2 },
          ],
        })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        return [r.body!.stored, r.body!.refused]
      }
      const map = async (tagMappings: Record<string, string>) => {
        const r = await call(a, false, w, w.ownerKey, 'PUT', `/api/sites/plant-1/instances/${g.instanceId}`, { tagMappings })
        assert.equal(r.status, 200, JSON.stringify(r.body))
      }
      // B keeps the site's mappings: v only.
      assert.deepEqual(await pushW(b), [1, 1])
      assert.deepEqual(await pushW(b), [1, 1])
      await map({ v: 'N7:0', w: 'N7:1' })
      assert.deepEqual(await pushW(b), [2, 0], 'a tag mapped through A is accepted through B at once')
      await map({ w: 'N7:1' })
      assert.deepEqual(await pushW(b), [1, 1], 'a tag unmapped through A is refused through B at once')
      assert.deepEqual(await pushW(a), [1, 1])
    })
  })
