import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { harness, testDialects, type TestDialect } from '../../../test/harness.ts'
import { withApplyOrigin } from './outbox/store.ts'

/** An organisation with site S1 and controller PLC 1, made through the API (their outbox rows are this server's). */
async function orgWithController(t: TestContext, dialect: TestDialect, mode: 'cloud' | 'site') {
  const h = await harness(t, dialect, { SITEGRID_MODE: mode })
  const { org, key } = await h.orgWithKey('owner')
  const member = { org, apiKey: (await h.mintKey(org, 'member')).plaintext }
  const owner = { org, apiKey: key }
  assert.equal((await h.inject(owner, { method: 'POST', url: '/api/sites', payload: { code: 'S1', name: 'Plant 1' } })).statusCode, 201)
  const plc = await h.inject(owner, {
    method: 'POST',
    url: '/api/sites/S1/controllers',
    payload: { name: 'PLC 1', platform: 1, assetNumber: 'A-1', connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' } },
  })
  assert.equal(plc.statusCode, 201, plc.body)
  const controllerId = plc.json().id as string
  /** Renames the controller as the link would apply a peer's change (the outbox records `origin`). */
  const renameAs = (origin: string, name: string) =>
    h.handle.db
      .transaction()
      .execute((trx) =>
        withApplyOrigin(trx, dialect, origin, () =>
          trx.updateTable('controllers').set({ name }).where('org_id', '=', org.id).where('id', '=', controllerId).execute(),
        ),
      )
  const ask = (query: string, who = member) => h.inject(who, { method: 'GET', url: `/api/link/last-change?${query}` })
  const keyOf = (...k: unknown[]) => `key=${encodeURIComponent(JSON.stringify(k))}`
  return { h, org, owner, member, controllerId, renameAs, ask, keyOf }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: which side last changed a record (GET /api/link/last-change, issue 26)`, () => {
    it('cloud: a change made here is `here`, a site server’s change applied by the link names the server and its name; an unrecorded key is null', async (t) => {
      const { h, owner, controllerId, renameAs, ask, keyOf } = await orgWithController(t, dialect, 'cloud')
      const first = await ask(`table=controllers&${keyOf('S1', controllerId)}`)
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().table, 'controllers')
      assert.deepEqual(first.json().items[0].key, ['S1', controllerId])
      assert.deepEqual([first.json().items[0].change.origin, first.json().items[0].change.op, first.json().items[0].change.serverId], ['here', 'upsert', null])
      assert.ok(!Number.isNaN(Date.parse(first.json().items[0].change.at)))

      const reg = await h.inject(owner, { method: 'POST', url: '/api/admin/site-servers', payload: { name: 'Pit 3', sites: ['S1'] } })
      assert.equal(reg.statusCode, 201, reg.body)
      const serverId = reg.json().id as string
      await renameAs(serverId, 'PLC 1 (site edit)')
      const both = await ask(`table=controllers&${keyOf('S1', controllerId)}&${keyOf('S1', 'ctl_NONE')}`)
      assert.equal(both.statusCode, 200, both.body)
      const [edited, unknown] = both.json().items
      assert.deepEqual([edited.change.origin, edited.change.serverId, edited.change.serverName], ['siteServer', serverId, 'Pit 3'])
      assert.deepEqual(unknown, { key: ['S1', 'ctl_NONE'], change: null })

      // A later change here wins again.
      assert.equal(
        (await h.inject(owner, { method: 'PUT', url: `/api/sites/S1/controllers/${controllerId}`, payload: { name: 'PLC 1 (cloud)' } })).statusCode,
        200,
      )
      assert.equal((await ask(`table=controllers&${keyOf('S1', controllerId)}`)).json().items[0].change.origin, 'here')
      const site = await ask(`table=sites&${keyOf('S1')}`)
      assert.equal(site.json().items[0].change.origin, 'here')
    })

    it('site: a change pulled from the cloud is `cloud`, one made here is `here`', async (t) => {
      const { controllerId, renameAs, ask, keyOf } = await orgWithController(t, dialect, 'site')
      await renameAs('cloud', 'PLC 1 (cloud)')
      const res = await ask(`table=controllers&${keyOf('S1', controllerId)}`)
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual([res.json().items[0].change.origin, res.json().items[0].change.serverId], ['cloud', null])
      await renameAs('', 'PLC 1 (here)')
      assert.equal((await ask(`table=controllers&${keyOf('S1', controllerId)}`)).json().items[0].change.origin, 'here')
    })

    it('refuses what it cannot answer with a 400 naming the field: a table that is not linked or not readable, a key that is not a JSON array of the key’s length', async (t) => {
      const { ask, keyOf } = await orgWithController(t, dialect, 'cloud')
      for (const [query, pointer] of [
        [`table=audit_events&${keyOf('aud_1')}`, '/table'],
        [`table=api_keys&${keyOf('k')}`, '/table'],
        [`table=controllers&key=nope`, '/key/0'],
        [`table=controllers&${keyOf('S1')}`, '/key/0'],
        [`table=controllers&${keyOf('S1', 'a')}&${keyOf('S1', { id: 1 })}`, '/key/1'],
        ['table=controllers', '/key'],
      ] as const) {
        const res = await ask(query)
        assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
        assert.equal(res.json().code, 'ValidationFailed')
        assert.ok(
          res.json().errors.some((e: { pointer: string }) => e.pointer === pointer),
          `${query}: ${JSON.stringify(res.json().errors)}`,
        )
      }
    })

    it("another organisation's records are never recorded for the caller (null), and no credential is the uniform 401", async (t) => {
      const { h, controllerId, keyOf } = await orgWithController(t, dialect, 'cloud')
      const other = await h.orgWithKey('member')
      const res = await h.inject(
        { org: other.org, apiKey: other.key },
        { method: 'GET', url: `/api/link/last-change?table=controllers&${keyOf('S1', controllerId)}` },
      )
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().items[0].change, null)
      const anonymous = await h.inject(undefined, {
        method: 'GET',
        url: `/api/link/last-change?table=controllers&${keyOf('S1', controllerId)}`,
        host: `${other.org.slug}.localhost`,
      })
      assert.equal(anonymous.statusCode, 401)
    })
  })
}
