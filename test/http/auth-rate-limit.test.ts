import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects, type Harness } from '../harness.ts'
import type { Org } from '../../src/identity.ts'

const login = (h: Harness, org: Org, remoteAddress: string) =>
  h.app.inject({
    method: 'POST',
    url: '/auth/site/login',
    remoteAddress,
    headers: { host: `${org.slug}.localhost` },
    payload: { email: 'nobody@example.test', pin: '482913' },
  })

for (const dialect of testDialects()) {
  describe(`${dialect}: the sign-in endpoints (/auth/*) are rate-limited per client address`, () => {
    it('above SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE an address gets 429 RateLimited with Retry-After; another address, another route and the next minute do not', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'site', SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '3' })
      const org = await h.createOrg()
      for (let i = 0; i < 3; i++) assert.equal((await login(h, org, '10.0.0.1')).statusCode, 401)
      const limited = await login(h, org, '10.0.0.1')
      assert.equal(limited.statusCode, 429)
      assert.equal(limited.json().code, 'RateLimited')
      assert.match(String(limited.headers['content-type']), /^application\/problem\+json/)
      const retryAfter = Number(limited.headers['retry-after'])
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${limited.headers['retry-after']}`)
      assert.equal((await login(h, org, '10.0.0.2')).statusCode, 401, 'another address has its own budget')
      assert.equal((await h.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.0.1' })).statusCode, 200, 'routes outside /auth/ are not counted')
      h.clock.advance(60_000)
      assert.equal((await login(h, org, '10.0.0.1')).statusCode, 401, 'the next minute starts afresh')
    })

    it('a throttled sign-in is refused before the PIN check: it does not count towards the account lock', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'site', SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '2' })
      const org = await h.createOrg()
      const answers = []
      for (let i = 0; i < 8; i++) answers.push((await login(h, org, '10.0.0.3')).json().code)
      assert.deepEqual(answers, ['Unauthorized', 'Unauthorized', ...Array(6).fill('RateLimited')])
      // Only the two that reached the sign-in were counted as PIN failures (five would lock the address).
      const failures = await h.handle.db.selectFrom('site_sign_in_failures').select(['subject', 'failures']).where('org_id', '=', org.id).execute()
      assert.ok(failures.length > 0, 'the sign-in counts failures per subject')
      assert.ok(
        failures.every((f) => f.failures === 2),
        JSON.stringify(failures),
      )
    })

    it('the default allows a normal sign-in burst (60 per minute)', async (t) => {
      const h = await harness(t, dialect)
      assert.equal(h.config.authRateLimitPerMinute, 60)
    })
  })
}
