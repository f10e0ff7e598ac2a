// Issue 14, timing: does the time of a refused API key tell whether the key exists? Loopback HTTP, SQLite.
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { Agent, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { harness } from '../harness.ts'
import { NO_RATE_LIMIT } from './support.ts'
import { LINK_HEADERS, seedCloudLink } from '../support/fleet-link.ts'

/** Requests per kind; 10 000 by default (issue 14). SITEGRID_TIMING_SAMPLES lowers it on a machine too loaded for that. */
const SAMPLES = Number(process.env.SITEGRID_TIMING_SAMPLES ?? 10_000)
const WARM_UP = 300
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const base62 = (n: number) => Array.from({ length: n }, () => BASE62[randomInt(62)]).join('')

type Kind = 'wrong' | 'unknown' | 'malformed'

function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q
  const lo = Math.floor(at)
  return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (at - lo)
}

/** erfc by Numerical Recipes' Chebyshev fit (|error| < 1.2e-7), for the normal approximation's p-value. */
function erfc(x: number): number {
  const z = Math.abs(x)
  const t = 1 / (1 + 0.5 * z)
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    )
  return x >= 0 ? r : 2 - r
}

/**
 * Mann-Whitney U of `a` against `b` (midranks for ties), the two-sided p-value of the normal approximation with
 * the tie correction, and the Vargha-Delaney effect size A = U/(n·m): the probability that a request of `a` takes
 * longer than one of `b` (ties count half). A = 0.5 is no difference at all.
 */
export function mannWhitney(a: number[], b: number[]): { u: number; p: number; a12: number } {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) => x.v - y.v)
  let rankSumA = 0
  let tieTerm = 0
  for (let i = 0; i < all.length; ) {
    let j = i
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++
    const midrank = (i + j) / 2 + 1
    for (let k = i; k <= j; k++) if (all[k]!.g === 0) rankSumA += midrank
    const t = j - i + 1
    tieTerm += t ** 3 - t
    i = j + 1
  }
  const n = a.length
  const m = b.length
  const u = rankSumA - (n * (n + 1)) / 2
  const mean = (n * m) / 2
  const sd = Math.sqrt(((n * m) / 12) * (n + m + 1 - tieTerm / ((n + m) * (n + m - 1))))
  const z = (u - mean) / sd
  return { u, p: erfc(Math.abs(z) / Math.SQRT2), a12: u / (n * m) }
}

