import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Counter, Histogram, Registry } from 'prom-client'
import { createMetrics, DURATION_BUCKETS } from './metrics.ts'

const NAMES = ['sitegrid_http_requests_total', 'sitegrid_http_request_duration_seconds']

/** The two answer metrics as prom-client writes them when every answer is observed as it comes (before session 20). */
function observedOneByOne() {
  const registry = new Registry()
  const registers = [registry]
  const requests = new Counter({
    name: NAMES[0]!,
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    registers,
  })
  const durations = new Histogram({
    name: NAMES[1]!,
    help: 'Time from a request arriving to its answer sent, by route pattern and method',
    labelNames: ['route', 'method'],
    buckets: [...DURATION_BUCKETS],
    registers,
  })
  return {
    registry,
    request(route: string, method: string, status: number, seconds: number) {
      requests.inc({ route, method, status: String(status) })
      durations.observe({ route, method }, seconds)
    },
  }
}

const text = async (registry: Registry) => (await Promise.all(NAMES.map((name) => registry.getSingleMetricAsString(name)))).join('\n')
const json = async (registry: Registry) => (await registry.getMetricsAsJSON()).filter((m) => NAMES.includes(m.name))

describe('request metrics', () => {
  it('/metrics reads exactly as if every answer had been observed by prom-client as it came, scrape after scrape', async () => {
    const kept = createMetrics({
      poolStats: () => ({
        size: 1,
        open: 1,
        idle: 1,
        waiting: 0,
        acquired: 0,
        waited: 0,
        acquireSeconds: 0,
        timeouts: { statement: 0, query: 0, connect: 0, busy: 0 },
      }),
    })
    const observed = observedOneByOne()
    // Series interleaved so that first-seen order differs from grouping; durations on a bound, between bounds,
    // past the last bound and zero; sums of many small values (the same float additions in the same order).
    const answers: Array<[string, string, number, number]> = [
      ['/api/admin/api-keys/', 'GET', 200, 0.005],
      ['/api/sites/:code', 'GET', 404, 0.0123],
      ['/api/admin/api-keys/', 'GET', 401, 0],
      ['/api/admin/api-keys/', 'POST', 201, 0.1],
      ['(unmatched)', 'GET', 404, 200],
      ['/api/sites/:code', 'GET', 200, 120],
      ['/api/admin/api-keys/', 'GET', 200, 0.0051],
    ]
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 50; i++) {
        for (const [route, method, status, seconds] of answers) {
          const s = seconds * (1 + i / 7)
          kept.request(route, method, status, s)
          observed.request(route, method, status, s)
        }
      }
      assert.equal(await text(kept.registry), await text(observed.registry))
      assert.deepEqual(await json(kept.registry), await json(observed.registry))
      answers.push(['/api/me', 'GET', 200 + round, 0.02 * round])
    }
  })
})
