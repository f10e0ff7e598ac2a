import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, login } from '../../../test/site/support.ts'
import { FIRST_LOCK_MS, LOCK_THRESHOLD } from './lockout.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: site-PIN lockout`, () => {
    it(`after ${LOCK_THRESHOLD} wrong PINs the account locks: wrong PINs still get the uniform 401, the correct PIN gets 423 PinLocked with Retry-After`, async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org, 'owner', { pin: '24681357' })
      for (let i = 0; i < LOCK_THRESHOLD; i++) assert.equal((await login(h, org, user.email, '11112222', `10.3.${i}.1`)).statusCode, 401)
      const wrongWhileLocked = await login(h, org, user.email, '11112222', '10.3.9.1')
      assert.equal(wrongWhileLocked.statusCode, 401, 'a locked account is not revealed to a wrong PIN')
      const locked = await login(h, org, user.email, user.pin, '10.3.10.1')
      assert.equal(locked.statusCode, 423)
      assert.equal(locked.json().code, 'PinLocked')
      const retryAfter = Number(locked.headers['retry-after'])
      assert.ok(retryAfter > 0 && retryAfter <= 2 * FIRST_LOCK_MS / 1000, `Retry-After ${retryAfter}`)
      assert.equal(locked.json().accessToken, undefined)
      h.clock.advance(retryAfter * 1000)
      assert.equal((await login(h, org, user.email, user.pin, '10.3.11.1')).statusCode, 200, 'the lock ends')
    })

    it('the lock delay grows with each further failure, and a successful sign-in resets the account counter', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org, 'member', { pin: '1357924680' })
      let address = 0
      const fail = () => login(h, org, user.email, '0000000000', `10.4.${address++}.1`)
      const lockedFor = async () => Number((await login(h, org, user.email, user.pin, `10.4.${address++}.1`)).headers['retry-after'])
      for (let i = 0; i < LOCK_THRESHOLD; i++) await fail()
      const first = await lockedFor()
      assert.equal(first, FIRST_LOCK_MS / 1000)
      h.clock.advance(first * 1000)
      await fail()
      const second = await lockedFor()
      assert.equal(second, 2 * FIRST_LOCK_MS / 1000)
      h.clock.advance(second * 1000)
      await fail()
      assert.equal(await lockedFor(), 4 * FIRST_LOCK_MS / 1000)
      h.clock.advance(4 * FIRST_LOCK_MS)
      assert.equal((await login(h, org, user.email, user.pin, '10.4.200.1')).statusCode, 200)
      await fail()
      assert.equal((await login(h, org, user.email, user.pin, '10.4.201.1')).statusCode, 200, 'one failure after a success does not lock')
    })

    it('the lock is also per client address: after 5 failures from one address it gets 429 SignInThrottled with Retry-After, before any PIN is checked, and other addresses are unaffected', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const victim = await addSiteUser(h, org)
      const bystander = await addSiteUser(h, org)
      // Spread over many accounts (unknown e-mails too) so that no account lock is involved.
      for (let i = 0; i < LOCK_THRESHOLD; i++) assert.equal((await login(h, org, `spray${i}@plant.example`, '123456', '192.0.2.7')).statusCode, 401)
      const throttled = await login(h, org, victim.email, victim.pin, '192.0.2.7')
      assert.equal(throttled.statusCode, 429)
      assert.equal(throttled.json().code, 'SignInThrottled')
      assert.equal(Number(throttled.headers['retry-after']), FIRST_LOCK_MS / 1000)
      assert.equal(throttled.json().accessToken, undefined)
      assert.equal((await login(h, org, bystander.email, bystander.pin, '192.0.2.8')).statusCode, 200)
      h.clock.advance(FIRST_LOCK_MS)
      assert.equal((await login(h, org, victim.email, victim.pin, '192.0.2.7')).statusCode, 200)
    })
  })
}
