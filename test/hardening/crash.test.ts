// Issue 14, crash consistency: a real server process is killed with SIGKILL at a random moment (seeded; the seed is
// printed) while a historian import and a tenant import run together, then restarted: ROUNDS rounds per database
// (SITEGRID_CRASH_ROUNDS, default 20; SITEGRID_CRASH_SEED replays a run). The server is the pre-bundled `sitegrid`
// (test/support/server-bundle.ts), so a restart costs about a second, not the several of loading the sources through tsx.
//
// One calibration round first runs both imports to the end without a kill (they must succeed, and it measures how
// long they take, T). Each kill round then streams both uploads in paced chunks (the historian form and the tenant
// package, then the package's apply) and kills at a moment drawn from its own slice of [0, 1.25 T) (stratified: the
// slices cover the window once, in a seeded random order), so kills land mid-stream, mid-commit and after the answer.
// After every restart, checked and counted: 0 partial historian batches (a complete batch holds exactly its
// `samplesStored` = SAMPLES samples, read back through the series API too; any other holds none, and a failed one
// says so: samplesStored 0), the tenant import
// all or nothing (its sites all there or none of them), SQLite `PRAGMA integrity_check` = ok, 0 batches left `running`.
// Sample counts go through the HTTP API and historianCounts (test/support/historian-upload.ts, shared with the
// historian's own kill test), the one place in the suites that knows the historian's storage layout.
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { rowLevelSecurityInTests, sleep, testDialects } from '../harness.ts'
import { startServer, type Server } from '../cli/process.ts'
import { TEST_APP_ROLE } from '../postgres.ts'
import { HISTORIAN_SITE, historianCounts, seedHistorianSite, startHistorianUpload, trendRows, waitHealthy, type Upload } from '../support/historian-upload.ts'
import { serverBundle } from '../support/server-bundle.ts'
import { countFromEnv, processWorld, rawRequest, seedFromEnv, seededRandom, serverRoles, type ProcessWorld } from './process-support.ts'

const ROUNDS = countFromEnv('SITEGRID_CRASH_ROUNDS', 20)
const SAMPLES = countFromEnv('SITEGRID_CRASH_SAMPLES', 6000)
const TENANT_SITES = countFromEnv('SITEGRID_CRASH_SITES', 600)
/** Each upload body is written in this many chunks, PACE_MS apart, so that it is in flight for a while. */
const CHUNKS = 10
const PACE_MS = 40
const DAY_MS = 86_400_000

type Phase = 'streaming' | 'processing' | 'answered'

interface Round {
  historian: Upload
  /** Set once the whole historian form was written. */
  historianSent: () => boolean
  /** Resolves with `stage <status> apply <status>` (0: cut off by the kill, or never sent). */
  tenant: Promise<string>
  tenantPhase: () => Phase
  /** Both imports answered. */
  settled: () => boolean
}

