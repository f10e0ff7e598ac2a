import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CLI_ACTOR } from '../../src/auth/principal.ts'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { controllerBody } from '../../src/modules/controllers/test-support.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { httpRequest, startServer } from '../cli/process.ts'
import { KEY_SECRET, testDialects } from '../harness.ts'
import { createTestDatabase } from '../postgres.ts'

const CONCURRENT = 50

for (const dialect of testDialects()) {
  describe(`${dialect}: Idempotency-Key over two server processes on one database`, () => {
    it(`${CONCURRENT} concurrent identical requests split over two processes create exactly one record; the others replay its answer`, async (t) => {
      const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-idem-'))
      t.after(() => rmSync(cwd, { recursive: true, force: true }))
      const databaseUrl = dialect === 'sqlite' ? `sqlite:${join(cwd, 'cell.db')}` : await createTestDatabase(process.env.TEST_DATABASE_URL!)
      const handle = await connectDatabase(databaseUrl, { poolSize: 1 })
      await migrateToLatest(handle.db)
      const org = await createOrgsService({ handle, clock: systemClock }).provision('cell')
      const keys = createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
      const admin = await keys.mint(org.id, CLI_ACTOR, { role: 'admin', name: 'admin', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })

      const env = { DATABASE_URL: databaseUrl, SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_MODE: 'cloud', SITEGRID_LOG_LEVEL: 'warn', SITEGRID_RATE_LIMIT_PER_MINUTE: '100000', SITEGRID_IDEMPOTENCY_WAIT_MS: '120000' }
      const [a, b] = await Promise.all([startServer({ cwd, env }), startServer({ cwd, env })])
      t.after(async () => {
        await a.stop()
        await b.stop()
        await handle.close()
      })
      const headers = { host: 'cell.localhost', 'x-api-key': admin.plaintext, 'content-type': 'application/json' }
      const site = await httpRequest(`${a.url}/api/sites`, { method: 'POST', headers, body: JSON.stringify({ code: 'S1', name: 'Plant' }) })
      assert.equal(site.status, 201)

      const body = JSON.stringify(controllerBody())
      const answers = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => new Promise<{ status: number; body: string; replayed: boolean }>((resolve, reject) => {
        const server = i % 2 === 0 ? a : b
        // node:http, not fetch: the Host header names the tenant; httpRequest (test/cli) does not return headers.
        const req = request(`${server.url}/api/sites/S1/controllers`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'two-process-key' } }, (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (d: string) => { text += d })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, replayed: res.headers['idempotent-replayed'] === 'true' }))
        })
        req.on('error', reject)
        req.end(body)
      })))

      const created = await handle.db.selectFrom('controllers').select('id').where('org_id', '=', org.id).execute()
      const statuses = answers.reduce<Record<number, number>>((acc, x) => ({ ...acc, [x.status]: (acc[x.status] ?? 0) + 1 }), {})
      const replays = answers.filter((x) => x.replayed).length
      console.log(`idempotency ${dialect}: ${CONCURRENT} concurrent requests over 2 processes -> statuses ${JSON.stringify(statuses)}, records created ${created.length}, replays ${replays}, distinct bodies ${new Set(answers.map((x) => x.body)).size}`)
      assert.deepEqual(statuses, { 201: CONCURRENT })
      assert.equal(created.length, 1)
      assert.equal(replays, CONCURRENT - 1)
      assert.equal(new Set(answers.map((x) => x.body)).size, 1)
      assert.equal((JSON.parse(answers[0]!.body) as { id: string }).id, created[0]!.id)
    })
  })
}
