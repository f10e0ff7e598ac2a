import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { CLI_ACTOR } from '../../identity.ts'
import { systemClock } from '../../clock.ts'
import { connectDatabase, type DatabaseHandle } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { KEY_SECRET, sleep, testDialects } from '../../../test/harness.ts'
import { createTestDatabase } from '../../../test/postgres.ts'
import { httpRequest, startServer } from '../../../test/cli/process.ts'
import { appRoleEnv } from '../../../test/hardening/process-support.ts'
import {
  historianCounts as counts,
  seedHistorianSite as seed,
  startHistorianUpload,
  trendRows,
  waitHealthy as up,
} from '../../../test/support/historian-upload.ts'
import { createApiKeysService } from '../api-keys/service.ts'
import { createOrgsService } from '../orgs/service.ts'
import { FLUSH_SAMPLES } from './service/write-pipeline.ts'
import { lockKey } from './store/session.ts'

/** PostgreSQL: holds a batch's import lock on a connection of the test, as a dead process's not yet dropped connection would. */
function holdImportLock(handle: DatabaseHandle, batchId: string) {
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let lock!: () => void
  const held = new Promise<void>((resolve) => {
    lock = resolve
  })
  const done = handle.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${lockKey(batchId)})`.execute(conn)
    lock()
    await released
    await sql`select pg_advisory_unlock(${lockKey(batchId)})`.execute(conn)
  })
  return {
    held,
    release: async () => {
      release()
      await done
    },
  }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: historian all or nothing across a crash`, () => {
    it("a client that drops its upload and a server killed mid-upload each leave a failed batch that claims 0 samples and holds none (PostgreSQL: also when the dead process's lock outlives the restart)", async (t) => {
      const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-kill-'))
      t.after(() => rmSync(cwd, { recursive: true, force: true }))
      const databaseUrl = dialect === 'sqlite' ? `sqlite:${join(cwd, 'site.db')}` : await createTestDatabase(process.env.TEST_DATABASE_URL!)
      const handle = await connectDatabase(databaseUrl, { poolSize: 2 })
      t.after(() => handle.close())
      await migrateToLatest(handle.db)
      const appRole = await appRoleEnv(handle, databaseUrl) // PostgreSQL: serve as the non-owner role, under RLS
      const org = await createOrgsService({ handle, clock: systemClock }).provision('kill')
      const keys = createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
      const owner = await keys.mint(org.id, CLI_ACTOR, { role: 'owner', name: 'owner', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
      await seed(handle, org.id)
      const headers = { host: 'kill.localhost', 'x-api-key': owner.plaintext }

      const env = { DATABASE_URL: databaseUrl, ...appRole, SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_LOG_LEVEL: 'warn', SITEGRID_DATA_DIR: join(cwd, 'data') }
      const server = await startServer({ cwd, env })
      t.after(() => server.stop('SIGKILL'))
      await up(server)
      const probe = await httpRequest(`${server.url}/api/historian/import-batches?siteId=plant-1`, { headers })
      assert.equal(probe.status, 200, probe.body)

      /** Starts an upload of more than one write transaction's worth that then stalls, and waits until its batch holds samples. */
      const stalledUpload = async (url: string, day: number) => {
        const upload = startHistorianUpload(url, headers, trendRows(FLUSH_SAMPLES * 2 + 10, Date.UTC(2024, 0, day)), { end: false })
        for (let i = 0; i < 300; i++) {
          const seen = await counts(handle, org.id)
          const running = seen.batches.find((b) => b.status === 'running')
          if (running !== undefined && (seen.byBatch.get(running.id) ?? 0) >= FLUSH_SAMPLES) return { upload, batchId: running.id }
          await sleep(100)
        }
        throw new Error(`no samples were written before the cut: ${upload.answer()} ${server.output()}`)
      }
      /** The batch as the API and the database tell it, once it is no longer running. */
      const settled = async (url: string, batchId: string) => {
        for (let i = 0; i < 300; i++) {
          const res = await httpRequest(`${url}/api/historian/import-batches/${batchId}`, { headers })
          assert.equal(res.status, 200, res.body)
          const batch = res.json() as { status: string; samplesStored: number; progress: { samplesWritten: number } }
          if (batch.status !== 'running') {
            const stored = await counts(handle, org.id)
            return {
              status: batch.status,
              samplesStored: batch.samplesStored,
              samplesWritten: batch.progress.samplesWritten,
              held: stored.byBatch.get(batchId) ?? 0,
              column: stored.batches.find((b) => b.id === batchId)!.samples_stored,
            }
          }
          await sleep(100)
        }
        throw new Error(`batch ${batchId} still running`)
      }
      const failedAndEmpty = { status: 'failed', samplesStored: 0, samplesWritten: 0, held: 0, column: 0 }

      // The client drops the connection mid-body (the server stays up and cleans up at once).
      const dropped = await stalledUpload(server.url, 1)
      dropped.upload.req.destroy()
      assert.deepEqual(await settled(server.url, dropped.batchId), failedAndEmpty)

      // The server is killed mid-upload; the restarted one cleans up at start-up. On PostgreSQL the test then holds the
      // import's lock through the restart, as the dead process's connection does until the database drops it: the
      // start-up recovery must leave the batch (it may be live elsewhere), and the first read once the lock is gone
      // cleans it.
      const killed = await stalledUpload(server.url, 2)
      await server.stop('SIGKILL')
      killed.upload.req.destroy()
      const stand = dialect === 'postgres' ? holdImportLock(handle, killed.batchId) : undefined
      await stand?.held
      const restarted = await startServer({ cwd, env })
      t.after(() => restarted.stop())
      await up(restarted)
      if (stand !== undefined) {
        const res = await httpRequest(`${restarted.url}/api/historian/import-batches/${killed.batchId}`, { headers })
        assert.equal((res.json() as { status: string }).status, 'running', 'the start-up recovery leaves a batch whose lock is held')
        await stand.release()
      }
      assert.deepEqual(await settled(restarted.url, killed.batchId), failedAndEmpty)
      const after = await counts(handle, org.id)
      assert.equal(after.samples, 0)
      assert.deepEqual(
        after.batches.map((b) => [b.status, Number(b.samples_stored)]),
        [
          ['failed', 0],
          ['failed', 0],
        ],
      )
    })
  })
}
