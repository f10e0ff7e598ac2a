// Issue 30: API keys for edge gateways, restricted to one site and optionally to client networks.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { comparableBody, comparableHeaders, harness, testDialects, type Harness } from '../../../test/harness.ts'

const DAY = 86_400_000

async function orgWithSites(h: Harness) {
  const owner = await h.orgWithKey()
  const as = { org: owner.org, apiKey: owner.key }
  for (const code of ['A', 'B']) {
    const res = await h.inject(as, { method: 'POST', url: '/api/sites', payload: { code, name: `Plant ${code}` } })
    assert.equal(res.statusCode, 201)
  }
  const mint = (over: Record<string, unknown>) =>
    h.inject(as, {
      method: 'POST',
      url: '/api/admin/api-keys',
      payload: { role: 'admin', name: 'gateway', expiresAt: new Date(h.clock.now() + 30 * DAY).toISOString(), ...over },
    })
  return { ...owner, as, mint }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: site-restricted API keys`, () => {
    it("a site-restricted key reaches its site's routes; another site answers exactly as an unknown one (404), a route of no site 403", async (t) => {
      const h = await harness(t, dialect)
      const { org, as, mint } = await orgWithSites(h)
      const minted = await mint({ siteId: 'A' })
      assert.equal(minted.statusCode, 201)
      const gateway = { org, apiKey: minted.json().plaintext as string }

      assert.equal((await h.inject(gateway, { url: '/api/sites/A' })).statusCode, 200)
      assert.equal((await h.inject(gateway, { url: '/api/sites/A/controllers' })).statusCode, 200)
      assert.equal((await h.inject(gateway, { url: '/api/me' })).statusCode, 200)

      const unknown = await h.inject(as, { url: '/api/sites/ZZ' })
      assert.equal(unknown.statusCode, 404)
      for (const url of ['/api/sites/B', '/api/sites/B/controllers', '/api/sites/B/alarms', '/api/sites/ZZ']) {
        const res = await h.inject(gateway, { url })
        assert.equal(res.statusCode, 404, url)
        assert.deepEqual(comparableBody(res.body), comparableBody(unknown.body), `${url} reads as an unknown site`)
      }
      const write = await h.inject(gateway, { method: 'PUT', url: '/api/sites/B', payload: { name: 'taken over' } })
      assert.equal(write.statusCode, 404)
      assert.equal((await h.inject(as, { url: '/api/sites/B' })).json().name, 'Plant B', 'the refused write changed nothing')

      for (const [method, url] of [
        ['GET', '/api/sites'],
        ['GET', '/api/admin/api-keys'],
        ['GET', '/api/historian/import-batches'],
      ] as const) {
        const res = await h.inject(gateway, { method, url })
        assert.equal(res.statusCode, 403, url)
        assert.equal(res.json().code, 'Forbidden')
      }
      const byGateway = await h.inject(gateway, {
        method: 'POST',
        url: '/api/admin/api-keys',
        payload: { role: 'admin', name: 'wider', expiresAt: new Date(h.clock.now() + DAY).toISOString() },
      })
      assert.equal(byGateway.statusCode, 403, 'a restricted key cannot mint itself an unrestricted one')
    })

    it('deleting the site revokes the keys restricted to it (previewed as apiKeys, audited): a site made again under its code is not reached by them; other keys are untouched', async (t) => {
      const h = await harness(t, dialect)
      const { org, as, mint } = await orgWithSites(h)
      const keyOf = async (over: Record<string, unknown>) => {
        const res = await mint(over)
        assert.equal(res.statusCode, 201, res.body)
        return { org, apiKey: res.json().plaintext as string, keyId: res.json().keyId as string }
      }
      const [gatewayA, secondA, gatewayB, unrestricted] = [
        await keyOf({ siteId: 'A' }),
        await keyOf({ siteId: 'A' }),
        await keyOf({ siteId: 'B' }),
        await keyOf({}),
      ]
      assert.equal((await h.inject(gatewayA, { url: '/api/sites/A' })).statusCode, 200)

      const preview = await h.inject(as, { method: 'DELETE', url: '/api/sites/A' })
      assert.equal(preview.statusCode, 409)
      assert.equal(preview.json().wouldDelete.apiKeys, 2)
      assert.equal((await h.inject(gatewayA, { url: '/api/sites/A' })).statusCode, 200, 'the preview revoked nothing')

      assert.equal((await h.inject(as, { method: 'DELETE', url: '/api/sites/A?confirm=A' })).statusCode, 204)
      assert.equal((await h.inject(as, { method: 'POST', url: '/api/sites', payload: { code: 'A', name: 'Another plant A' } })).statusCode, 201)
      for (const gone of [gatewayA, secondA]) {
        const res = await h.inject(gone, { url: '/api/sites/A' })
        assert.equal(res.statusCode, 401, 'revoked: the uniform 401, also on the new site of the same code')
      }
      const listed = (await h.inject(as, { url: '/api/admin/api-keys' })).json() as Array<{ keyId: string }>
      assert.deepEqual(
        [gatewayA, secondA, gatewayB, unrestricted].map((k) => listed.some((l) => l.keyId === k.keyId)),
        [false, false, true, true],
      )
      assert.equal((await h.inject(gatewayB, { url: '/api/sites/B' })).statusCode, 200)
      assert.equal((await h.inject(unrestricted, { url: '/api/sites/A' })).statusCode, 200)
      const audit = await h.handle.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', '=', 'api_key.revoked').execute()
      assert.deepEqual(audit.map((a) => a.target).sort(), [gatewayA.keyId, secondA.keyId].sort())
      assert.match(String(audit[0]!.detail), /site deleted/)
    })

    it("mint, the key list, the key read and the key's own GET /api/me show the restriction; an unrestricted key shows null for both", async (t) => {
      const h = await harness(t, dialect)
      const { org, as, keyId: ownerKeyId, mint } = await orgWithSites(h)
      const minted = await mint({ siteId: 'A', networks: ['10.20.0.0/16', '2001:DB8:5::/48', '10.20.0.0/16', '192.0.2.7'] })
      assert.equal(minted.statusCode, 201)
      const networks = ['10.20.0.0/16', '2001:db8:5::/48', '192.0.2.7/32']
      assert.equal(minted.json().siteId, 'A')
      assert.deepEqual(minted.json().networks, networks, 'canonical blocks, each once')

      const list = (await h.inject(as, { url: '/api/admin/api-keys' })).json() as Array<Record<string, unknown>>
      assert.equal(list.length, 2)
      const restricted = list.find((k) => k.keyId === minted.json().keyId)!
      assert.equal(restricted.siteId, 'A')
      assert.deepEqual(restricted.networks, networks)
      const owner = list.find((k) => k.keyId === ownerKeyId)!
      assert.equal(owner.siteId, null)
      assert.equal(owner.networks, null)

      const read = await h.inject(as, { url: `/api/admin/api-keys/${minted.json().keyId}` })
      assert.equal(read.statusCode, 200)
      assert.deepEqual(read.json(), restricted)
      const absent = await h.inject(as, { url: '/api/admin/api-keys/11111111-1111-4111-8111-111111111111' })
      assert.equal(absent.statusCode, 404)
      assert.equal(absent.json().code, 'NotFound')

      // A gateway's key cannot list keys (a route of no site): /api/me tells it its own restriction.
      const me = await h.inject({ org, apiKey: minted.json().plaintext as string }, { url: '/api/me', remoteAddress: '10.20.1.5' })
      assert.equal(me.statusCode, 200, me.body)
      assert.deepEqual([me.json().siteId, me.json().networks], ['A', networks])
      const mine = (await h.inject(as, { url: '/api/me' })).json()
      assert.deepEqual([mine.siteId, mine.networks], [null, null])
    })

    it('mint refuses an unknown site (400 naming /siteId) and a malformed network (400 naming it), storing no key', async (t) => {
      const h = await harness(t, dialect)
      const { org, as, mint } = await orgWithSites(h)
      const other = await h.orgWithKey()
      await h.inject({ org: other.org, apiKey: other.key }, { method: 'POST', url: '/api/sites', payload: { code: 'C', name: 'Elsewhere' } })
      for (const [over, pointer] of [
        [{ siteId: 'ZZ' }, '/siteId'],
        [{ siteId: 'C' }, '/siteId'], // another organisation's site
        [{ siteId: 'A', networks: ['10.0.0.0/8', '10.0.0.0/33'] }, '/networks/1'],
        [{ networks: ['gateway.local'] }, '/networks/0'],
        [{ networks: [] }, '/networks'],
      ] as const) {
        const res = await mint(over)
        assert.equal(res.statusCode, 400, JSON.stringify(over))
        assert.equal(res.json().code, 'ValidationFailed')
        assert.equal(res.json().errors[0].pointer, pointer)
      }
      const keys = await h.handle.db.selectFrom('api_keys').select('id').where('org_id', '=', org.id).execute()
      assert.equal(keys.length, 1, 'only the owner key')
      assert.equal((await h.inject(as, { url: '/api/admin/api-keys' })).json().length, 1)
    })

    it('a key restricted to client networks authenticates from them only; from elsewhere it gets the uniform 401', async (t) => {
      const h = await harness(t, dialect)
      const { org, mint } = await orgWithSites(h)
      const minted = await mint({ siteId: 'A', networks: ['10.20.0.0/16', '2001:db8::/32'] })
      const gateway = { org, apiKey: minted.json().plaintext as string }
      const from = (remoteAddress: string) => h.inject(gateway, { url: '/api/sites/A/controllers', remoteAddress })

      for (const inside of ['10.20.3.4', '::ffff:10.20.0.9', '2001:db8:1::2']) assert.equal((await from(inside)).statusCode, 200, inside)
      const unknownKey = await h.inject({ org, apiKey: `csk_${'x'.repeat(32)}` }, { url: '/api/sites/A/controllers', remoteAddress: '10.21.0.1' })
      assert.equal(unknownKey.statusCode, 401)
      for (const outside of ['10.21.0.1', '127.0.0.1', '2001:db9::1']) {
        const res = await from(outside)
        assert.equal(res.statusCode, 401, outside)
        assert.deepEqual(comparableBody(res.body), comparableBody(unknownKey.body))
        assert.deepEqual(comparableHeaders(res.headers), comparableHeaders(unknownKey.headers))
      }
    })
  })
}