async function bulkSites(w: ProcessWorld): Promise<number> {
  const row = await w.handle.db
    .selectFrom('sites')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', w.orgId)
    .where('code', 'like', 'bulk-%')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function integrity(w: ProcessWorld, dialect: string): Promise<string> {
  if (dialect !== 'sqlite') return 'ok'
  const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(w.handle.db)
  return rows.map((r) => r.integrity_check).join(',')
}

function chunksOf<T extends string | Buffer>(whole: T): T[] {
  const size = Math.ceil(whole.length / CHUNKS)
  return Array.from({ length: CHUNKS }, (_, i) => whole.slice(i * size, (i + 1) * size) as T)
}

/** Starts both imports: the historian form and the tenant package each written in CHUNKS paced chunks, then the apply. */
function startRound(server: Server, w: ProcessWorld, host: Record<string, string>, pkg: Buffer, day: number): Round {
  const rows = chunksOf(trendRows(SAMPLES, Date.UTC(2024, 0, 1) + day * DAY_MS))
  const historian = startHistorianUpload(server.url, host, rows[0]!, { end: false })
  let historianSent = false
  let historianAnswered = false
  void historian.done.then(() => {
    historianAnswered = true
  })
  void (async () => {
    for (const chunk of rows.slice(1)) {
      await sleep(PACE_MS)
      if (historian.req.destroyed) return
      historian.req.write(chunk)
    }
    if (historian.req.destroyed) return
    historian.finish()
    historianSent = true
  })()

  let tenantPhase: Phase = 'streaming'
  const tenant = (async () => {
    const staged = await new Promise<number>((resolve) => {
      // node:http, paced by hand (rawRequest sends its body at once).
      const req = rawStream(`${server.url}/api/admin/orgs/${w.slug}/tenant/import/package`, { ...host, 'content-type': 'application/gzip' }, resolve)
      void (async () => {
        for (const chunk of chunksOf(pkg)) {
          if (req.destroyed) return
          req.write(chunk)
          await sleep(PACE_MS)
        }
        if (!req.destroyed) req.end()
        tenantPhase = 'processing'
      })()
    })
    if (staged !== 200) {
      tenantPhase = 'answered'
      return `stage ${staged} apply 0`
    }
    const applied = await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/import?force=true`, { method: 'POST', headers: host }).then(
      (r) => r.status,
      () => 0,
    )
    tenantPhase = 'answered'
    return `stage ${staged} apply ${applied}`
  })()
  let tenantDone = false
  void tenant.then(() => {
    tenantDone = true
  })
  return {
    historian,
    historianSent: () => historianSent,
    tenant,
    tenantPhase: () => tenantPhase,
    settled: () => historianAnswered && tenantDone,
  }
}

/** A streamed request whose status (0 if the connection died) resolves `done`; the caller writes and ends it. */
function rawStream(url: string, headers: Record<string, string>, done: (status: number) => void) {
  const req = request(url, { method: 'PUT', headers })
  req.on('error', () => done(0))
  req.on('response', (res) => {
    res.resume()
    res.on('end', () => done(res.statusCode ?? 0))
    res.on('error', () => done(0))
    res.on('aborted', () => done(0))
  })
  return req
}

/** Samples of tag `p` on `day` that the series API returns (complete batches only), via a one-day count bucket. */
async function seriesCount(server: Server, host: Record<string, string>, day: number): Promise<number> {
  const from = new Date(Date.UTC(2024, 0, 1) + day * DAY_MS).toISOString()
  const to = new Date(Date.UTC(2024, 0, 1) + (day + 1) * DAY_MS).toISOString()
  let count = 0
  for (const tag of ['p', 'q']) {
    const res = await rawRequest(`${server.url}/api/sites/${HISTORIAN_SITE}/historian/series?instanceId=ins_pump&tag=${tag}&bucket=1d&from=${from}&to=${to}`, {
      headers: host,
    })
    assert.equal(res.status, 200, res.body.toString())
    const body = JSON.parse(res.body.toString()) as { buckets: Array<{ count: number }> }
    count += body.buckets.reduce((n, b) => n + b.count, 0)
  }
  return count
}

interface ApiBatch {
  id: string
  status: string
  samplesStored: number
  timeRange: { from: string } | null
}

async function apiBatches(server: Server, host: Record<string, string>): Promise<ApiBatch[]> {
  const res = await rawRequest(`${server.url}/api/historian/import-batches?siteId=${HISTORIAN_SITE}&limit=200`, { headers: host })
  assert.equal(res.status, 200, res.body.toString())
  return (JSON.parse(res.body.toString()) as { items: ApiBatch[] }).items
}

for (const dialect of testDialects()) {
  describe(`${dialect}: crash consistency under SIGKILL`, () => {
    it(`killed at a random moment during a historian import and a tenant import, ${ROUNDS} times: 0 partial batches, 0 partial tenant imports, integrity ok, 0 left running`, async (t) => {
      const fileStarted = performance.now()
      const seed = seedFromEnv('SITEGRID_CRASH_SEED')
      const random = seededRandom(seed)
      console.log(
        `# crash ${dialect}: seed ${seed} (SITEGRID_CRASH_SEED=${seed} replays it), ${ROUNDS} rounds, ${SAMPLES} samples and ${TENANT_SITES} sites per round`,
      )
      const [w, bundle] = await Promise.all([processWorld(t, dialect, 'crash'), serverBundle()])
      const host = { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey }
      await seedHistorianSite(w.handle, w.orgId)
      // The tenant package: the organisation with TENANT_SITES more sites, which are then removed, so that applying it
      // creates them all in its one transaction.
      const now = Date.now()
      for (let i = 0; i < TENANT_SITES; i += 300) {
        await w.handle.db
          .insertInto('sites')
          .values(
            Array.from({ length: Math.min(300, TENANT_SITES - i) }, (_, j) => ({
              org_id: w.orgId,
              code: `bulk-${String(i + j).padStart(5, '0')}`,
              name: `Bulk ${i + j}`,
              description: null,
              location: null,
              time_zone: 'UTC',
              status: 0,
              created_at: now,
              updated_at: now,
            })),
          )
          .execute()
      }
      let server: Server = await startServer({ cwd: w.cwd, env: w.env, bundle })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      const pkg = await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })
      assert.equal(pkg.status, 200, pkg.body.toString())
      if (dialect === 'postgres' && rowLevelSecurityInTests()) {
        // The server is the non-owner application role under row-level security; the test's own checks are the owner.
        const roles = await serverRoles(w)
        console.log(`# crash ${dialect}: the server's database roles: ${roles.join(', ')}`)
        assert.deepEqual(roles, [TEST_APP_ROLE])
      }
      await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').execute()

      // Calibration (day 0): both imports to the end, no kill. They succeed whole, and T is how long they take.
      const calibrationStarted = performance.now()
      const calibration = startRound(server, w, host, pkg.body, 0)
      assert.equal(await calibration.historian.done, 201, calibration.historian.answer())
      assert.equal(await calibration.tenant, 'stage 200 apply 200')
      const T = Math.round(performance.now() - calibrationStarted)
      assert.equal(await bulkSites(w), TENANT_SITES)
      assert.equal(await seriesCount(server, host, 0), SAMPLES)
      await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').execute()

      // Stratified kill moments: one in each slice of [0, 1.25 T), the slices in a seeded random order.
      const windowMs = 1.25 * T
      const delays = Array.from({ length: ROUNDS }, (_, i) => Math.floor(((i + random()) / ROUNDS) * windowMs))
      for (let i = delays.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1))
        ;[delays[i], delays[j]] = [delays[j]!, delays[i]!]
      }
      console.log(`# crash ${dialect}: calibration (both imports whole, no kill) took T = ${T} ms; kills drawn from [0, ${Math.round(windowMs)}) ms`)

      const phases = { historian: { streaming: 0, processing: 0, answered: 0 }, tenant: { streaming: 0, processing: 0, answered: 0 } }
      const outcome = { historian: { notStarted: 0, rolledBack: 0, complete: 0 }, tenant: { none: 0, all: 0 }, inFlightAtKill: 0 }
      // failedClaimingSamples: a failed batch whose samplesStored is not 0 (issue 24, defect 6: it kept nothing).
      const bad = { partialBatches: 0, failedClaimingSamples: 0, partialTenantImports: 0, leftRunning: 0, integrityNotOk: 0 }
      const checked = { batches: 0, integrityChecks: 0, samplesReadBack: 0 }
      /** Answers that arrived before the kill: only successes (or none) are expected; anything else is a broken set-up. */
      const answers: string[] = []
      const roundMs: number[] = []
      const restartMs: number[] = []
      let known = new Set((await apiBatches(server, host)).map((b) => b.id))
      for (let round = 0; round < ROUNDS; round++) {
        const roundStarted = performance.now()
        const day = round + 1 // each round its own day, so no batch is a duplicate of another
        const r = startRound(server, w, host, pkg.body, day)
        await sleep(delays[round]!)
        const historianPhase: Phase = r.historian.answer() !== '' ? 'answered' : r.historianSent() ? 'processing' : 'streaming'
        phases.historian[historianPhase]++
        phases.tenant[r.tenantPhase()]++
        if (!r.settled()) outcome.inFlightAtKill++
        await server.stop('SIGKILL')
        r.historian.req.destroy()
        answers.push(`historian ${await r.historian.done}`, `tenant ${await r.tenant}`)

        const restartStarted = performance.now()
        server = await startServer({ cwd: w.cwd, env: w.env, bundle })
        await waitHealthy(server)
        restartMs.push(performance.now() - restartStarted)
        let batches = await apiBatches(server, host)
        // PostgreSQL: recovery waits for the dead process's connection (and its advisory lock) to be gone.
        for (let i = 0; i < 100 && batches.some((b) => b.status === 'running'); i++) {
          await sleep(100)
          batches = await apiBatches(server, host)
        }
        const stored = (await historianCounts(w.handle, w.orgId)).byBatch
        const fresh = batches.filter((b) => !known.has(b.id))
        if (fresh.length === 0) outcome.historian.notStarted++
        for (const b of batches) {
          checked.batches++
          const held = stored.get(b.id) ?? 0
          if (b.status === 'running') bad.leftRunning++
          else if (b.status === 'complete' ? held !== b.samplesStored || held !== SAMPLES : held !== 0) bad.partialBatches++
          if (b.status === 'failed' && b.samplesStored !== 0) bad.failedClaimingSamples++
          if (!known.has(b.id)) outcome.historian[b.status === 'complete' ? 'complete' : 'rolledBack']++
        }
        // Read back through the API: this round's day shows all its samples (a complete batch) or none.
        const readBack = await seriesCount(server, host, day)
        checked.samplesReadBack += readBack
        const completeToday = fresh.some((b) => b.status === 'complete')
        if (readBack !== (completeToday ? SAMPLES : 0)) bad.partialBatches++
        known = new Set(batches.map((b) => b.id))

        const sites = await bulkSites(w)
        if (sites === TENANT_SITES) {
          outcome.tenant.all++
          await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').execute()
        } else if (sites === 0) {
          outcome.tenant.none++
        } else {
          bad.partialTenantImports++
        }
        if (dialect === 'sqlite') {
          checked.integrityChecks++
          if ((await integrity(w, dialect)) !== 'ok') bad.integrityNotOk++
        }
        roundMs.push(performance.now() - roundStarted)
      }
      const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length)
      console.log(
        `# crash ${dialect}: ${ROUNDS} kills, ${outcome.inFlightAtKill} with an import in flight; historian at the kill: ${phases.historian.streaming} mid-stream, ${phases.historian.processing} sent and unanswered, ${phases.historian.answered} answered; tenant at the kill: ${phases.tenant.streaming} mid-stream (package), ${phases.tenant.processing} staging or applying, ${phases.tenant.answered} answered`,
      )
      console.log(
        `# crash ${dialect}: historian batches: ${outcome.historian.rolledBack} rolled back, ${outcome.historian.complete} complete, ${outcome.historian.notStarted} rounds killed before the batch existed; tenant imports: ${outcome.tenant.none} none, ${outcome.tenant.all} all; ${checked.batches} batch checks, ${checked.samplesReadBack} samples read back through the series API`,
      )
      console.log(
        `# crash ${dialect}: partial batches ${bad.partialBatches}, failed batches claiming samples ${bad.failedClaimingSamples}, partial tenant imports ${bad.partialTenantImports}, batches left running ${bad.leftRunning}, integrity_check ${dialect === 'sqlite' ? `ok ${checked.integrityChecks - bad.integrityNotOk}/${checked.integrityChecks}` : 'n/a (PostgreSQL)'}`,
      )
      console.log(
        `# crash ${dialect}: round ${mean(roundMs)} ms mean (${Math.round(Math.max(...roundMs))} ms max; of which restarting the server ${mean(restartMs)} ms), whole test ${((performance.now() - fileStarted) / 1000).toFixed(1)} s`,
      )
      const unexpected = answers.filter((a) => !/^historian (0|201)$|^tenant stage (0|200) apply (0|200)$/.test(a))
      assert.deepEqual(unexpected, [], 'each import either succeeded or was cut off by the kill')
      assert.deepEqual(bad, { partialBatches: 0, failedClaimingSamples: 0, partialTenantImports: 0, leftRunning: 0, integrityNotOk: 0 })
      if (dialect === 'sqlite') assert.equal(checked.integrityChecks, ROUNDS)
      assert.ok(outcome.inFlightAtKill > 0, 'at least one kill landed while an import was running (else the rounds proved nothing)')
      assert.ok(phases.historian.streaming + phases.tenant.streaming > 0, 'at least one kill landed mid-stream')
    })
  })
}
