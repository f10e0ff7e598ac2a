// Issue 14, crash consistency: a real server process is killed with SIGKILL at a random moment (seeded; the seed is
// printed) while a historian import and a tenant import run, then restarted, N rounds per database
// (SITEGRID_CRASH_ROUNDS, default 3: each round restarts a server, seconds apiece on a busy machine; SITEGRID_CRASH_SEED replays a run). After every restart: 0 partial historian
// batches (a batch's samples all present, `complete` with exactly `samples_stored` samples, or none), the tenant import
// all or nothing (its sites all there or none of them), SQLite `PRAGMA integrity_check` = ok, 0 batches `running`.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { sleep, testDialects } from '../harness.ts'
import { startServer, type Server } from '../cli/process.ts'
import { historianCounts, seedHistorianSite, startHistorianUpload, trendRows, waitHealthy } from '../support/historian-upload.ts'
import { countFromEnv, processWorld, rawRequest, seedFromEnv, seededRandom, type ProcessWorld } from './process-support.ts'

const ROUNDS = countFromEnv('SITEGRID_CRASH_ROUNDS', 3)
const SAMPLES = 60_000
const TENANT_SITES = 3000
/**
 * The first round's kill lands while the historian batch is `running`; every later one uniformly in [0, window) after
 * both imports were started. The window starts at this, grows by half after a kill that found both imports still
 * running and halves after one that found both done, so that the rounds land before, during and after commits.
 */
const KILL_WINDOW_MS = countFromEnv('SITEGRID_CRASH_WINDOW_MS', 2500)

async function bulkSites(w: ProcessWorld): Promise<number> {
  const row = await w.handle.db.selectFrom('sites').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').executeTakeFirstOrThrow()
  return Number(row.n)
}

async function integrity(w: ProcessWorld, dialect: string): Promise<string> {
  if (dialect !== 'sqlite') return 'n/a'
  const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(w.handle.db)
  return rows.map((r) => r.integrity_check).join(',')
}

