import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Harness } from '../../../test/harness.ts'
import { testDialects } from '../../../test/harness.ts'
import { sweepHistorianRetention } from './service/retention.ts'
import { plant, sampleCount, series, sharedHarness, standardParts, upload, type Plant } from './test-setup.ts'

// Issue 30, retention: a site's `retentionDays` applied by the job, with an injected clock.
const NOW = Date.parse('2024-05-20T00:00:00Z')
const DAY = 86_400_000
const day = (offset: number) => new Date(NOW + offset * DAY).toISOString()
const S_DAYS = [-10, -9, -8, -7, -6, -2, -1]
const T_DAYS = [-10, -1]

/** A plant with tag S (ins_pump speed) on S_DAYS and tag T (ins_motor state) on T_DAYS, imported. */
async function seeded(h: Harness): Promise<Plant> {
  const p = await plant(h)
  const rows = [...S_DAYS.map((d) => `${day(d)},S,${d},Good`), ...T_DAYS.map((d) => `${day(d)},T,${d},Good`)]
  const res = await upload(
    h,
    p.owner,
    standardParts(
      p.siteCode,
      'long',
      `timestamp,tag,value,quality\n${rows.join('\n')}\n`,
      'historian_tag,instance_id,tag_key\nS,ins_pump,speed\nT,ins_motor,state\n',
    ),
  )
  assert.equal(res.statusCode, 201, res.body)
  return p
}

const retentionOf = async (h: Harness, p: Plant) => (await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/retention` })).json()
const setRetention = (h: Harness, p: Plant, body: unknown, who: 'owner' | 'member' = 'owner') =>
  h.inject(p[who], { method: 'PUT', url: `/api/sites/${p.siteCode}/historian/retention`, payload: body as object })
const speedDays = async (h: Harness, p: Plant) =>
  (await series(h, p, `instanceId=ins_pump&tag=speed&from=${day(-30)}&to=${day(30)}`)).samples.map((s) => s.value)

for (const dialect of testDialects()) {
  describe(`${dialect}: historian retention`, () => {
    const shared = sharedHarness(dialect)

    it('deletes the samples older than retentionDays in statements of at most the batch size, records its progress, leaves sites without a policy alone', async () => {
      const h = shared()
      h.clock.set(NOW)
      const p = await seeded(h)
      const keep = await seeded(h)
      assert.deepEqual(await retentionOf(h, p), { siteId: p.siteCode, retentionDays: null, lastRunAt: null, samplesDeleted: 0, oldestKept: null })
      const set = await setRetention(h, p, { retentionDays: 5 })
      assert.equal(set.statusCode, 200, set.body)
      assert.deepEqual(set.json(), { siteId: p.siteCode, retentionDays: 5, lastRunAt: null, samplesDeleted: 0, oldestKept: null })
      // A policy set back to null keeps everything.
      await setRetention(h, keep, { retentionDays: 3 })
      assert.equal((await setRetention(h, keep, { retentionDays: null })).json().retentionDays, null)

      const orgs = [p.owner.org.id, keep.owner.org.id]
      // Tag S: 5 samples older than 5 days, 2 a statement (2, 2, 1); tag T: 1 (one statement).
      const first = await sweepHistorianRetention(h.appHandle, h.clock, { orgs, batchRows: 2 })
      assert.deepEqual(first, { sites: 1, deleted: 6, statements: 4 })
      assert.deepEqual(await speedDays(h, p), [-2, -1])
      assert.deepEqual(await retentionOf(h, p), { siteId: p.siteCode, retentionDays: 5, lastRunAt: day(0), samplesDeleted: 6, oldestKept: day(-2) })
      assert.equal(await sampleCount(h, keep.owner.org.id), S_DAYS.length + T_DAYS.length)

      // Four days later the sample of day -2 is 6 days old.
      h.clock.advance(4 * DAY)
      const second = await sweepHistorianRetention(h.appHandle, h.clock, { orgs, batchRows: 2 })
      assert.deepEqual(second, { sites: 1, deleted: 1, statements: 2 })
      assert.deepEqual(await speedDays(h, p), [-1])
      assert.deepEqual(await retentionOf(h, p), { siteId: p.siteCode, retentionDays: 5, lastRunAt: day(4), samplesDeleted: 1, oldestKept: day(-1) })
      assert.equal(await sampleCount(h, p.owner.org.id), 2)
    })

    it('the policy: an integer of days from 1 or null, in JSON, set by an admin; the site must exist', async () => {
      const h = shared()
      const p = await plant(h)
      for (const body of [{ retentionDays: 0 }, { retentionDays: 2.5 }, { retentionDays: '7' }, {}, { retentionDays: 7, extra: 1 }]) {
        const res = await setRetention(h, p, body)
        assert.equal(res.statusCode, 400, JSON.stringify(body))
        assert.match(res.body, /retentionDays|extra/)
      }
      assert.equal((await setRetention(h, p, { retentionDays: 7 }, 'member')).statusCode, 403)
      // The line format of the live push is read by the push alone.
      const text = await h.inject(p.owner, {
        method: 'PUT',
        url: `/api/sites/${p.siteCode}/historian/retention`,
        payload: '7',
        headers: { 'content-type': 'text/plain' },
      })
      assert.equal(text.statusCode, 415)
      assert.equal((await retentionOf(h, p)).retentionDays, null)
      const missing = await h.inject(p.owner, { method: 'PUT', url: '/api/sites/nowhere/historian/retention', payload: { retentionDays: 7 } })
      assert.equal(missing.statusCode, 404)
      assert.equal((await h.inject(p.member, { method: 'GET', url: '/api/sites/nowhere/historian/retention' })).statusCode, 404)
    })
  })
}
