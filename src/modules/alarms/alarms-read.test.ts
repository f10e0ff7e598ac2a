import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { describe, it } from 'node:test'
import { harness, testDialects, type TestDialect } from '../../../test/harness.ts'
import { MAX_LISTED_HISTORY } from './schemas.ts'
import { addInstances, MIN, type Call } from './test-helpers.ts'

interface Page {
  items: Array<{ alarmId: string; instanceId: string; state: string; priority: string; changedAt: string }>
  nextCursor: string | null
}

const INSTANCES = ['P1', 'P2', 'P3']

async function setup(t: TestContext, dialect: TestDialect) {
  const h = await harness(t, dialect)
  const { org, key } = await h.orgWithKey('admin')
  const as: Call = (method, url, payload) => h.inject({ org, apiKey: key }, { method, url, payload: payload as object })
  assert.equal((await as('POST', '/api/sites', { code: 'S1', name: 'Site 1' })).statusCode, 201)
  await addInstances(as, 'S1', INSTANCES)
  let n = 0
  const t0 = Math.floor(h.clock.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000
  const ev = (instanceId: string, condition: string, state: 'active' | 'normal', at: number, priority = 'high') => ({
    eventId: `e${n++}`,
    instanceId,
    condition,
    priority,
    state,
    occurredAt: new Date(at).toISOString(),
  })
  const post = async (events: ReturnType<typeof ev>[]) => {
    const res = await as('POST', '/api/sites/S1/alarms/events', { events })
    assert.equal(res.statusCode, 200, res.body)
    return (res.json() as { results: Array<{ alarmId: string }> }).results.map((r) => r.alarmId)
  }
  const page = async (query: string) => {
    const res = await as('GET', `/api/sites/S1/alarms${query}`)
    assert.equal(res.statusCode, 200, res.body)
    return res.json() as Page
  }
  return { h, as, ev, post, page, t0 }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: alarm reads`, () => {
    it('the list is newest change first; an alarm that changes moves to the top', async (t) => {
      const { h, as, ev, post, page, t0 } = await setup(t, dialect)
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        ids.push(...(await post([ev('P1', `C${i}`, 'active', t0 + i)])))
        h.clock.advance(1000)
      }
      assert.deepEqual(
        (await page('')).items.map((a) => a.alarmId),
        [ids[2], ids[1], ids[0]],
      )
      await as('POST', `/api/sites/S1/alarms/${ids[0]}/acknowledge`, {})
      assert.deepEqual(
        (await page('')).items.map((a) => a.alarmId),
        [ids[0], ids[2], ids[1]],
      )
    })

    it('limit: default 100, 1 to 1000; 0, negative or 1001 is a 400 naming the bound', async (t) => {
      const { as, ev, post, page, t0 } = await setup(t, dialect)
      await post(Array.from({ length: 101 }, (_, i) => ev(INSTANCES[i % 3]!, `C${i}`, 'active', t0)))
      const first = await page('')
      assert.equal(first.items.length, 100)
      assert.notEqual(first.nextCursor, null)
      assert.equal((await page('?limit=1')).items.length, 1)
      const all = await page('?limit=1000')
      assert.equal(all.items.length, 101)
      assert.equal(all.nextCursor, null)
      for (const [limit, bound] of [
        ['0', '1'],
        ['-5', '1'],
        ['1001', '1000'],
      ] as const) {
        const res = await as('GET', `/api/sites/S1/alarms?limit=${limit}`)
        assert.equal(res.statusCode, 400, limit)
        assert.equal(res.json().errors[0].pointer, '/limit')
        assert.match(res.json().errors[0].message, new RegExp(`\\b${bound}\\b`))
      }
      assert.equal((await as('GET', '/api/sites/S1/alarms?cursor=bogus')).statusCode, 400)
    })

    it('filters by instanceId, state and priority (repeatable) combine', async (t) => {
      const { as, ev, post, page, t0 } = await setup(t, dialect)
      const [a, , c] = await post([ev('P1', 'A', 'active', t0, 'critical'), ev('P2', 'B', 'active', t0, 'low'), ev('P2', 'C', 'active', t0, 'critical')])
      await as('POST', `/api/sites/S1/alarms/${c}/acknowledge`, {})
      const ids = async (q: string) => (await page(q)).items.map((x) => x.alarmId).sort()
      assert.deepEqual(await ids('?instanceId=P2&priority=critical'), [c])
      assert.deepEqual(await ids('?priority=critical'), [a, c].sort())
      assert.deepEqual(await ids('?state=active_acknowledged'), [c])
      assert.equal((await ids('?state=active_unacknowledged&state=active_acknowledged')).length, 3)
      assert.deepEqual(await ids('?instanceId=P3'), [])
      assert.equal((await as('GET', '/api/sites/S1/alarms?state=bogus')).statusCode, 400)
    })

    it('paging while other alarms are inserted concurrently neither skips nor repeats an alarm', async (t) => {
      const { h, ev, post, page, t0 } = await setup(t, dialect)
      const original: string[] = []
      for (let i = 0; i < 30; i++) {
        original.push(...(await post([ev(INSTANCES[i % 3]!, `O${i}`, 'active', t0 + i)])))
        if (i % 4 === 0) h.clock.advance(1) // several alarms share a changedAt: the id breaks ties
      }
      const seen: string[] = []
      let cursor: string | null = null
      let k = 0
      do {
        // A page read racing a batch of inserts, some in the same millisecond as the newest alarms.
        const [p]: [Page, unknown] = await Promise.all([
          page(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`),
          post([ev('P1', `N${k}`, 'active', t0), ev('P2', `N${k}`, 'active', t0)]),
        ])
        if (k % 2 === 0) h.clock.advance(1)
        k++
        seen.push(...p.items.map((x) => x.alarmId))
        cursor = p.nextCursor
      } while (cursor !== null)
      assert.equal(new Set(seen).size, seen.length, 'no alarm repeated')
      for (const id of original) assert.ok(seen.includes(id), `alarm ${id} skipped`)
    })

    it("GET one alarm answers it with its history; another site's alarm is the uniform 404", async (t) => {
      const { as, ev, post, t0 } = await setup(t, dialect)
      const [id] = await post([ev('P1', 'A', 'active', t0)])
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Site 2' })).statusCode, 201)
      const one = await as('GET', `/api/sites/S1/alarms/${id}`)
      assert.equal(one.json().history.length, 1)
      const wrongSite = await as('GET', `/api/sites/S2/alarms/${id}`)
      assert.equal(wrongSite.statusCode, 404)
      assert.equal(wrongSite.json().code, 'NotFound')
    })

    it(`an alarm of more than ${MAX_LISTED_HISTORY} transitions is read with its latest ${MAX_LISTED_HISTORY} (historyTruncated); …/history pages them all, oldest first`, async (t) => {
      const { as, ev, post, t0 } = await setup(t, dialect)
      // One source flapping 1 500 times, never acknowledged: one open alarm, a transition each time.
      const flaps = Array.from({ length: 1500 }, (_, i) => ev('P1', 'FLAP', i % 2 === 0 ? 'active' : 'normal', t0 + i * 1000))
      const [id] = await post(flaps.slice(0, 1000))
      await post(flaps.slice(1000))
      const pages: Array<{ at: string; to: string }> = []
      let cursor = ''
      do {
        const res = await as('GET', `/api/sites/S1/alarms/${id}/history?limit=400${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(res.statusCode, 200, res.body)
        const page = res.json() as { items: Array<{ at: string; to: string }>; nextCursor: string | null }
        pages.push(...page.items)
        cursor = page.nextCursor ?? ''
      } while (cursor)
      assert.equal(pages.length, 1500)
      const one = (await as('GET', `/api/sites/S1/alarms/${id}`)).json() as { history: unknown[]; historyTruncated?: boolean }
      assert.equal(one.historyTruncated, true)
      assert.deepEqual(one.history, pages.slice(-MAX_LISTED_HISTORY))
      // An alarm of few transitions: all of them, no flag; the history of an unknown alarm or with a forged cursor is refused.
      const [few] = await post([ev('P2', 'A', 'active', t0)])
      const whole = (await as('GET', `/api/sites/S1/alarms/${few}`)).json() as { history: unknown[]; historyTruncated?: boolean }
      assert.deepEqual([whole.history.length, whole.historyTruncated], [1, undefined])
      assert.equal((await as('GET', '/api/sites/S1/alarms/alm_none/history')).statusCode, 404)
      assert.equal((await as('GET', `/api/sites/S1/alarms/${id}/history?cursor=x`)).statusCode, 400)
    })

    it('the load endpoint reports a hand-built stream: chattering, a flood, suppressed activations, per-position rates', async (t) => {
      const { h, as, ev, post, t0 } = await setup(t, dialect)
      const S = 1000
      await post([0, 10, 20, 30, 40, 50].map((s, i) => ev('P1', 'HI', i % 2 === 0 ? 'active' : 'normal', t0 + s * S)))
      await post(Array.from({ length: 11 }, (_, i) => ev('P2', `B${i}`, 'active', t0 + 10 * MIN + i * S, 'medium')))
      const [hi] = await post([ev('P1', 'HI', 'normal', t0 + 51 * S)])
      await as('POST', `/api/sites/S1/alarms/${hi}/shelve`, { comment: 'chattering', until: new Date(h.clock.now() + MIN).toISOString() })
      // Occurs inside the shelve (which began at the server's now, three hours after t0): suppressed, not annunciated.
      await post([ev('P1', 'HI', 'active', h.clock.now() + S)])
      const q = `from=${new Date(t0).toISOString()}&to=${new Date(t0 + 60 * MIN).toISOString()}`
      const res = await as('GET', `/api/sites/S1/alarms/load?${q}`)
      assert.equal(res.statusCode, 200, res.body)
      const load = res.json()
      assert.deepEqual(
        [load.activations, load.suppressedActivations, load.intervals, load.averagePer10MinPerPosition, load.peakPer10MinPerPosition],
        [14, 0, 6, 2.333, 11],
      )
      const whole = (await as('GET', `/api/sites/S1/alarms/load?from=${new Date(t0).toISOString()}&to=${new Date(t0 + 5 * 60 * MIN).toISOString()}`)).json()
      assert.deepEqual([whole.activations, whole.suppressedActivations, whole.byPriority.high], [14, 1, 3], 'the activation while shelved is counted apart')
      assert.equal(load.floods.length, 1)
      assert.equal(load.floods[0].start, new Date(t0 + 10 * MIN).toISOString())
      assert.equal(load.percentTimeInFlood, 16.667)
      assert.deepEqual(load.chattering, [{ instanceId: 'P1', condition: 'HI', activations: 3, maxInWindow: 3 }])
      assert.deepEqual(load.byPriority, { critical: 0, high: 3, medium: 11, low: 0 })
      const two = (await as('GET', `/api/sites/S1/alarms/load?${q}&operatorPositions=2`)).json()
      assert.deepEqual([two.peakPer10MinPerPosition, two.floods.length], [5.5, 0])
    })

    it('the load period must be forward and at most 31 days', async (t) => {
      const { as, t0 } = await setup(t, dialect)
      const iso = (ms: number) => new Date(ms).toISOString()
      for (const [from, to] of [
        [t0, t0],
        [t0, t0 - 1],
        [t0, t0 + 31 * 86_400_000 + 1],
      ]) {
        const res = await as('GET', `/api/sites/S1/alarms/load?from=${iso(from!)}&to=${iso(to!)}`)
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().errors[0].pointer, '/to')
      }
      assert.equal((await as('GET', `/api/sites/S1/alarms/load?from=${iso(t0)}&to=${iso(t0 + 31 * 86_400_000)}`)).statusCode, 200)
      assert.equal((await as('GET', `/api/sites/S1/alarms/load?from=${iso(t0)}`)).statusCode, 400)
    })
  })
}