for (const dialect of testDialects()) {
  describe(`${dialect}: crash consistency under SIGKILL`, () => {
    it(`killed at a random moment during a historian import and a tenant import, ${ROUNDS} times: 0 partial batches, 0 partial tenant imports, integrity ok, 0 left running`, async (t) => {
      const seed = seedFromEnv('SITEGRID_CRASH_SEED')
      const random = seededRandom(seed)
      console.log(`# crash ${dialect}: seed ${seed} (SITEGRID_CRASH_SEED=${seed} replays it), ${ROUNDS} rounds`)
      const w = await processWorld(t, dialect, 'crash')
      const host = { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey }
      await seedHistorianSite(w.handle, w.orgId)
      // The tenant package: the organisation with TENANT_SITES more sites, which are then removed, so that applying it
      // creates them all in its one transaction.
      const now = Date.now()
      for (let i = 0; i < TENANT_SITES; i += 500) {
        await w.handle.db.insertInto('sites').values(Array.from({ length: 500 }, (_, j) => ({
          org_id: w.orgId, code: `bulk-${String(i + j).padStart(5, '0')}`, name: `Bulk ${i + j}`, description: null, location: null, time_zone: 'UTC', status: 0, created_at: now, updated_at: now,
        }))).execute()
      }
      let server: Server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      const pkg = await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })
      assert.equal(pkg.status, 200, pkg.body.toString())
      await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').execute()

      let window = KILL_WINDOW_MS
      const outcome = { historian: { notStarted: 0, rolledBack: 0, complete: 0 }, tenant: { none: 0, all: 0 }, inFlightAtKill: 0 }
      const bad = { partialBatches: 0, partialTenantImports: 0, leftRunning: 0, integrityNotOk: 0 }
      /** Answers that arrived before the kill: only successes (or none) are expected; anything else is a broken set-up. */
      const answers: string[] = []
      for (let round = 0; round < ROUNDS; round++) {
        const staged = await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/import/package`, { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: pkg.body })
        assert.equal(staged.status, 200, staged.body.toString())
        const before = await historianCounts(w.handle, w.orgId)
        // Each round its own day, so no batch is a duplicate of another.
        const upload = startHistorianUpload(server.url, host, trendRows(SAMPLES, Date.UTC(2024, 0, 1 + round)), { end: true })
        const applied = rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/import?force=true`, { method: 'POST', headers: host }).then((r) => r.status, () => 0)
        let settled = 0
        void upload.done.then(() => { settled++ })
        void applied.then(() => { settled++ })
        if (round === 0) {
          // The first kill lands once the historian batch is being written, so at least one kill is surely mid-import.
          for (let i = 0; i < 6000 && settled < 2; i++) {
            if (await w.handle.db.selectFrom('historian_batches').select('id').where('org_id', '=', w.orgId).where('status', '=', 'running').executeTakeFirst()) break
            await sleep(20)
          }
        } else {
          await sleep(Math.floor(random() * window))
        }
        if (settled < 2) outcome.inFlightAtKill++
        if (settled === 0) window = Math.round(window * 1.5)
        if (settled === 2) window = Math.max(100, Math.round(window / 2))
        await server.stop('SIGKILL')
        upload.req.destroy()
        answers.push(`historian ${await upload.done}`, `tenant ${await applied}`)

        server = await startServer({ cwd: w.cwd, env: w.env })
        await waitHealthy(server)
        let after = await historianCounts(w.handle, w.orgId)
        // PostgreSQL: recovery waits for the dead process's connection (and its advisory lock) to be gone.
        for (let i = 0; i < 100 && after.batches.some((b) => b.status === 'running'); i++) {
          await sleep(100)
          after = await historianCounts(w.handle, w.orgId)
        }
        const known = new Set(before.batches.map((b) => b.id))
        const fresh = after.batches.filter((b) => !known.has(b.id))
        if (fresh.length === 0) outcome.historian.notStarted++
        for (const b of after.batches) {
          const stored = after.byBatch.get(b.id) ?? 0
          if (b.status === 'running') bad.leftRunning++
          else if (b.status === 'complete' ? stored !== b.samples_stored || stored !== SAMPLES : stored !== 0) bad.partialBatches++
          if (!known.has(b.id)) outcome.historian[b.status === 'complete' ? 'complete' : 'rolledBack']++
        }
        const sites = await bulkSites(w)
        if (sites === TENANT_SITES) {
          outcome.tenant.all++
          await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', 'like', 'bulk-%').execute()
        } else if (sites === 0) {
          outcome.tenant.none++
        } else {
          bad.partialTenantImports++
        }
        if ((await integrity(w, dialect)) !== 'ok' && dialect === 'sqlite') bad.integrityNotOk++
      }
      console.log(`# crash ${dialect}: ${ROUNDS} kills, ${outcome.inFlightAtKill} with an import in flight; historian batches: ${outcome.historian.rolledBack} rolled back, ${outcome.historian.complete} complete, ${outcome.historian.notStarted} rounds killed before the batch existed; tenant imports: ${outcome.tenant.none} none, ${outcome.tenant.all} all`)
      console.log(`# crash ${dialect}: partial batches ${bad.partialBatches}, partial tenant imports ${bad.partialTenantImports}, batches left running ${bad.leftRunning}, integrity_check ${dialect === 'sqlite' ? (bad.integrityNotOk === 0 ? 'ok' : `failed ${bad.integrityNotOk}×`) : 'n/a (PostgreSQL)'}`)
      const unexpected = answers.filter((a) => !/ (0|200|201)$/.test(a))
      assert.deepEqual(unexpected, [], 'each import either succeeded or was cut off by the kill')
      assert.deepEqual(bad, { partialBatches: 0, partialTenantImports: 0, leftRunning: 0, integrityNotOk: 0 })
      assert.ok(outcome.inFlightAtKill > 0, 'at least one kill landed while an import was running (else the rounds proved nothing)')
    })
  })
}
