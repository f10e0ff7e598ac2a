import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Harness } from '../../../test/harness.ts'
import { testDialects } from '../../../test/harness.ts'
import { MAX_JSON_POINTS } from './service/series.ts'
import { plant, standardParts, upload, sharedHarness, type Plant } from './test-setup.ts'

// Issue 30, the retrieval modes: known series, every answer computed by hand in the comments.
//
// Tag `a` (ins_pump), 2024-05-01 UTC: 00:00 → 0, 01:00 → 10, 01:30 → 100 (bad quality), 02:00 → 20, 06:00 → 0 (a 4 h
// gap), nothing after. Tag `p`: ten samples a minute apart from 00:00, 5 3 8 1 9 2 7 4 6 5.
const DAY = '2024-05-01T'
const A_ROWS = [
  ['00:00', 0, 100],
  ['01:00', 10, 100],
  ['01:30', 100, 0],
  ['02:00', 20, 100],
  ['06:00', 0, 100],
] as const
const P_VALUES = [5, 3, 8, 1, 9, 2, 7, 4, 6, 5]

async function seed(h: Harness, timeZone = 'UTC'): Promise<Plant> {
  const p = await plant(h, { timeZone })
  const rows = [
    ...A_ROWS.map(([time, value, quality]) => `${DAY}${time}:00Z,A,${value},${quality}`),
    ...P_VALUES.map((value, i) => `${DAY}00:0${i}:00Z,P,${value},100`),
  ]
  const res = await upload(
    h,
    p.owner,
    standardParts(p.siteCode, 'long', `timestamp,tag,value,quality\n${rows.join('\n')}\n`, 'historian_tag,instance_id,tag_key\nA,ins_pump,a\nP,ins_pump,p\n'),
  )
  assert.equal(res.statusCode, 201, res.body)
  return p
}

