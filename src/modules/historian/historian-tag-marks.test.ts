import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Harness } from '../../../test/harness.ts'
import { testDialects } from '../../../test/harness.ts'
import { plant, standardParts, upload, sharedHarness, type Plant } from './test-setup.ts'

// Issue 30, tags marked discrete: a tag's stored interpolation decides how the series reads join its samples when the
// query names none. Every value computed by hand in the comments.
//
// Tag `a` (ins_pump), 2024-05-01 UTC: 00:00 → 0, 01:00 → 10, 01:30 → 100 (bad quality, excluded), 02:00 → 20,
// 06:00 → 0. Tag `p` (ins_pump): 00:00 → 5, 00:01 → 3.
const DAY = '2024-05-01T'

async function seed(h: Harness): Promise<Plant> {
  const p = await plant(h)
  await h.handle.db
    .updateTable('instances')
    .set({ tag_mappings: JSON.stringify({ a: 'N7:0', p: 'N7:1', q: 'N7:2' }), tag_count: 3 })
    .where('org_id', '=', p.owner.org.id)
    .where('id', 'in', ['ins_pump', 'ins_motor'])
    .execute()
  const rows = ['00:00,A,0,100', '01:00,A,10,100', '01:30,A,100,0', '02:00,A,20,100', '06:00,A,0,100', '00:00,P,5,100', '00:01,P,3,100']
  const trend = `timestamp,tag,value,quality\n${rows.map((r) => `${DAY}${r.replace(',', ':00Z,')}`).join('\n')}\n`
  const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, 'historian_tag,instance_id,tag_key\nA,ins_pump,a\nP,ins_pump,p\n'))
  assert.equal(res.statusCode, 201, res.body)
  return p
}

const tagUrl = (p: Plant, instanceId: string, tag: string) => `/api/sites/${p.siteCode}/historian/tags/${instanceId}/${tag}`
const mark = (h: Harness, p: Plant, instanceId: string, tag: string, body: unknown, who: 'owner' | 'member' = 'owner') =>
  h.inject(who === 'owner' ? p.owner : p.member, { method: 'PUT', url: tagUrl(p, instanceId, tag), payload: body as object })
const unmark = (h: Harness, p: Plant, instanceId: string, tag: string) => h.inject(p.owner, { method: 'DELETE', url: tagUrl(p, instanceId, tag) })

