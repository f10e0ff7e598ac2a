// Session 23 (streams and shutdown): an upload streamed into the database (the historian import's trend CSV) whose
// client stalls half-way, over a real socket: it must not hold a transaction or a lock that blocks other writers, and
// once the client goes away nothing of it is kept.
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { harness, sleep, testDialects } from './harness.ts'
import { historianCounts, seedHistorianSite, startHistorianUpload, trendRows } from './support/historian-upload.ts'

const NO_RATE_LIMIT = { SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000', SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '100000000' }

for (const dialect of testDialects()) {
  describe(`${dialect}: a streamed upload whose client stalls`, () => {
    it('a historian import stalled half-way blocks no other writer (site creations answer 201 promptly meanwhile); its client gone, the batch fails with nothing kept', async (t) => {
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_LOG_LEVEL: 'warn' })
      const { org, key } = await h.orgWithKey('owner')
      await seedHistorianSite(h.handle, org.id)
      await h.app.listen({ host: '127.0.0.1', port: 0 })
      const { port } = h.app.server.address() as AddressInfo
      const upload = startHistorianUpload(
        `http://127.0.0.1:${port}`,
        { host: `${org.slug}.localhost`, 'x-api-key': key },
        trendRows(50_000, Date.UTC(2026, 0, 1)),
        {
          end: false,
        },
      )
      try {
        await writersPass()
      } finally {
        upload.req.destroy() // before the harness closes the app, which would wait for the stalled upload
      }
      let after = await historianCounts(h.handle, org.id)
      for (let waited = 0; after.batches[0]?.status === 'running' && waited < 10_000; waited += 100) {
        await sleep(100)
        after = await historianCounts(h.handle, org.id)
      }
      // The client gone half-way: the batch failed, none of the 50 000 samples written meanwhile kept.
      assert.deepEqual(
        after.batches.map((b) => [b.status, b.samples_stored]),
        [['failed', 0]],
      )
      assert.equal(after.samples, 0)
      async function writersPass() {
        // The import is under way (rows of the stalled body already being written) before the writers come.
        for (let waited = 0; (await historianCounts(h.handle, org.id)).batches.length === 0 && waited < 10_000; waited += 100) await sleep(100)
        await sleep(1_000)
        const during = await historianCounts(h.handle, org.id)
        assert.equal(during.batches.length, 1, 'the import began')
        console.log(`# stalled historian import (${dialect}): batch ${during.batches[0]!.status}, ${during.samples} samples stored so far`)
        for (let i = 0; i < 5; i++) {
          const started = performance.now()
          const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: { code: `W-${i}`, name: `Writer ${i}` } })
          const took = performance.now() - started
          assert.equal(res.statusCode, 201, res.body)
          assert.ok(took < 4_000, `a site creation took ${Math.round(took)} ms while the import stalled`)
        }
        assert.equal(upload.answer(), '', 'the stalled import is still open')
      }
    })
  })
}
