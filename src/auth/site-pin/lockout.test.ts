import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { comparableBody, comparableHeaders, harness, testDialects, type Harness } from '../../../test/harness.ts'
import { CHEAP_PINS, addSiteUser, login } from '../../../test/site/support.ts'
import type { Org } from '../../identity.ts'
import { FIRST_LOCK_MS, LOCK_THRESHOLD, accountSubject } from './lockout.ts'

/** The account counter of an e-mail as stored: every reserved attempt (every PIN checked) is in `failures`. */
function accountRow(h: Harness, org: Org, email: string) {
  return h.handle.db
    .selectFrom('site_sign_in_failures')
    .select(['failures', 'locked_until'])
    .where('org_id', '=', org.id)
    .where('subject', '=', accountSubject(email.toLowerCase()))
    .executeTakeFirst()
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {})

for (const dialect of testDialects()) {
  describe(`${dialect}: site-PIN lockout`, () => {
    it(`after ${LOCK_THRESHOLD} wrong PINs an e-mail locks: the right PIN, a wrong PIN and a locked unknown e-mail all get the identical 423 PinLocked with Retry-After and lockedUntil`, async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org, 'owner', { pin: '24681357' })
      const ghost = 'Nobody.Here@plant.example'
      for (let i = 0; i < LOCK_THRESHOLD; i++) {
        assert.equal((await login(h, org, user.email, '11112222', `10.3.${i}.1`)).statusCode, 401)
        assert.equal((await login(h, org, ghost, '11112222', `10.3.${i}.2`)).statusCode, 401)
      }
      const right = await login(h, org, user.email, user.pin, '10.3.10.1')
      const wrong = await login(h, org, user.email.toUpperCase(), '11112222', '10.3.10.2')
      const unknown = await login(h, org, ghost, user.pin, '10.3.10.3')
      const lockedUntil = new Date(h.clock.now() + FIRST_LOCK_MS).toISOString()
      for (const res of [right, wrong, unknown]) {
        assert.equal(res.statusCode, 423)
        assert.equal(res.json().code, 'PinLocked')
        assert.equal(res.headers['retry-after'], String(FIRST_LOCK_MS / 1000))
        assert.equal(res.json().lockedUntil, lockedUntil, "the lock's end is told to everyone, the rightful user included")
        assert.equal(res.json().accessToken, undefined)
        assert.deepEqual(comparableBody(res.body), comparableBody(right.body))
        assert.deepEqual(comparableHeaders(res.headers), comparableHeaders(right.headers))
      }
      assert.equal((await accountRow(h, org, user.email))?.failures, LOCK_THRESHOLD, 'no PIN was checked while locked')
      h.clock.advance(FIRST_LOCK_MS)
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
      assert.equal(second, (2 * FIRST_LOCK_MS) / 1000)
      h.clock.advance(second * 1000)
      await fail()
      assert.equal(await lockedFor(), (4 * FIRST_LOCK_MS) / 1000)
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
      assert.equal(await accountRow(h, org, victim.email), undefined, 'a throttled attempt counts on no account')
      assert.equal((await login(h, org, bystander.email, bystander.pin, '192.0.2.8')).statusCode, 200)
      h.clock.advance(FIRST_LOCK_MS)
      assert.equal((await login(h, org, victim.email, victim.pin, '192.0.2.7')).statusCode, 200)
    })

    it('successful sign-ins count on no counter: many from one address never throttle it, and one after 4 failures sets no lock', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org)
      for (let i = 0; i < 3 * LOCK_THRESHOLD; i++) assert.equal((await login(h, org, user.email, user.pin, '192.0.2.20')).statusCode, 200)
      for (let i = 0; i < LOCK_THRESHOLD - 1; i++) assert.equal((await login(h, org, `typo${i}@plant.example`, '123456', '192.0.2.21')).statusCode, 401)
      assert.equal((await login(h, org, user.email, user.pin, '192.0.2.21')).statusCode, 200, 'the 5th attempt is right: no lock')
      assert.equal((await login(h, org, user.email, user.pin, '192.0.2.21')).statusCode, 200, 'still none after it')
      assert.equal((await login(h, org, 'typo9@plant.example', '123456', '192.0.2.21')).statusCode, 401, 'the 5th failure from the address is checked')
      assert.equal((await login(h, org, user.email, user.pin, '192.0.2.21')).statusCode, 429, 'and then the address locks')
    })

    it(`50 concurrent wrong PINs for one e-mail from 3 addresses check at most ${LOCK_THRESHOLD} PINs; every other attempt gets the locked answer`, async (t) => {
      const h = await harness(t, dialect) // the production scrypt cost: checks take long enough to overlap
      const org = await h.createOrg()
      const user = await addSiteUser(h, org)
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => login(h, org, user.email, '00000000', `10.5.0.${i % 3}`)))
      const statuses = tally(answers.map((a) => a.statusCode))
      t.diagnostic(`${dialect}: 50 concurrent wrong PINs -> ${JSON.stringify(statuses)}`)
      assert.equal(statuses[401], LOCK_THRESHOLD, 'PINs checked')
      assert.equal((statuses[423] ?? 0) + (statuses[429] ?? 0), 50 - LOCK_THRESHOLD)
      assert.equal((await accountRow(h, org, user.email))?.failures, LOCK_THRESHOLD)
      assert.equal((await login(h, org, user.email, user.pin, '10.5.1.1')).statusCode, 423, 'the account is locked, the right PIN included')
    })

    it('the PIN change counts on the same counters: concurrent wrong current PINs check at most 5, then the right one gets the same 423 as a sign-in and changes nothing', async (t) => {
      const h = await harness(t, dialect) // the production scrypt cost: checks take long enough to overlap
      const org = await h.createOrg()
      const user = await addSiteUser(h, org)
      const change = (pin: string, remoteAddress: string) =>
        h.app.inject({
          method: 'POST',
          url: '/auth/site/pin',
          remoteAddress,
          headers: { host: `${org.slug}.localhost` },
          payload: { email: user.email, pin, newPin: '55554444' },
        })
      const statuses = tally((await Promise.all(Array.from({ length: 20 }, (_, i) => change('00000000', `10.7.0.${i % 3}`)))).map((a) => a.statusCode))
      assert.equal(statuses[401], LOCK_THRESHOLD, `PINs checked: ${JSON.stringify(statuses)}`)
      const right = await change(user.pin, '10.7.1.1')
      const signIn = await login(h, org, user.email, user.pin, '10.7.1.2')
      assert.equal(right.statusCode, 423)
      assert.deepEqual(comparableBody(right.body), comparableBody(signIn.body))
      h.clock.advance(FIRST_LOCK_MS)
      assert.equal((await login(h, org, user.email, user.pin, '10.7.1.3')).statusCode, 200, 'the PIN did not change')
    })

    it('an attacker who retries each time a lock ends gets far fewer than 100 PINs checked in any hour (ASVS 2.2.1)', async (t) => {
      const h = await harness(t, dialect, CHEAP_PINS)
      const org = await h.createOrg()
      const user = await addSiteUser(h, org, 'member', { pin: '86420864' })
      const checkedAt: number[] = []
      const end = h.clock.now() + 3 * 3_600_000
      for (let i = 0; h.clock.now() < end; i++) {
        const res = await login(h, org, user.email, '11110000', `10.6.${Math.floor(i / 250)}.${i % 250}`)
        if (res.statusCode === 401) checkedAt.push(h.clock.now())
        else assert.equal(res.statusCode, 423)
        h.clock.advance(res.statusCode === 423 ? Number(res.headers['retry-after']) * 1000 : 1000)
      }
      const busiestHour = Math.max(...checkedAt.map((from) => checkedAt.filter((at) => at >= from && at < from + 3_600_000).length))
      t.diagnostic(`${dialect}: ${checkedAt.length} PINs checked in 3 h, at most ${busiestHour} in any hour`)
      assert.ok(busiestHour <= 100, `${busiestHour} PINs checked in one hour`)
      assert.ok(busiestHour < 2 * LOCK_THRESHOLD + 10)
    })
  })
}
