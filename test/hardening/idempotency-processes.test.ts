import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import { controllerBody } from '../../src/modules/controllers/test-support.ts'
import { httpRequest, startServer } from '../cli/process.ts'
import { testDialects } from '../harness.ts'
import { processWorld } from './process-support.ts'

const CONCURRENT = 50

// PostgreSQL only: a SQLite file is served by one process; a second is refused (test/hardening/cell-concurrency.test.ts).
for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: Idempotency-Key over two server processes on one database`, () => {
    it(`${CONCURRENT} concurrent identical requests split over two processes create exactly one record; the others replay its answer`, async (t) => {
      const world = await processWorld(t, dialect, 'cell', { SITEGRID_MODE: 'cloud', SITEGRID_IDEMPOTENCY_WAIT_MS: '120000' })
      const { cwd, env, handle } = world
      const [a, b] = await Promise.all([startServer({ cwd, env }), startServer({ cwd, env })])
      t.after(async () => {
        await a.stop()
        await b.stop()
      })
      const headers = { host: 'cell.localhost', 'x-api-key': world.ownerKey, 'content-type': 'application/json' }
      const site = await httpRequest(`${a.url}/api/sites`, { method: 'POST', headers, body: JSON.stringify({ code: 'S1', name: 'Plant' }) })
      assert.equal(site.status, 201)

      const body = JSON.stringify(controllerBody())
      const answers = await Promise.all(
        Array.from(
          { length: CONCURRENT },
          (_, i) =>
            new Promise<{ status: number; body: string; replayed: boolean }>((resolve, reject) => {
              const server = i % 2 === 0 ? a : b
              // node:http, not fetch: the Host header names the tenant; httpRequest (test/cli) does not return headers.
              const req = request(
                `${server.url}/api/sites/S1/controllers`,
                { method: 'POST', headers: { ...headers, 'idempotency-key': 'two-process-key' } },
                (res) => {
                  let text = ''
                  res.setEncoding('utf8')
                  res.on('data', (d: string) => {
                    text += d
                  })
                  res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, replayed: res.headers['idempotent-replayed'] === 'true' }))
                },
              )
              req.on('error', reject)
              req.end(body)
            }),
        ),
      )

      const created = await handle.db.selectFrom('controllers').select('id').where('org_id', '=', world.orgId).execute()
      const statuses = answers.reduce<Record<number, number>>((acc, x) => ({ ...acc, [x.status]: (acc[x.status] ?? 0) + 1 }), {})
      const replays = answers.filter((x) => x.replayed).length
      console.log(
        `idempotency ${dialect}: ${CONCURRENT} concurrent requests over 2 processes -> statuses ${JSON.stringify(statuses)}, records created ${created.length}, replays ${replays}, distinct bodies ${new Set(answers.map((x) => x.body)).size}`,
      )
      assert.deepEqual(statuses, { 201: CONCURRENT })
      assert.equal(created.length, 1)
      assert.equal(replays, CONCURRENT - 1)
      assert.equal(new Set(answers.map((x) => x.body)).size, 1)
      assert.equal((JSON.parse(answers[0]!.body) as { id: string }).id, created[0]!.id)
    })
  })
}
