import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createConfigHolder } from './holder.ts'
import { ConfigInvalid, loadConfig } from './load.ts'

const secret = Buffer.alloc(32, 7).toString('base64')
const load = (env: Record<string, string> = {}) =>
  loadConfig({ SITEGRID_DATA_DIR: '/nonexistent-sitegrid', SITEGRID_KEY_SECRET: secret, ...env }, { requireKeySecret: true })

describe('configuration holder', () => {
  it('a valid reread swaps in only the reloadable settings, as one new frozen object, and tells onApplied', () => {
    const initial = load()
    let next: Record<string, string> = { SITEGRID_RATE_LIMIT_PER_MINUTE: '60', PORT: '9000' }
    const applied: unknown[] = []
    const holder = createConfigHolder(
      initial,
      () => load(next),
      (c) => applied.push(c),
    )
    const outcome = holder.reload()
    assert.deepEqual(outcome, { ok: true, changed: [{ setting: 'SITEGRID_RATE_LIMIT_PER_MINUTE', from: 1200, to: 60 }], requiresRestart: ['PORT'] })
    assert.notEqual(holder.current(), initial)
    assert.ok(Object.isFrozen(holder.current()))
    assert.equal(holder.current().rateLimitPerMinute, 60)
    assert.equal(holder.current().port, 8080, 'a restart-only setting keeps its running value')
    assert.deepEqual(applied, [holder.current()])
    assert.equal(initial.rateLimitPerMinute, 1200, 'the old object is untouched (a request holding it sees one whole configuration)')
    next = { SITEGRID_RATE_LIMIT_PER_MINUTE: '60', PORT: '9000' }
    const same = holder.current()
    assert.deepEqual(holder.reload(), { ok: true, changed: [], requiresRestart: ['PORT'] })
    assert.equal(holder.current(), same, 'nothing changed: no swap')
  })

  it('an invalid reread names every problem and leaves the running configuration in force', () => {
    const initial = load()
    const holder = createConfigHolder(initial, () => load({ SITEGRID_RATE_LIMIT_PER_MINUTE: '0', SITEGRID_LOG_LEVEL: 'loud' }))
    const outcome = holder.reload()
    assert.equal(outcome.ok, false)
    assert.ok(!outcome.ok && outcome.problems.some((p) => p.startsWith('SITEGRID_RATE_LIMIT_PER_MINUTE')))
    assert.ok(!outcome.ok && outcome.problems.some((p) => p.startsWith('SITEGRID_LOG_LEVEL')))
    assert.equal(holder.current(), initial)
  })

  it('prepare() changes nothing until apply(); the key secret is compared by value and never shown', () => {
    const initial = load()
    const holder = createConfigHolder(initial, () => load({ SITEGRID_LOG_LEVEL: 'warn', SITEGRID_KEY_SECRET: Buffer.alloc(32, 8).toString('base64') }))
    const plan = holder.prepare()
    assert.equal(holder.current(), initial)
    assert.ok(plan.ok)
    assert.deepEqual(plan.ok && plan.requiresRestart, ['SITEGRID_KEY_SECRET'])
    assert.ok(!JSON.stringify(plan).includes(Buffer.alloc(32, 8).toString('base64')))
    plan.apply()
    assert.equal(holder.current().logLevel, 'warn')
    assert.ok(holder.current().keySecret!.equals(initial.keySecret!), 'the verifier secret never changes at runtime')
    const sameSecret = createConfigHolder(initial, () => load())
    assert.deepEqual(sameSecret.reload(), { ok: true, changed: [], requiresRestart: [] }, 'an equal secret in a new Buffer is no change')
  })

  it('an error other than an invalid configuration is not swallowed', () => {
    const holder = createConfigHolder(load(), () => {
      throw new Error('disk on fire')
    })
    assert.throws(() => holder.reload(), /disk on fire/)
    assert.ok(new ConfigInvalid(['x']) instanceof Error)
  })
})
