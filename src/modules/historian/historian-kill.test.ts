import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CLI_ACTOR } from '../../auth/principal.ts'
import { systemClock } from '../../clock.ts'
import { connectDatabase, type DatabaseHandle } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import type { OrgId } from '../../ids.ts'
import { KEY_SECRET, sleep, testDialects } from '../../../test/harness.ts'
import { createTestDatabase } from '../../../test/postgres.ts'
import { httpRequest, startServer } from '../../../test/cli/process.ts'
import { createApiKeysService } from '../api-keys/service.ts'
import { createOrgsService } from '../orgs/service.ts'
import { FLUSH_SAMPLES } from './service/import-run.ts'

async function seed(handle: DatabaseHandle, orgId: OrgId): Promise<void> {
  const now = Date.now()
  await handle.db.insertInto('sites').values({ org_id: orgId, code: 'plant-1', name: 'Plant 1', description: null, location: null, time_zone: 'UTC', status: 0, created_at: now, updated_at: now }).execute()
  await handle.db.insertInto('controllers').values({
    org_id: orgId, site_code: 'plant-1', id: 'plc-1', name: null, platform: 0, firmware_version: null, asset_number: 'A-1', protocol: 'cip',
    ip_address: '10.0.0.1', port: null, cip_path: null, poll_interval_ms: 1000, timeout_ms: 5000, retry_delay_ms: 5000, max_retries: 3,
    edge_id: null, edge_plc_id: null, created_at: now, updated_at: now,
  }).execute()
  await handle.db.insertInto('instances').values({
    org_id: orgId, site_code: 'plant-1', id: 'ins_pump', name: 'pump', type_id: 'generic', type_version: null, asset_number: 'I-1', controller_id: 'plc-1',
    area: null, tag_mappings: '{}', tag_count: 0, config: '{}', created_at: now, updated_at: now,
  }).execute()
}

/** startServer gives up waiting after 20 s; a loaded machine needs longer to boot a server. */
async function up(server: Awaited<ReturnType<typeof startServer>>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (server.child.exitCode !== null) throw new Error(`server exited: ${server.output()}`)
    try {
      if ((await fetch(`${server.url}/healthz`)).ok) return
    } catch {
      await sleep(100)
    }
  }
  throw new Error('server did not start')
}

async function counts(handle: DatabaseHandle, orgId: string) {
  const batches = await handle.db.selectFrom('historian_batches').select(['id', 'status', 'samples_stored']).where('org_id', '=', orgId).execute()
  const samples = await handle.db.selectFrom('historian_samples').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow()
  return { batches, samples: Number(samples.n) }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: historian all or nothing across a crash`, () => {
    it('a server killed mid-upload leaves, after restart, no sample of the batch and no batch running', async (t) => {
      const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-kill-'))
      t.after(() => rmSync(cwd, { recursive: true, force: true }))
      const databaseUrl = dialect === 'sqlite' ? `sqlite:${join(cwd, 'site.db')}` : await createTestDatabase(process.env.TEST_DATABASE_URL!)
      const handle = await connectDatabase(databaseUrl, { poolSize: 2 })
      t.after(() => handle.close())
      await migrateToLatest(handle.db)
      const org = await createOrgsService({ handle, clock: systemClock }).provision('kill')
      const keys = createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
      const owner = await keys.mint(org.id, CLI_ACTOR, { role: 'owner', name: 'owner', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
      await seed(handle, org.id)

      const env = { DATABASE_URL: databaseUrl, SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_LOG_LEVEL: 'warn', SITEGRID_DATA_DIR: join(cwd, 'data') }
      const server = await startServer({ cwd, env })
      t.after(() => server.stop('SIGKILL'))
      await up(server)
      const probe = await httpRequest(`${server.url}/api/historian/import-batches?siteId=plant-1`, { headers: { host: 'kill.localhost', 'x-api-key': owner.plaintext } })
      assert.equal(probe.status, 200, probe.body)
      const boundary = 'killtestboundary'
      const req = request(`${server.url}/api/historian/import-batches`, {
        method: 'POST', headers: { host: 'kill.localhost', 'x-api-key': owner.plaintext, 'content-type': `multipart/form-data; boundary=${boundary}` },
      })
      req.on('error', () => {}) // the server dies under it
      let answer = ''
      req.on('response', (res) => {
        answer = `${res.statusCode} `
        res.on('data', (d) => { answer += String(d) })
      })
      const field = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
      req.write(field('site_id', 'plant-1') + field('format', 'long'))
      req.write(`--${boundary}\r\ncontent-disposition: form-data; name="mapping_csv"; filename="m.csv"\r\n\r\nhistorian_tag,instance_id,tag_key\nA,ins_pump,p\n\r\n`)
      req.write(`--${boundary}\r\ncontent-disposition: form-data; name="trend_csv"; filename="t.csv"\r\n\r\ntimestamp,tag,value\n`)
      // More than one write transaction's worth, then the upload stalls (never ends) until the kill.
      const base = Date.UTC(2024, 0, 1)
      let rows = ''
      for (let i = 0; i < FLUSH_SAMPLES * 2 + 10; i++) rows += `${base + i * 1000},A,${i}\n`.replace(/^(\d+)/, (ms) => new Date(Number(ms)).toISOString())
      req.write(rows)

      let seen: Awaited<ReturnType<typeof counts>> | undefined
      for (let i = 0; i < 300; i++) {
        seen = await counts(handle, org.id)
        if (seen.samples >= FLUSH_SAMPLES) break
        await sleep(100)
      }
      assert.ok(seen !== undefined && seen.samples >= FLUSH_SAMPLES, `samples were being written before the kill: ${JSON.stringify(seen)} ${answer} ${server.output()}`)
      assert.equal(seen.batches[0]?.status, 'running')

      await server.stop('SIGKILL')
      req.destroy()
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
