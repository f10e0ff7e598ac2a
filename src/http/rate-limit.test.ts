import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createRateLimiter } from './rate-limit.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

// The limiter tracks at most 100 000 buckets a window; these floods go past that.
const FLOOD = 100_001
const LIMIT = 60

/** A bucket as http/auth.ts names one: `c:` and a credential's last 64 characters. */
const junk = (i: number): string => `c:${String(i).padStart(64, 'j')}`

describe('the rate limiter (http/rate-limit.ts)', () => {
  it('a client at its limit stays limited after 100 001 distinct junk credentials in the same window', () => {
    const limiter = createRateLimiter({ perMinute: LIMIT, clock: { now: () => 1_800_000_010_000 } })
    for (let i = 0; i < LIMIT; i += 1) assert.equal(limiter.hit('c:honest-but-limited'), 0)
    assert.ok(limiter.hit('c:honest-but-limited') > 0, 'limited before the flood')
    for (let i = 0; i < FLOOD; i += 1) limiter.hit(junk(i))
    assert.ok(limiter.hit('c:honest-but-limited') > 0, 'still limited after the flood')
  })

  it('a busy client keeps its count through the flood: it gets no more than the limit in the window', () => {
    const limiter = createRateLimiter({ perMinute: LIMIT, clock: { now: () => 1_800_000_010_000 } })
    for (let i = 0; i < LIMIT - 1; i += 1) assert.equal(limiter.hit('c:busy'), 0)
    for (let i = 0; i < FLOOD; i += 1) limiter.hit(junk(i))
    assert.equal(limiter.hit('c:busy'), 0, 'its last request of the window')
    assert.ok(limiter.hit('c:busy') > 0)
  })

  it('memory stays bounded: 400 000 distinct credentials in one window hold no more than 100 000 do', () => {
    const heldAfter = (credentials: number): number => {
      const limiter = createRateLimiter({ perMinute: LIMIT, clock: { now: () => 1_800_000_010_000 } })
      gc()
      const before = process.memoryUsage().heapUsed
      for (let i = 0; i < credentials; i += 1) limiter.hit(junk(i))
      gc()
      const held = process.memoryUsage().heapUsed - before
      assert.equal(limiter.hit('c:after'), 0, 'the limiter measured is still in use')
      return held
    }
    // About 30 MB for 100 000 buckets here; keeping all 400 000 would hold four times that.
    const full = heldAfter(100_000)
    const flooded = heldAfter(4 * FLOOD)
    assert.ok(flooded < 2 * full, `400 004 credentials hold ${flooded} bytes, 100 000 hold ${full}`)
  })

  it('the next window starts every count afresh', () => {
    let now = 1_800_000_010_000
    const limiter = createRateLimiter({ perMinute: LIMIT, clock: { now: () => now } })
    for (let i = 0; i <= LIMIT; i += 1) limiter.hit('c:limited')
    assert.ok(limiter.hit('c:limited') > 0)
    now += 60_000
    assert.equal(limiter.hit('c:limited'), 0)
  })
})
