import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { comparableBody, comparableHeaders, harness, sleep, testDialects } from '../../../test/harness.ts'
import { DATE_TIME_RULE } from '../../http/problem.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR
// The spec's fields, and the restriction of issue 30 (siteId, networks: null for an unrestricted key).
const LIST_FIELDS = ['createdAt', 'createdByUserId', 'expiresAt', 'keyId', 'keyPrefix', 'lastUsedAt', 'name', 'networks', 'role', 'siteId']
const MINT_FIELDS = ['createdAt', 'expiresAt', 'keyId', 'keyPrefix', 'name', 'networks', 'plaintext', 'role', 'siteId']

for (const dialect of testDialects()) {
  describe(`${dialect}: tenant API keys`, () => {
    const mintBody = (h: { clock: { now(): number } }, over: Record<string, unknown> = {}) => ({
      role: 'member',
      name: 'gateway',
      expiresAt: new Date(h.clock.now() + 30 * DAY).toISOString(),
      ...over,
    })

    it('mint answers 201 with exactly the spec fields and a csk_ plaintext of 32 base62 characters', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h) })
      assert.equal(res.statusCode, 201)
      const body = res.json()
      assert.deepEqual(Object.keys(body).sort(), MINT_FIELDS)
      assert.match(body.plaintext, /^csk_[0-9A-Za-z]{32}$/)
      assert.equal(body.keyPrefix, body.plaintext.slice(0, 8))
      assert.match(body.keyId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUIDv7 (key-id.ts)')
      assert.equal(res.headers['cache-control'], 'no-store')
      const use = await h.inject({ org, apiKey: body.plaintext }, { url: '/api/admin/api-keys' })
      assert.equal(use.statusCode, 403, 'the new member key authenticates (and is refused by policy)')
    })

    it('the plaintext is stored nowhere: not in any column, any later response or any log line', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const minted = (await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h) })).json()
      const rows = await h.handle.db.selectFrom('api_keys').selectAll().where('org_id', '=', org.id).execute()
      const dump = JSON.stringify(rows)
      assert.ok(!dump.includes(minted.plaintext))
      assert.ok(!dump.includes(minted.plaintext.slice(4)), 'not even the random part')
      await h.inject({ org, apiKey: minted.plaintext }, { url: '/api/admin/api-keys' })
      const list = await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })
      assert.ok(!list.body.includes(minted.plaintext))
      assert.ok(!list.body.includes('verifier'))
      await sleep(120)
      assert.ok(!h.rawLogs().includes(minted.plaintext), 'no log line holds the minted plaintext')
      assert.ok(!h.rawLogs().includes(key), 'no log line holds the caller key')
    })

    for (const role of ['platform_admin', 'PLATFORM_OPERATOR', 'Service']) {
      it(`a reserved control-plane role (${role}) is refused with 400 ReservedRole`, async (t) => {
        const h = await harness(t, dialect)
        const { org, key } = await h.orgWithKey()
        const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { role }) })
        assert.equal(res.statusCode, 400)
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
        assert.equal(res.json().code, 'ReservedRole')
      })
    }

    it('an unknown role is a 400 ValidationFailed naming /role', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { role: 'superuser' }) })
      assert.equal(res.statusCode, 400)
      assert.equal(res.json().code, 'ValidationFailed')
      assert.equal(res.json().errors[0].pointer, '/role')
    })

    it('a caller cannot mint a key whose role is above its own (403)', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('admin')
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { role: 'owner' }) })
      assert.equal(res.statusCode, 403)
      assert.equal(res.json().code, 'Forbidden')
      const ok = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { role: 'admin' }) })
      assert.equal(ok.statusCode, 201)
    })

    const bounds: Array<[string, number, number]> = [
      ['59 minutes', 59 * 60_000, 400],
      ['61 minutes', 61 * 60_000, 201],
      ['729 days', 729 * DAY, 201],
      ['731 days', 731 * DAY, 400],
      ['in the past', -HOUR, 400],
      ['now', 0, 400],
    ]
    for (const [label, offset, status] of bounds) {
      it(`expiresAt ${label} from now answers ${status}`, async (t) => {
        const h = await harness(t, dialect)
        const { org, key } = await h.orgWithKey()
        const res = await h.inject(
          { org, apiKey: key },
          { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { expiresAt: new Date(h.clock.now() + offset).toISOString() }) },
        )
        assert.equal(res.statusCode, status)
        if (status === 400) assert.equal(res.json().code, 'ExpiryPolicyViolation')
      })
    }

    it('expiresAt exactly 1 hour and exactly 730 days are inside the window', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      for (const offset of [HOUR, 730 * DAY]) {
        const res = await h.inject(
          { org, apiKey: key },
          { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { expiresAt: new Date(h.clock.now() + offset).toISOString() }) },
        )
        assert.equal(res.statusCode, 201)
      }
    })

    it('missing expiresAt, name of 0 or 201 characters, a non-string role and unknown fields are 400s naming each field and its rule', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ role: 'member', name: 'x' }, '/expiresAt', 'is required'],
        [mintBody(h, { name: '' }), '/name', 'must NOT have fewer than 1 characters'],
        [mintBody(h, { name: 'n'.repeat(201) }), '/name', 'must NOT have more than 200 characters'],
        [mintBody(h, { role: 3 }), '/role', 'must be string'],
        [mintBody(h, { orgId: 'org_AAAAAAAA' }), '/orgId', 'is not a known property'],
        [mintBody(h, { expiresAt: '2030-01-01' }), '/expiresAt', DATE_TIME_RULE],
      ]
      for (const [payload, pointer, rule] of cases) {
        const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload })
        assert.equal(res.statusCode, 400, pointer)
        assert.equal(res.json().code, 'ValidationFailed')
        assert.ok(
          res.json().errors.some((e: { pointer: string; message: string }) => e.pointer === pointer && e.message === rule),
          `names ${pointer} ${rule}: ${res.body}`,
        )
        assert.ok(res.json().detail.includes(`${pointer} ${rule}`), res.json().detail)
      }
      const ok = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { name: 'n'.repeat(200) }) })
      assert.equal(ok.statusCode, 201)
      const count = await h.handle.db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', org.id)
        .executeTakeFirstOrThrow()
      assert.equal(Number(count.n), 2, 'the refused requests wrote nothing')
    })

    it('the tenant comes from the principal: a body naming another organisation is refused and changes nothing there', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const victim = await h.createOrg()
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { org_slug: victim.slug }) })
      assert.equal(res.statusCode, 400)
      const rows = await h.handle.db.selectFrom('api_keys').select('id').where('org_id', '=', victim.id).execute()
      assert.equal(rows.length, 0)
    })

    it('list shows non-revoked keys, newest created first, with exactly the spec fields and createdByUserId of the minting key', async (t) => {
      const h = await harness(t, dialect)
      const { org, key, keyId } = await h.orgWithKey()
      const ids: string[] = []
      for (const name of ['a', 'b', 'c']) {
        h.clock.advance(1000)
        ids.push((await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { name }) })).json().keyId)
      }
      await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${ids[1]}` })
      const res = await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })
      assert.equal(res.statusCode, 200)
      const list = res.json() as Array<Record<string, unknown>>
      assert.deepEqual(
        list.map((k) => k.keyId),
        [ids[2], ids[0], keyId],
      )
      for (const item of list) assert.deepEqual(Object.keys(item).sort(), LIST_FIELDS)
      assert.equal(list[0]!.createdByUserId, keyId)
      assert.equal(list[2]!.createdByUserId, 'cli')
    })

    it('keys minted in one millisecond still list newest created first, each keyId a UUID', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      // The harness's clock stands still: every mint below happens in the same millisecond, as quick mints on a server do.
      const minted: string[] = []
      for (let i = 0; i < 20; i++) {
        const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/admin/api-keys', payload: mintBody(h, { name: `k${i}` }) })
        assert.equal(res.statusCode, 201, res.body)
        assert.match(res.json().keyId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        minted.push(res.json().keyId)
      }
      const listed = ((await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).json() as Array<{ keyId: string; name: string }>).filter((k) =>
        k.name.startsWith('k'),
      )
      assert.deepEqual(
        listed.map((k) => k.keyId),
        minted.reverse(),
      )
    })

    it("the list of one organisation never shows another organisation's keys", async (t) => {
      const h = await harness(t, dialect)
      const a = await h.orgWithKey()
      const b = await h.orgWithKey()
      const res = await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/api-keys' })
      assert.deepEqual(
        res.json().map((k: { keyId: string }) => k.keyId),
        [a.keyId],
      )
      assert.ok(!res.body.includes(b.keyId))
    })

    it('revoke answers 204 with no body, keeps the reason, sets revoked_at once, and the key stops authenticating at once', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const victim = await h.mintKey(org, 'member')
      const warm = await h.inject({ org, apiKey: victim.plaintext }, { url: '/api/admin/api-keys' })
      assert.equal(warm.statusCode, 403, 'authenticated (cached) before the revoke')
      const res = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${victim.keyId}`, payload: { reason: 'laptop lost' } })
      assert.equal(res.statusCode, 204)
      assert.equal(res.body, '')
      const after = await h.inject({ org, apiKey: victim.plaintext }, { url: '/api/admin/api-keys' })
      assert.equal(after.statusCode, 401)
      const row = await h.handle.db.selectFrom('api_keys').selectAll().where('id', '=', victim.keyId).executeTakeFirstOrThrow()
      assert.equal(row.revoke_reason, 'laptop lost')
      const firstRevokedAt = row.revoked_at
      h.clock.advance(60_000)
      const again = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${victim.keyId}` })
      assert.equal(again.statusCode, 404)
      const row2 = await h.handle.db.selectFrom('api_keys').select('revoked_at').where('id', '=', victim.keyId).executeTakeFirstOrThrow()
      assert.equal(row2.revoked_at, firstRevokedAt, 'revoked_at is never advanced')
    })

    it('absent, foreign and already revoked keys answer the same 404', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const other = await h.orgWithKey()
      const revoked = await h.mintKey(org, 'member')
      await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${revoked.keyId}` })
      const answers = await Promise.all([
        h.inject({ org, apiKey: key }, { method: 'DELETE', url: '/api/admin/api-keys/00000000-0000-4000-8000-000000000000' }),
        h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${other.keyId}` }),
        h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${revoked.keyId}` }),
        h.inject({ org, apiKey: key }, { method: 'DELETE', url: '/api/admin/api-keys/not-a-uuid' }),
      ])
      for (const res of answers) {
        assert.equal(res.statusCode, 404)
        assert.deepEqual(comparableBody(res.body), comparableBody(answers[0]!.body))
        assert.deepEqual(comparableHeaders(res.headers), comparableHeaders(answers[0]!.headers))
      }
      const foreign = await h.inject({ org: other.org, apiKey: other.key }, { url: '/api/admin/api-keys' })
      assert.equal(foreign.json().length, 1, 'the foreign key is untouched')
    })

    it('a keyId is one UUID in any letter case (RFC 9562 §4): read and revoke find the key by its upper-case form', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const { keyId } = await h.mintKey(org, 'member')
      const read = await h.inject({ org, apiKey: key }, { url: `/api/admin/api-keys/${keyId.toUpperCase()}` })
      assert.equal(read.statusCode, 200, read.body)
      assert.equal(read.json().keyId, keyId)
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${keyId.toUpperCase()}` })).statusCode, 204)
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${keyId}` })).statusCode, 404, 'revoked once')
    })

    it('a key may revoke itself', async (t) => {
      const h = await harness(t, dialect)
      const { org, key, keyId } = await h.orgWithKey()
      const res = await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${keyId}` })
      assert.equal(res.statusCode, 204)
      assert.equal((await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).statusCode, 401)
    })

    it('expiry is enforced at authentication time against the clock, even for a cached key', async (t) => {
      const h = await harness(t, dialect)
      const org = await h.createOrg()
      const { plaintext } = await h.mintKey(org, 'owner', { lifetimeMs: 2 * HOUR })
      assert.equal((await h.inject({ org, apiKey: plaintext }, { url: '/api/admin/api-keys' })).statusCode, 200)
      h.clock.advance(2 * HOUR - 1)
      assert.equal((await h.inject({ org, apiKey: plaintext }, { url: '/api/admin/api-keys' })).statusCode, 200)
      h.clock.advance(1)
      assert.equal((await h.inject({ org, apiKey: plaintext }, { url: '/api/admin/api-keys' })).statusCode, 401)
    })

    it('lastUsedAt is null until first use, then visible in the list shortly after', async (t) => {
      const h = await harness(t, dialect)
      const { org, key, keyId } = await h.orgWithKey()
      const other = await h.mintKey(org, 'member')
      const before = (await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).json()
      assert.equal(before.find((k: { keyId: string }) => k.keyId === other.keyId).lastUsedAt, null)
      let seen: string | null = null
      for (let i = 0; i < 40 && !seen; i++) {
        await sleep(50)
        const list = (await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).json()
        seen = list.find((k: { keyId: string }) => k.keyId === keyId).lastUsedAt
      }
      assert.equal(seen, new Date(h.clock.now()).toISOString())
      const list = (await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).json()
      assert.equal(list.find((k: { keyId: string }) => k.keyId === other.keyId).lastUsedAt, null, 'an unused key stays null')
    })

    it('members are refused (403) on all three endpoints; admins and owners pass', async (t) => {
      const h = await harness(t, dialect)
      const org = await h.createOrg()
      const member = await h.mintKey(org, 'member')
      const admin = await h.mintKey(org, 'admin')
      for (const [method, url] of [
        ['GET', '/api/admin/api-keys'],
        ['POST', '/api/admin/api-keys'],
        ['DELETE', `/api/admin/api-keys/${admin.keyId}`],
      ] as const) {
        const res = await h.inject({ org, apiKey: member.plaintext }, { method, url, payload: method === 'POST' ? mintBody(h) : undefined })
        assert.equal(res.statusCode, 403, `${method} ${url}`)
        assert.equal(res.json().code, 'Forbidden')
      }
      assert.equal((await h.inject({ org, apiKey: admin.plaintext }, { url: '/api/admin/api-keys' })).statusCode, 200)
    })

    it('deprovisioning an organisation removes its keys and they stop authenticating', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      assert.equal((await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).statusCode, 200)
      const { createOrgsService } = await import('../orgs/service.ts')
      await createOrgsService({ handle: h.handle, clock: h.clock }).deprovision(org.slug)
      assert.equal((await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys' })).statusCode, 401)
      const rows = await h.handle.db.selectFrom('api_keys').select('id').where('org_id', '=', org.id).execute()
      assert.equal(rows.length, 0)
    })
  })
}
