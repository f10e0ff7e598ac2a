import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { reloadSuite } from './reload-harness.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: configuration reload under load`, () => {
    const site = reloadSuite(dialect, 'site')

    it('1 000 reloads, half of them invalid, under concurrent requests: no request fails and an invalid one never takes effect', async () => {
      let n = 0
      // Every other reread is invalid: a rate limit of 0 would refuse every request if it were ever swapped in.
      const r = await site((env) => {
        n += 1
        env.SITEGRID_RATE_LIMIT_PER_MINUTE = n % 2 === 0 ? '0' : String(100_000 + n)
        env.SITEGRID_LOG_LEVEL = n % 2 === 0 ? 'loud' : 'info'
      })
      const reloads = new Map<number, number>()
      const requests = new Map<number, number>()
      const count = (map: Map<number, number>, status: number) => map.set(status, (map.get(status) ?? 0) + 1)
      for (let batch = 0; batch < 100; batch++) {
        await Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const [reload, request] = await Promise.all([r.reload({ reason: `batch ${batch} #${i}` }), r.get()])
            count(reloads, reload.statusCode)
            count(requests, request.statusCode)
            if (reload.statusCode === 200) assert.ok(reload.json().changed.every((c: { to: unknown }) => c.to !== 0 && c.to !== 'loud'))
          }),
        )
      }
      assert.deepEqual([...requests.entries()], [[200, 1000]], 'no request failed')
      assert.deepEqual([...reloads.entries()].sort(), [
        [200, 500],
        [422, 500],
      ])
      assert.equal(r.log.level, 'info')
      // Reloads run one at a time, so the last valid reread (the 999th) is in force: rereading it changes nothing.
      n = 998
      const settle = await r.reload()
      assert.equal(settle.statusCode, 200)
      assert.deepEqual(settle.json().changed, [])
      assert.equal((await r.auditRows()).length, 1001)
    })
  })
}
