// Session 21 review (hostile user): timestamps at the edges of what a date can hold, through HTTP.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Harness } from '../harness.ts'
import { testDialects } from '../harness.ts'
import { livePlant, plant, sharedHarness, type Plant } from '../../src/modules/historian/test-setup.ts'

const NOW = Date.parse('2024-05-01T12:00:00Z')
const ENV = { SITEGRID_HISTORIAN_LIVE_MAX_SKEW_MS: '60000', SITEGRID_HISTORIAN_LIVE_MAX_AGE_MS: '3600000' }

function push(h: Harness, p: Plant, batchKey: string, body: unknown, contentType = 'application/json') {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  return h.inject(p.member, {
    method: 'POST',
    url: `/api/sites/${p.siteCode}/historian/samples?batchKey=${batchKey}`,
    payload,
    headers: { 'content-type': contentType },
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: historian timestamps at the edges of the date range`, () => {
    const shared = sharedHarness(dialect, ENV)

    it('a live sample whose epoch milliseconds no date holds is refused one by one, never a 500', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const beyond = [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 8_640_000_000_000_001, -8_640_000_000_000_001]
      const json = await push(h, p, 'edge-json', { samples: [...beyond, NOW].map((ts) => ({ instanceId: 'ins_pump', tagKey: 'speed', ts, value: 1 })) })
      assert.equal(json.statusCode, 200, json.body)
      const lines = [...beyond.map(String), '9999999999999999', '-9999999999999999', String(NOW + 1)].map((ts) => `ins_pump,speed,${ts},2`).join('\n')
      const text = await push(h, p, 'edge-lines', lines, 'text/plain')
      assert.equal(text.statusCode, 200, text.body)
      for (const [res, count] of [
        [json, 4],
        [text, 6],
      ] as const) {
        const answer = res.json() as { stored: number; refusals: Array<{ index: number; reason: string }> }
        assert.equal(answer.stored, 1, res.body)
        assert.deepEqual(
          answer.refusals.map((r) => r.index),
          Array.from({ length: count }, (_, i) => i),
        )
        for (const r of answer.refusals) assert.match(r.reason, /^timestamp .*epoch milliseconds .*-8640000000000000 to 8640000000000000/, r.reason)
      }
    })

    it('a read by local days from the first centuries starts at `from`, in UTC and in a zone with its local mean time then', async () => {
      const h = shared()
      for (const timeZone of ['UTC', 'Europe/Paris']) {
        const p = await plant(h, { timeZone })
        const res = await h.inject(p.member, {
          method: 'GET',
          url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=speed&mode=interpolated&interval=1d&from=0001-01-01T00:00:00Z&to=0001-01-04T00:00:00Z`,
        })
        assert.equal(res.statusCode, 200, res.body)
        assert.deepEqual(
          (res.json() as { points: Array<{ ts: string }> }).points.map((x) => x.ts),
          ['0001-01-01T00:00:00.000Z', '0001-01-02T00:00:00.000Z', '0001-01-03T00:00:00.000Z'],
          timeZone,
        )
      }
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a live push's lines are bounded as its JSON is`, () => {
    const shared = sharedHarness(dialect, ENV)

    it('a field longer than the JSON body allows is refused without echoing it: the answer, and the batch that lists refusals, stay small', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const long = (c: string) => c.repeat(100_000)
      const lines = [
        `${long('i')},speed,${NOW},1`,
        `ins_pump,${long('t')},${NOW},1`,
        `ins_pump,speed,${long('9')}Z,1`,
        `ins_pump,speed,${NOW},${long('1')}`,
        `ins_pump,speed,${NOW},1,${long('q')}`,
        `ins_pump,speed,${NOW},2`,
      ]
      const res = await push(h, p, 'long-fields', lines.join('\n'), 'text/plain')
      assert.equal(res.statusCode, 200, res.body.slice(0, 300))
      const answer = res.json() as { stored: number; refusals: Array<{ index: number; reason: string }> }
      assert.deepEqual([answer.stored, answer.refusals.map((r) => r.index)], [1, [0, 1, 2, 3, 4]])
      for (const r of answer.refusals) assert.ok(r.reason.length < 200, r.reason.slice(0, 300))
      assert.ok(res.body.length < 2_000, `answer of ${res.body.length} characters`)
      const batch = await h.inject(p.member, {
        method: 'GET',
        url: `/api/historian/import-batches/${(res.json() as { historianBatchId: string }).historianBatchId}`,
      })
      assert.equal(batch.statusCode, 200)
      assert.ok(batch.body.length < 10_000, `batch of ${batch.body.length} characters`)
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a series read's times as a new user types them`, () => {
    const shared = sharedHarness(dialect, ENV)

    it("an offset's + left unescaped in the URL (read as a space) and a time without an offset are 400s saying what to send", async () => {
      const h = shared()
      const p = await plant(h)
      for (const [query, pointer, hint] of [
        ['from=2024-05-01T00:00:00+02:00', '/from', /\+ .*%2B/],
        ['mode=at&at=2024-05-01T00:00:00.5+05:30', '/at', /\+ .*%2B/],
        ['to=2024-05-01T00:00:00', '/to', /Z or an offset/],
      ] as const) {
        const res = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=speed&${query}` })
        assert.equal(res.statusCode, 400, query)
        const problem = res.json() as { errors: Array<{ in: string; pointer: string; message: string }> }
        assert.deepEqual([problem.errors[0]!.in, problem.errors[0]!.pointer], ['query', pointer], query)
        assert.match(problem.errors[0]!.message, hint, query)
      }
      const escaped = await h.inject(p.member, {
        method: 'GET',
        url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=speed&from=2024-05-01T00:00:00%2B02:00`,
      })
      assert.equal(escaped.statusCode, 200, escaped.body)
      // The same times in the multi-tag read's JSON body: the 400 places them in the body.
      const body = await h.inject(p.member, {
        method: 'POST',
        url: `/api/sites/${p.siteCode}/historian/series/query`,
        payload: { series: [{ instanceId: 'ins_pump', tag: 'speed' }], from: '2024-05-01T00:00:00' },
      })
      assert.equal(body.statusCode, 400, body.body)
      const problem = body.json() as { errors: Array<{ in: string; pointer: string; message: string }> }
      assert.deepEqual([problem.errors[0]!.in, problem.errors[0]!.pointer], ['body', '/from'])
      assert.doesNotMatch(problem.errors[0]!.message, /%2B/)
    })
  })
}