async function read(h: Harness, p: Plant, query: string) {
  const res = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/series?${query}` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** `[hh:mm, value]` of each point, the value rounded to 6 decimals. */
const points = (answer: { points: Array<{ ts: string; value: number | null }> }) =>
  answer.points.map((p) => [p.ts.slice(11, 16), p.value === null ? null : Math.round(p.value * 1e6) / 1e6])

const round = (v: number | null) => (v === null ? null : Math.round(v * 1e6) / 1e6)

for (const dialect of testDialects()) {
  describe(`${dialect}: historian retrieval modes`, () => {
    const shared = sharedHarness(dialect)

    it('interpolated: linear across the gap and the excluded bad sample, null before the first sample, the last value held after the last', async () => {
      const h = shared()
      const p = await seed(h)
      const hourly = await read(h, p, `instanceId=ins_pump&tag=a&mode=interpolated&interval=1h&from=2024-04-30T23:00:00Z&to=${DAY}08:00:00Z`)
      assert.equal(hourly.mode, 'interpolated')
      // 20 at 02:00 to 0 at 06:00: 5 less an hour.
      assert.deepEqual(points(hourly), [
        ['23:00', null],
        ['00:00', 0],
        ['01:00', 10],
        ['02:00', 20],
        ['03:00', 15],
        ['04:00', 10],
        ['05:00', 5],
        ['06:00', 0],
        ['07:00', 0],
      ])
      // 01:30 lies between 10 (01:00) and 20 (02:00): 15; with the bad sample used, its own 100.
      const half = `instanceId=ins_pump&tag=a&mode=interpolated&interval=30m&from=${DAY}01:15:00Z&to=${DAY}01:46:00Z`
      assert.deepEqual(points(await read(h, p, half)), [
        ['01:15', 12.5],
        ['01:45', 17.5],
      ])
      assert.deepEqual(points(await read(h, p, half.replace('01:15', '01:30'))), [['01:30', 15]])
      assert.deepEqual(points(await read(h, p, `${half.replace('01:15', '01:30')}&includeBad=true`)), [['01:30', 100]])
    })

    it('interpolated stair-step: each value holds until the next sample; pages by grid index', async () => {
      const h = shared()
      const p = await seed(h)
      const query = `instanceId=ins_pump&tag=a&mode=interpolated&interpolation=step&interval=30m&from=${DAY}00:30:00Z&to=${DAY}03:00:00Z`
      const first = await read(h, p, `${query}&limit=3`)
      assert.deepEqual(points(first), [
        ['00:30', 0],
        ['01:00', 10],
        ['01:30', 10],
      ])
      const second = await read(h, p, `${query}&limit=3&cursor=${first.nextCursor}`)
      assert.deepEqual(points(second), [
        ['02:00', 20],
        ['02:30', 20],
      ])
      assert.equal(second.nextCursor, null)
    })

    it('interpolated by days steps local days in the site zone: 23 hours across the spring change, unlike UTC days', async () => {
      const h = shared()
      const p = await plant(h, { timeZone: 'Europe/Paris' })
      // Local midnights: 31 March 00:00 CET (30T23:00Z) → 0, 2 April 00:00 CEST (1T22:00Z) → 47, i.e. 1 an hour.
      const trend = 'timestamp,tag,value\n2024-03-30T23:00:00Z,D,0\n2024-04-01T22:00:00Z,D,47\n'
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, 'historian_tag,instance_id,tag_key\nD,ins_pump,d\n'))
      assert.equal(res.statusCode, 201, res.body)
      const query = 'instanceId=ins_pump&tag=d&mode=interpolated&interval=1d&from=2024-03-29T23:00:00Z&to=2024-04-03T00:00:00Z'
      const local = await read(h, p, query)
      assert.deepEqual(
        local.points.map((x: { ts: string; value: number | null }) => [x.ts, x.value]),
        [
          ['2024-03-29T23:00:00.000Z', null],
          ['2024-03-30T23:00:00.000Z', 0],
          ['2024-03-31T22:00:00.000Z', 23],
          ['2024-04-01T22:00:00.000Z', 47],
          ['2024-04-02T22:00:00.000Z', 47],
        ],
      )
      const utc = await read(h, p, `${query}&timezone=UTC`)
      assert.deepEqual(
        utc.points.map((x: { ts: string; value: number | null }) => [x.ts, x.value]),
        [
          ['2024-03-29T23:00:00.000Z', null],
          ['2024-03-30T23:00:00.000Z', 0],
          ['2024-03-31T23:00:00.000Z', 24],
          ['2024-04-01T23:00:00.000Z', 47],
          ['2024-04-02T23:00:00.000Z', 47],
        ],
      )
    })

    it('aggregates: time-weighted average, standard deviation and the others per bucket, bad samples out unless asked, edges clipped to [from, to)', async () => {
      const h = shared()
      const p = await seed(h)
      const query = `instanceId=ins_pump&tag=a&bucket=2h&from=${DAY}00:00:00Z&to=${DAY}08:00:00Z`
      const buckets = (await read(h, p, query)).buckets.map((b: Record<string, number | null>) => ({
        ...b,
        timeWeightedAverage: round(b.timeWeightedAverage!),
        stdDev: round(b.stdDev!),
      }))
      // 00–02: trapezoids (0+10)/2·60 + (10+20)/2·60 = 1 200 over 120 min → 10; values 0, 10: sd √50.
      // 02–04: 20 at 02:00 to 10 at 04:00 (the signal at the edge) → 15. 04–06: no sample, absent. 06–08: 0 held.
      assert.deepEqual(buckets, [
        { start: `${DAY}00:00:00.000Z`, min: 0, max: 10, mean: 5, timeWeightedAverage: 10, stdDev: round(Math.sqrt(50)), first: 0, last: 10, count: 2 },
        { start: `${DAY}02:00:00.000Z`, min: 20, max: 20, mean: 20, timeWeightedAverage: 15, stdDev: null, first: 20, last: 20, count: 1 },
        { start: `${DAY}06:00:00.000Z`, min: 0, max: 0, mean: 0, timeWeightedAverage: 0, stdDev: null, first: 0, last: 0, count: 1 },
      ])
      // With the bad 100 at 01:30: 300 + (10+100)/2·30 + (100+20)/2·30 = 3 750 over 120 → 31.25; mean 110/3.
      const withBad = (await read(h, p, `${query}&includeBad=true`)).buckets[0]
      assert.deepEqual([withBad.count, withBad.max, round(withBad.mean), withBad.timeWeightedAverage], [3, 100, round(110 / 3), 31.25])
      // Stair-step: 0·60 + 10·60 = 600 over 120 → 5; then 20 held to 04:00.
      const step = (await read(h, p, `${query}&interpolation=step`)).buckets
      assert.deepEqual(
        step.map((b: { timeWeightedAverage: number }) => b.timeWeightedAverage),
        [5, 20, 0],
      )
      // From 01:00 the first bucket is [01:00, 02:00): (10+20)/2 → 15, one sample.
      const clipped = (await read(h, p, query.replace('from=2024-05-01T00:00', 'from=2024-05-01T01:00'))).buckets[0]
      assert.deepEqual([clipped.start, clipped.count, clipped.timeWeightedAverage], [`${DAY}00:00:00.000Z`, 1, 15])
    })

    it('value at a time: null before the first sample, interpolated between, held after the last', async () => {
      const h = shared()
      const p = await seed(h)
      const at = async (time: string, extra = '') => points(await read(h, p, `instanceId=ins_pump&tag=a&mode=at&at=${time}${extra}`))[0]![1]
      assert.equal(await at('2024-04-30T12:00:00Z'), null)
      assert.equal(await at(`${DAY}03:30:00Z`), 12.5)
      assert.equal(await at(`${DAY}03:30:00Z`, '&interpolation=step'), 20)
      assert.equal(await at('2024-06-01T00:00:00Z'), 0)
      const unknown = await read(h, p, 'instanceId=ins_pump&tag=nothing&mode=at&at=2024-05-01T00:00:00Z')
      assert.deepEqual(unknown.points, [{ ts: `${DAY}00:00:00.000Z`, value: null }])
    })

    it('plot: the first, last, lowest and highest sample of each pixel column, at most 4 a column, oldest first', async () => {
      const h = shared()
      const p = await seed(h)
      const plot = async (width: number) =>
        points(await read(h, p, `instanceId=ins_pump&tag=p&mode=plot&width=${width}&from=${DAY}00:00:00Z&to=${DAY}00:10:00Z`)).map(([t, v]) => `${t}=${v}`)
      assert.deepEqual(await plot(1), ['00:00=5', '00:03=1', '00:04=9', '00:09=5'])
      // [00:00, 00:05): 5 first, 1 lowest, 9 highest and last; [00:05, 00:10): 2 first and lowest, 7 highest, 5 last.
      assert.deepEqual(await plot(2), ['00:00=5', '00:03=1', '00:04=9', '00:05=2', '00:06=7', '00:09=5'])
      assert.equal((await plot(10)).length, 10)
    })

    it('many tags in one request: each answered in order, a tag without samples answers empty, a pair asked twice is a 400 naming it, another organisation gets the uniform 404', async () => {
      const h = shared()
      const p = await seed(h)
      const url = `/api/sites/${p.siteCode}/historian/series/query`
      const series = [
        { instanceId: 'ins_pump', tag: 'a' },
        { instanceId: 'ins_pump', tag: 'p', interpolation: 'step' },
        { instanceId: 'ins_motor', tag: 'none' },
      ]
      const res = await h.inject(p.member, {
        method: 'POST',
        url,
        payload: { series, mode: 'interpolated', interval: '30s', from: `${DAY}00:00:00Z`, to: `${DAY}00:01:00Z` },
      })
      assert.equal(res.statusCode, 200, res.body)
      const items = res.json().items
      assert.deepEqual(
        items.map((i: { tag: string }) => i.tag),
        ['a', 'p', 'none'],
      )
      // a: 0 → 10 over the hour: 00:00:30 is 1/120 of it. p (step): 5 until 00:01.
      assert.deepEqual(
        items.map((i: { points: Array<{ value: number | null }> }) => i.points.map((x) => round(x.value))),
        [
          [0, round(10 / 120)],
          [5, 5],
          [null, null],
        ],
      )
      const twice = await h.inject(p.member, { method: 'POST', url, payload: { series: [series[0], series[0]], mode: 'raw' } })
      assert.equal(twice.statusCode, 400)
      assert.equal(twice.json().code, 'ValidationFailed')
      assert.equal(twice.json().errors[0].pointer, '/series/1')
      const none = await h.inject(p.member, { method: 'POST', url, payload: { series: [], mode: 'raw' } })
      assert.equal(none.statusCode, 400)
      // The site read by another organisation's key (the query and a CSV export): the uniform 404.
      const stranger = await h.orgWithKey('owner')
      const foreign = { org: stranger.org, apiKey: stranger.key }
      for (const read of [
        { method: 'POST' as const, url, payload: { series, mode: 'at', at: `${DAY}03:30:00Z` } },
        { method: 'GET' as const, url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=a&mode=at&at=${DAY}03:30:00Z&format=csv` },
      ]) {
        const refused = await h.inject(foreign, read)
        assert.equal(refused.statusCode, 404)
        assert.equal(refused.json().code, 'NotFound')
      }
    })

    it(`many tags as JSON: at most ${MAX_JSON_POINTS} points in all (series × limit, or 4 a column of width in plot); past it a 400 naming the field, the CSV form streams`, async () => {
      const h = shared()
      const p = await seed(h)
      const url = `/api/sites/${p.siteCode}/historian/series/query`
      const series = Array.from({ length: 100 }, (_, i) => ({ instanceId: 'ins_pump', tag: i === 0 ? 'a' : `t${i}` }))
      const ask = (payload: object) =>
        h.inject(p.member, { method: 'POST', url, payload: { series, from: `${DAY}00:00:00Z`, to: `${DAY}06:30:00Z`, ...payload } })
      for (const [payload, field] of [
        [{ mode: 'raw', limit: MAX_JSON_POINTS / 100 + 1 }, '/limit'],
        [{ mode: 'plot', width: MAX_JSON_POINTS / 400 + 1 }, '/width'],
      ] as const) {
        const refused = await ask(payload)
        assert.equal(refused.statusCode, 400, refused.body)
        assert.equal(refused.json().errors[0].pointer, field)
        assert.match(refused.json().errors[0].message, /format=csv/)
      }
      const raw = await ask({ mode: 'raw', limit: MAX_JSON_POINTS / 100 })
      assert.equal(raw.statusCode, 200, raw.body.slice(0, 500))
      assert.equal(raw.json().items[0].samples.length, A_ROWS.length)
      const plot = await ask({ mode: 'plot', width: MAX_JSON_POINTS / 400 })
      assert.equal(plot.statusCode, 200, plot.body.slice(0, 500))
      assert.equal(plot.json().items.length, 100)
      const csv = await ask({ mode: 'raw', limit: 10_000, format: 'csv' })
      assert.equal(csv.statusCode, 200, csv.body.slice(0, 500))
      assert.equal(csv.body.trim().split('\n').length, 1 + A_ROWS.length)
    })

    it('CSV export streams every row of the query across pages, and of many tags under one header', async () => {
      const h = shared()
      const p = await seed(h)
      // 3 hours a second: 10 800 rows, three internal pages of 5 000.
      const res = await h.inject(p.member, {
        method: 'GET',
        url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=a&mode=interpolated&interval=1s&from=${DAY}00:00:00Z&to=${DAY}03:00:00Z&format=csv&limit=10`,
      })
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^text\/csv/)
      const lines = res.body.trimEnd().split('\r\n')
      assert.equal(lines.length, 1 + 10_800)
      assert.equal(lines[0], 'instanceId,tag,ts,value')
      assert.equal(lines[1], `ins_pump,a,${DAY}00:00:00.000Z,0`)
      assert.equal(lines[3601], `ins_pump,a,${DAY}01:00:00.000Z,10`)
      // 02:59:59 between 20 (02:00) and 0 (06:00), as the database computes it: 20 + (0 − 20) · 3 599 s / 14 400 s.
      assert.equal(lines[10_800], `ins_pump,a,${DAY}02:59:59.000Z,${20 + (-20 * 3_599_000) / 14_400_000}`)
      const many = await h.inject(p.member, {
        method: 'POST',
        url: `/api/sites/${p.siteCode}/historian/series/query`,
        payload: {
          series: [
            { instanceId: 'ins_pump', tag: 'a' },
            { instanceId: 'ins_pump', tag: 'p' },
          ],
          bucket: '1h',
          format: 'csv',
        },
      })
      assert.equal(many.statusCode, 200)
      const rows = many.body.trimEnd().split('\r\n')
      assert.equal(rows[0], 'instanceId,tag,start,min,max,mean,timeWeightedAverage,stdDev,first,last,count')
      assert.deepEqual(
        rows.slice(1).map((r) => r.split(',').slice(0, 3).join(',')),
        [
          'ins_pump,a,2024-05-01T00:00:00.000Z',
          'ins_pump,a,2024-05-01T01:00:00.000Z',
          'ins_pump,a,2024-05-01T02:00:00.000Z',
          'ins_pump,a,2024-05-01T06:00:00.000Z',
          'ins_pump,p,2024-05-01T00:00:00.000Z',
        ],
      )
    })

    it('a bad query is a 400 naming the field, for every mode', async () => {
      const h = shared()
      const p = await seed(h)
      const base = 'instanceId=ins_pump&tag=a'
      const cases: Array<[string, string]> = [
        ['mode=interpolated&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z', '/interval'],
        ['mode=interpolated&interval=1h&to=2024-05-02T00:00:00Z', '/from'],
        ['mode=interpolated&interval=5x&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z', '/interval'],
        ['mode=interpolated&interval=1d&timezone=Mars/Olympus&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z', '/timezone'],
        ['mode=aggregate', '/bucket'],
        ['mode=raw&bucket=1h', '/bucket'],
        ['mode=at', '/at'],
        ['mode=at&at=yesterday', '/at'],
        ['mode=plot&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z', '/width'],
        ['mode=plot&width=0&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z', '/width'],
        ['mode=sideways', '/mode'],
        ['bucket=1h&from=2024-05-02T00:00:00Z&to=2024-05-01T00:00:00Z', '/to'],
        ['mode=at&at=2024-05-01T00:00:00Z&format=csv&cursor=nonsense', '/cursor'],
        // A grid index is a whole number from 0: [-5] as a cursor.
        ['mode=interpolated&interval=1h&from=2024-05-01T00:00:00Z&to=2024-05-02T00:00:00Z&format=csv&cursor=Wy01XQ', '/cursor'],
      ]
      for (const [query, pointer] of cases) {
        const res = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/series?${base}&${query}` })
        assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
        assert.equal(res.json().code, 'ValidationFailed', query)
        assert.equal(res.json().errors[0].pointer, pointer, query)
      }
    })
  })
}