async function listed(
  h: Harness,
  p: Plant,
  query = '',
): Promise<{ items: Array<{ instanceId: string; tag: string; interpolation: string }>; nextCursor: string | null }> {
  const res = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/tags${query}` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}
const marksOf = async (h: Harness, p: Plant) => (await listed(h, p)).items.map((m) => `${m.instanceId}/${m.tag}=${m.interpolation}`)

/** `[hh:mm, value]` of each point, the value rounded to 6 decimals. */
const points = (answer: { points: Array<{ ts: string; value: number | null }> }) =>
  answer.points.map((x) => [x.ts.slice(11, 16), x.value === null ? null : Math.round(x.value * 1e6) / 1e6])

for (const dialect of testDialects()) {
  describe(`${dialect}: historian tag marks`, () => {
    const shared = sharedHarness(dialect)

    it('reads a tag marked step as stair-steps in interpolated, at, aggregate and multi-tag reads; the query overrides; unmarked is linear', async () => {
      const h = shared()
      const p = await seed(h)
      const read = async (query: string) => {
        const res = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=a&${query}` })
        assert.equal(res.statusCode, 200, res.body)
        return res.json()
      }
      const grid = `mode=interpolated&interval=30m&from=${DAY}00:30:00Z&to=${DAY}03:00:00Z`
      const at = `mode=at&at=${DAY}00:30:00Z`
      const bucket = `bucket=1h&from=${DAY}00:00:00Z&to=${DAY}01:00:00Z`
      const many = async (series: object[], shared: object = {}) => {
        const res = await h.inject(p.member, {
          method: 'POST',
          url: `/api/sites/${p.siteCode}/historian/series/query`,
          payload: { series, mode: 'at', at: `${DAY}00:00:30Z`, ...shared },
        })
        assert.equal(res.statusCode, 200, res.body)
        return res.json().items.map((i: { points: Array<{ value: number }> }) => Math.round(i.points[0]!.value * 1e6) / 1e6)
      }
      const pairs = [
        { instanceId: 'ins_pump', tag: 'a' },
        { instanceId: 'ins_pump', tag: 'p' },
      ]

      // Unmarked: linear. 00:30 halfway 0 → 10: 5; 01:30 bridges the bad sample, 10 → 20: 15; 02:30 on 20 → 0 over 4 h: 17.5.
      const linear = [
        ['00:30', 5],
        ['01:00', 10],
        ['01:30', 15],
        ['02:00', 20],
        ['02:30', 17.5],
      ]
      assert.deepEqual(points(await read(grid)), linear)
      assert.deepEqual(points(await read(at)), [['00:30', 5]])
      // The time-weighted average of 0 → 10 over the hour: 5.
      assert.equal((await read(bucket)).buckets[0].timeWeightedAverage, 5)
      // At 00:00:30, a: 10 · 30/3600 = 0.083333; p: halfway 5 → 3: 4.
      assert.deepEqual(await many(pairs), [0.083333, 4])

      const res = await mark(h, p, 'ins_pump', 'a', { interpolation: 'step' })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual([res.json().instanceId, res.json().tag, res.json().interpolation], ['ins_pump', 'a', 'step'])

      // Marked step: each value holds until the next sample.
      const step = [
        ['00:30', 0],
        ['01:00', 10],
        ['01:30', 10],
        ['02:00', 20],
        ['02:30', 20],
      ]
      assert.deepEqual(points(await read(grid)), step)
      assert.deepEqual(points(await read(at)), [['00:30', 0]])
      assert.equal((await read(bucket)).buckets[0].timeWeightedAverage, 0)
      // The mark is a's alone: p stays linear; the shared interpolation and the pair's override the mark.
      assert.deepEqual(await many(pairs), [0, 4])
      assert.deepEqual(await many(pairs, { interpolation: 'linear' }), [0.083333, 4])
      assert.deepEqual(
        await many([
          { ...pairs[0], interpolation: 'linear' },
          { ...pairs[1], interpolation: 'step' },
        ]),
        [0.083333, 5],
      )
      // CSV reads the same signal.
      const csv = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=a&${at}&format=csv` })
      assert.equal(csv.body, 'instanceId,tag,ts,value\r\nins_pump,a,2024-05-01T00:30:00.000Z,0\r\n')

      // The query's interpolation still wins.
      assert.deepEqual(points(await read(`${grid}&interpolation=linear`)), linear)
      assert.equal((await read(`${bucket}&interpolation=linear`)).buckets[0].timeWeightedAverage, 5)

      // A linear mark reads linearly, and the query's step still wins over it.
      assert.equal((await mark(h, p, 'ins_pump', 'a', { interpolation: 'linear' })).statusCode, 200)
      assert.deepEqual(points(await read(grid)), linear)
      assert.deepEqual(points(await read(`${grid}&interpolation=step`)), step)

      // Back to step, then deleted: the default, linear.
      assert.equal((await mark(h, p, 'ins_pump', 'a', { interpolation: 'step' })).statusCode, 200)
      assert.deepEqual(points(await read(grid)), step)
      assert.equal((await unmark(h, p, 'ins_pump', 'a')).statusCode, 204)
      assert.deepEqual(points(await read(grid)), linear)
      assert.deepEqual(await marksOf(h, p), [])
    })

    it('PUT/GET/DELETE: statuses, problems naming the field, nothing written on a refusal, paging, the policy, and marks go with their instance', async () => {
      const h = shared()
      const p = await seed(h)
      // Unknown site or instance: 404.
      assert.equal(
        (await h.inject(p.owner, { method: 'PUT', url: '/api/sites/nowhere/historian/tags/ins_pump/a', payload: { interpolation: 'step' } })).statusCode,
        404,
      )
      assert.equal((await mark(h, p, 'ins_nope', 'a', { interpolation: 'step' })).statusCode, 404)
      assert.equal((await unmark(h, p, 'ins_nope', 'a')).statusCode, 404)
      assert.equal((await h.inject(p.member, { method: 'GET', url: '/api/sites/nowhere/historian/tags' })).statusCode, 404)
      // A tag key the instance does not map: 422 naming `tag` (ins_boiler1 maps none).
      for (const [instanceId, tag] of [
        ['ins_pump', 'zz'],
        ['ins_boiler1', 'a'],
      ]) {
        const res = await mark(h, p, instanceId!, tag!, { interpolation: 'step' })
        assert.equal(res.statusCode, 422, res.body)
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
        assert.deepEqual(
          res.json().errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
          [['params', '/tag']],
        )
      }
      // A bad body: 400 naming the field.
      for (const body of [{ interpolation: 'cubic' }, {}, { interpolation: 'step', extra: 1 }, { interpolation: 1 }]) {
        const res = await mark(h, p, 'ins_pump', 'a', body)
        assert.equal(res.statusCode, 400, JSON.stringify(body))
        assert.match(res.body, /interpolation|extra/)
      }
      // Members read; only admins write.
      assert.equal((await mark(h, p, 'ins_pump', 'a', { interpolation: 'step' }, 'member')).statusCode, 403)
      assert.equal((await h.inject(p.member, { method: 'DELETE', url: tagUrl(p, 'ins_pump', 'a') })).statusCode, 403)
      assert.deepEqual(await marksOf(h, p), [])

      // Paged by instance id then tag key.
      for (const [instanceId, tag, interpolation] of [
        ['ins_pump', 'p', 'linear'],
        ['ins_motor', 'q', 'step'],
        ['ins_pump', 'a', 'step'],
      ])
        assert.equal((await mark(h, p, instanceId!, tag!, { interpolation })).statusCode, 200)
      const first = await listed(h, p, '?limit=2')
      assert.deepEqual(
        first.items.map((m) => `${m.instanceId}/${m.tag}=${m.interpolation}`),
        ['ins_motor/q=step', 'ins_pump/a=step'],
      )
      const second = await listed(h, p, `?limit=2&cursor=${first.nextCursor}`)
      assert.deepEqual(
        second.items.map((m) => `${m.instanceId}/${m.tag}=${m.interpolation}`),
        ['ins_pump/p=linear'],
      )
      assert.equal(second.nextCursor, null)
      assert.equal((await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/tags?cursor=bogus` })).statusCode, 400)

      // DELETE: 204, also when there is no mark (the default already).
      assert.equal((await unmark(h, p, 'ins_pump', 'p')).statusCode, 204)
      assert.equal((await unmark(h, p, 'ins_pump', 'p')).statusCode, 204)
      assert.deepEqual(await marksOf(h, p), ['ins_motor/q=step', 'ins_pump/a=step'])

      // Deleting the instance deletes its marks.
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/sites/${p.siteCode}/instances/ins_motor` })).statusCode, 204)
      assert.deepEqual(await marksOf(h, p), ['ins_pump/a=step'])
    })
  })
}
