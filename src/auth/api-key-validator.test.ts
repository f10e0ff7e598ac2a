import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it, type TestContext } from 'node:test'
import { databaseUrlFor, sleep, testClock, testDialects } from '../../test/harness.ts'
import { connectDatabase } from '../db/connect.ts'
import { migrateToLatest } from '../db/migrate.ts'
import { withSystemScope } from '../db/tenant-scope.ts'
import { CLI_ACTOR } from '../identity.ts'
import { createApiKeysService } from '../modules/api-keys/service.ts'
import { createOrgsService } from '../modules/orgs/service.ts'
import { createApiKeyValidator } from './api-key-validator.ts'

async function open(t: TestContext, url: string) {
  const handle = await connectDatabase(url, { poolSize: 2 })
  t.after(() => handle.close())
  return handle
}

/** Polls `moved` for up to 5 s (a PostgreSQL NOTIFY reaches the other connection's listener asynchronously). */
async function eventually(moved: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !moved(); i++) await sleep(50)
  return moved()
}

for (const dialect of testDialects()) {
  describe(`${dialect}: API-key validator caches (issue 29)`, () => {
    it('an unknown key is looked up once, then refused from memory until the invalidation generation moves; a mint moves it in this process and in another', async (t) => {
      const url = await databaseUrlFor(t, dialect)
      const handle = await open(t, url)
      await migrateToLatest(handle.db)
      const other = await open(t, url) // another process's handle on the same database
      const clock = testClock()
      const keySecret = randomBytes(32)
      const org = await withSystemScope(() => createOrgsService({ handle, clock }).provision(`akv-${randomBytes(3).toString('hex')}`))
      const keys = createApiKeysService({ handle, clock, keySecret })
      let lookups = 0
      let verifiers = 0
      const counted = {
        ...keys,
        activeKeyByVerifier: (...args: Parameters<typeof keys.activeKeyByVerifier>) => (lookups++, keys.activeKeyByVerifier(...args)),
        verifierOf: (plaintext: string) => (verifiers++, keys.verifierOf(plaintext)),
      }
      const validate = createApiKeyValidator({ handle, clock, keys: counted, onUse: () => {} })
      const unknownKey = `csk_${'Z'.repeat(32)}`

      assert.equal(await validate(unknownKey, org.id, '127.0.0.1'), undefined)
      assert.equal(await validate(unknownKey, org.id, '127.0.0.1'), undefined)
      assert.equal(lookups, 1, 'the second refusal of the same key needs no query')

      const otherBefore = other.generation()
      const before = handle.generation()
      const minted = await keys.mint(org.id, CLI_ACTOR, { role: 'member', name: 'k', expiresAt: new Date(clock.now() + 86_400_000).toISOString() })
      assert.ok(await eventually(() => other.generation() !== otherBefore), 'a mint moves the generation of every process')
      // This process hears its own notification too, after the mint moved its generation at once: one move more, which
      // would drop the caches between the two reads of the minted key below if it came between them (stop 40's CI).
      if (dialect === 'postgres') assert.ok(await eventually(() => handle.generation() >= before + 2), 'this process heard its own notification')
      assert.equal(await validate(unknownKey, org.id, '127.0.0.1'), undefined)
      assert.equal(lookups, 2, 'after a mint the unknown key is looked up again')
      assert.equal((await validate(minted.plaintext, org.id, '127.0.0.1'))?.subject, minted.keyId)
      assert.equal((await validate(minted.plaintext, org.id, '127.0.0.1'))?.subject, minted.keyId)
      assert.equal(lookups, 3, 'a verified key is looked up once')
      // The hot path makes no promise: a remembered key, verified or unknown, is answered at once.
      assert.equal(validate(minted.plaintext, org.id, '127.0.0.1') instanceof Promise, false, 'a verified key from memory')
      assert.equal(validate(unknownKey, org.id, '127.0.0.1') instanceof Promise, false, 'an unknown key from memory')
      // Remembered by the plaintext's digest: the verifier's HMAC is computed for a lookup only; a malformed key costs none.
      assert.equal(await validate('csk_malformed', org.id, '127.0.0.1'), undefined)
      assert.equal(verifiers, lookups, 'a verifier computed for each lookup, none for a remembered or malformed key')

      await keys.revoke(org.id, CLI_ACTOR, minted.keyId, null)
      assert.equal(await validate(minted.plaintext, org.id, '127.0.0.1'), undefined, 'revoked: refused at once')
    })
  })
}