describe('sqlite: timing of refused API keys over loopback HTTP', () => {
  it(`wrong-key (a real key's prefix, wrong secret) and unknown-key requests, interleaved at random with malformed ones (${SAMPLES} each), are not told apart: Vargha-Delaney |A − 0.5| < 0.06 (negligible) on the Mann-Whitney U`, async (t) => {
    // The criterion is an effect size, not a timing threshold nor a p-value: with 10 000 samples a U test finds
    // "significant" differences of nanoseconds that no attacker can use over a network, while A says how often
    // one kind is slower than the other. |A − 0.5| < 0.06 is Vargha & Delaney's (2000) "negligible" band: an
    // attacker who times one request of each kind guesses which is which right < 56 % of the time.
    const h = await harness(t, 'sqlite', { ...NO_RATE_LIMIT, SITEGRID_LOG_LEVEL: 'warn' })
    const { org, key } = await h.orgWithKey('owner')
    await h.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = h.app.server.address() as AddressInfo
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const host = `${org.slug}.localhost`
    const prefix = key.slice(0, 8) // `csk_` + the 4 characters a key list shows
    const credential: Record<Kind, () => string> = {
      wrong: () => prefix + base62(28),
      unknown: () => `csk_${base62(32)}`,
      malformed: () => `csk_${base62(randomInt(5, 31))}`,
    }
    const once = (apiKey: string) =>
      new Promise<{ ns: number; status: number }>((resolve, reject) => {
        const start = process.hrtime.bigint()
        const req = request({ host: '127.0.0.1', port, path: '/api/admin/api-keys', agent, headers: { host, 'x-api-key': apiKey } }, (res) => {
          res.resume()
          res.on('end', () => resolve({ ns: Number(process.hrtime.bigint() - start), status: res.statusCode ?? 0 }))
        })
        req.on('error', reject)
        req.end()
      })
    for (let i = 0; i < WARM_UP; i++) await once(credential[(['wrong', 'unknown', 'malformed'] as const)[i % 3]!]())
    const order: Kind[] = (['wrong', 'unknown', 'malformed'] as const).flatMap((k) => Array<Kind>(SAMPLES).fill(k))
    for (let i = order.length - 1; i > 0; i--) {
      const j = randomInt(i + 1)
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    const times: Record<Kind, number[]> = { wrong: [], unknown: [], malformed: [] }
    let not401 = 0
    const started = Date.now()
    for (const kind of order) {
      const apiKey = credential[kind]()
      const { ns, status } = await once(apiKey)
      if (status !== 401) not401++
      times[kind].push(ns / 1000)
    }
    const seconds = (Date.now() - started) / 1000
    const summary = Object.fromEntries(
      (Object.keys(times) as Kind[]).map((k) => {
        const sorted = [...times[k]].sort((x, y) => x - y)
        return [k, { median: quantile(sorted, 0.5), iqr: quantile(sorted, 0.75) - quantile(sorted, 0.25) }]
      }),
    ) as Record<Kind, { median: number; iqr: number }>
    const wrongVsUnknown = mannWhitney(times.wrong, times.unknown)
    const wrongVsMalformed = mannWhitney(times.wrong, times.malformed)
    const fmt = (k: Kind) => `${k} median ${summary[k].median.toFixed(1)} µs IQR ${summary[k].iqr.toFixed(1)} µs`
    console.log(
      `# hardening timing (sqlite, loopback HTTP, ${SAMPLES} per kind, ${seconds.toFixed(1)} s): ${fmt('wrong')}; ${fmt('unknown')}; ${fmt('malformed')}`,
    )
    console.log(
      `# hardening timing: wrong vs unknown: Mann-Whitney U ${wrongVsUnknown.u.toFixed(0)}, p ${wrongVsUnknown.p.toPrecision(3)}, Vargha-Delaney A ${wrongVsUnknown.a12.toFixed(4)} (|A − 0.5| ${Math.abs(wrongVsUnknown.a12 - 0.5).toFixed(4)} < 0.06 required); wrong vs malformed (no query, allowed to differ): A ${wrongVsMalformed.a12.toFixed(4)}`,
    )
    assert.equal(not401, 0, 'every request is refused with 401')
    assert.ok(Math.abs(wrongVsUnknown.a12 - 0.5) < 0.06, `A = ${wrongVsUnknown.a12}`)
  })

  it(`fleet link (cloud): a wrong link credential (an enrolled site server's id, a wrong secret) and an unknown one (${SAMPLES} each, interleaved with malformed ones) on GET /api/link/pull are not told apart: |A − 0.5| < 0.06`, async (t) => {
    const h = await harness(t, 'sqlite', { ...NO_RATE_LIMIT, SITEGRID_LOG_LEVEL: 'warn', SITEGRID_MODE: 'cloud' })
    const { org, key } = await h.orgWithKey('owner')
    const link = await seedCloudLink(h, { org, apiKey: key }, 'TM')
    await h.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = h.app.server.address() as AddressInfo
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const host = `${org.slug}.localhost`
    const credential: Record<Kind, () => string> = {
      wrong: () => `slk_${link.serverId}_${base62(32)}`,
      unknown: () =>
        `slk_srv_${base62(26)
          .toUpperCase()
          .replace(/[^0-9A-Z]/g, 'Z')}_${base62(32)}`,
      malformed: () => `slk_${base62(randomInt(5, 40))}`,
    }
    const once = (bearer: string) =>
      new Promise<{ ns: number; status: number }>((resolve, reject) => {
        const start = process.hrtime.bigint()
        const req = request(
          { host: '127.0.0.1', port, path: '/api/link/pull?tx=0&seq=0', agent, headers: { host, authorization: `Bearer ${bearer}`, ...LINK_HEADERS } },
          (res) => {
            res.resume()
            res.on('end', () => resolve({ ns: Number(process.hrtime.bigint() - start), status: res.statusCode ?? 0 }))
          },
        )
        req.on('error', reject)
        req.end()
      })
    // The real credential passes (so a refusal below is the credential's, not the route's).
    assert.equal((await once(link.credential)).status, 200)
    for (let i = 0; i < WARM_UP; i++) await once(credential[(['wrong', 'unknown', 'malformed'] as const)[i % 3]!]())
    const order: Kind[] = (['wrong', 'unknown', 'malformed'] as const).flatMap((k) => Array<Kind>(SAMPLES).fill(k))
    for (let i = order.length - 1; i > 0; i--) {
      const j = randomInt(i + 1)
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    const times: Record<Kind, number[]> = { wrong: [], unknown: [], malformed: [] }
    let not401 = 0
    for (const kind of order) {
      const { ns, status } = await once(credential[kind]())
      if (status !== 401) not401++
      times[kind].push(ns / 1000)
    }
    const median = (k: Kind) =>
      quantile(
        [...times[k]].sort((x, y) => x - y),
        0.5,
      ).toFixed(1)
    const wrongVsUnknown = mannWhitney(times.wrong, times.unknown)
    console.log(
      `# hardening timing (sqlite, fleet link credential, ${SAMPLES} per kind): medians wrong ${median('wrong')} µs, unknown ${median('unknown')} µs, malformed ${median('malformed')} µs; wrong vs unknown: p ${wrongVsUnknown.p.toPrecision(3)}, Vargha-Delaney A ${wrongVsUnknown.a12.toFixed(4)} (|A − 0.5| < 0.06 required)`,
    )
    assert.equal(not401, 0, 'every request is refused with 401')
    assert.ok(Math.abs(wrongVsUnknown.a12 - 0.5) < 0.06, `A = ${wrongVsUnknown.a12}`)
  })

  it('the Mann-Whitney computation: identical samples give A = 0.5 and p = 1; fully separated ones give A = 1 and a tiny p', () => {
    const same = mannWhitney([1, 2, 3, 4], [1, 2, 3, 4])
    assert.equal(same.a12, 0.5)
    assert.ok(same.p > 0.99)
    const apart = mannWhitney(
      Array.from({ length: 50 }, (_, i) => 100 + i),
      Array.from({ length: 50 }, (_, i) => i),
    )
    assert.equal(apart.a12, 1)
    assert.ok(apart.p < 1e-10)
  })
})
