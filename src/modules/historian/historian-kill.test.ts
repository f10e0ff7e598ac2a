import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CLI_ACTOR } from '../../auth/principal.ts'
import { systemClock } from '../../clock.ts'
import { connectDatabase } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { KEY_SECRET, sleep, testDialects } from '../../../test/harness.ts'
import { createTestDatabase } from '../../../test/postgres.ts'
import { httpRequest, startServer } from '../../../test/cli/process.ts'
import { appRoleEnv } from '../../../test/hardening/process-support.ts'
import { historianCounts as counts, seedHistorianSite as seed, startHistorianUpload, trendRows, waitHealthy as up } from '../../../test/support/historian-upload.ts'
import { createApiKeysService } from '../api-keys/service.ts'
import { createOrgsService } from '../orgs/service.ts'
import { FLUSH_SAMPLES } from './service/import-run.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: historian all or nothing across a crash`, () => {
    it('a server killed mid-upload leaves, after restart, no sample of the batch and no batch running', async (t) => {
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

      const env = { DATABASE_URL: databaseUrl, ...appRole, SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_LOG_LEVEL: 'warn', SITEGRID_DATA_DIR: join(cwd, 'data') }
      const server = await startServer({ cwd, env })
      t.after(() => server.stop('SIGKILL'))
      await up(server)
      const probe = await httpRequest(`${server.url}/api/historian/import-batches?siteId=plant-1`, { headers: { host: 'kill.localhost', 'x-api-key': owner.plaintext } })
      assert.equal(probe.status, 200, probe.body)
      // More than one write transaction's worth, then the upload stalls (never ends) until the kill.
      const upload = startHistorianUpload(server.url, { host: 'kill.localhost', 'x-api-key': owner.plaintext }, trendRows(FLUSH_SAMPLES * 2 + 10, Date.UTC(2024, 0, 1)), { end: false })

      let seen: Awaited<ReturnType<typeof counts>> | undefined
      for (let i = 0; i < 300; i++) {
        seen = await counts(handle, org.id)
        if (seen.samples >= FLUSH_SAMPLES) break
        await sleep(100)
      }
      assert.ok(seen !== undefined && seen.samples >= FLUSH_SAMPLES, `samples were being written before the kill: ${JSON.stringify(seen?.batches)} ${upload.answer()} ${server.output()}`)
      assert.equal(seen.batches[0]?.status, 'running')

      await server.stop('SIGKILL')
      upload.req.destroy()
      const restarted = await startServer({ cwd, env })
      t.after(() => restarted.stop())
      await up(restarted)
      let after = await counts(handle, org.id)
      for (let i = 0; i < 100 && after.batches.some((b) => b.status === 'running'); i++) {
        await sleep(100)
        after = await counts(handle, org.id)
      }
      assert.equal(after.samples, 0)
      assert.deepEqual(after.batches.map((b) => b.status), ['failed'])
    })
  })
}
