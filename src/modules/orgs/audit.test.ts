import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { comparableBody, testDialects, type Harness } from '../../../test/harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { CLI_ACTOR } from '../../identity.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import { sharedHarness } from './shared-harness.ts'

const CLOUD = { SITEGRID_MODE: 'cloud' }
const EVENT_FIELDS = ['action', 'actorId', 'actorKind', 'at', 'detail', 'id', 'target']

async function seed(h: Harness, orgId: OrgId, actions: string[]) {
  for (const action of actions) {
    h.clock.advance(1000)
    await recordAudit(h.handle.db, h.clock, orgId, CLI_ACTOR, { action, target: `t-${action}`, detail: { n: action } })
  }
}

// One real OpenID provider for the file, started on first use (platform-admin tests sign in through it).
let provider: Promise<SharedProvider> | undefined
const sharedProvider = () => (provider ??= startSharedProvider({ slots: 4 }))
after(async () => {
  if (provider) await (await provider).stop()
})

for (const dialect of testDialects()) {
  describe(`${dialect}: audit read`, () => {
    const cloud = sharedHarness(dialect, CLOUD)
    it("an owner reads the organisation's audit trail newest first, with who, what and when", async () => {
      const h = await cloud()
      const { org, key, keyId } = await h.orgWithKey()
      const minted = await h.inject(
        { org, apiKey: key },
        {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role: 'member', name: 'gw', expiresAt: new Date(h.clock.now() + 86_400_000 * 30).toISOString() },
        },
      )
      h.clock.advance(1000)
      await h.inject({ org, apiKey: key }, { method: 'DELETE', url: `/api/admin/api-keys/${minted.json().keyId}`, payload: { reason: 'done' } })
      const res = await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit` })
      assert.equal(res.statusCode, 200)
      const items = res.json().items
      assert.deepEqual(Object.keys(items[0]).sort(), EVENT_FIELDS)
      assert.deepEqual(items.map((e: { action: string }) => e.action).slice(0, 2), ['api_key.revoked', 'api_key.minted'])
      assert.equal(items[0].actorKind, 'apiKey')
      assert.equal(items[0].actorId, keyId)
      assert.equal(items[0].target, minted.json().keyId)
      assert.deepEqual(items[0].detail, { reason: 'done' })
      assert.equal(items[0].at, new Date(h.clock.now()).toISOString())
      assert.equal(res.json().nextCursor, null)
    })

    it('pages neither skip nor repeat events, even when new events arrive between pages', async () => {
      const h = await cloud()
      const { org, key } = await h.orgWithKey()
      await seed(h, org.id, ['a.1', 'a.2', 'a.3', 'a.4', 'a.5'])
      const read = (query: string) => h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit?action=a.&${query}` })
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const page: { items: Array<{ action: string }>; nextCursor: string | null } = (await read(`limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json()
        seen.push(...page.items.map((e) => e.action))
        cursor = page.nextCursor
        if (pages++ === 0) await seed(h, org.id, ['a.6'])
      } while (cursor)
      assert.deepEqual(seen, ['a.5', 'a.4', 'a.3', 'a.2', 'a.1'])
    })

    it('events of one second keep a stable order across pages (id breaks the tie)', async () => {
      const h = await cloud()
      const { org, key } = await h.orgWithKey()
      for (let i = 0; i < 5; i++) await recordAudit(h.handle.db, h.clock, org.id, CLI_ACTOR, { action: 'same.time', target: String(i) })
      const all = (await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit?action=same.&limit=5` })).json().items
      const paged = []
      let cursor: string | null = null
      do {
        const page: { items: unknown[]; nextCursor: string | null } = (
          await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit?action=same.&limit=2${cursor ? `&cursor=${cursor}` : ''}` })
        ).json()
        paged.push(...page.items)
        cursor = page.nextCursor
      } while (cursor)
      assert.equal(all.length, 5)
      assert.deepEqual(paged, all)
    })

    it('the action filter is a literal, case-sensitive prefix', async () => {
      const h = await cloud()
      const { org, key } = await h.orgWithKey()
      await seed(h, org.id, ['domain.bound', 'domain.enabled', 'domainx.other', 'api_x.one', 'apiax.two', 'Domain.upper'])
      const actions = async (prefix: string) =>
        (await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit?action=${prefix}` }))
          .json()
          .items.map((e: { action: string }) => e.action)
      assert.deepEqual(await actions('domain.'), ['domain.enabled', 'domain.bound'])
      assert.deepEqual(await actions('domain'), ['domainx.other', 'domain.enabled', 'domain.bound'])
      assert.deepEqual(await actions('api_x'), ['api_x.one'], 'an underscore is not a wildcard')
      const bad = await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit?action=dom%25` })
      assert.equal(bad.statusCode, 400)
      assert.equal(bad.json().errors[0].pointer, '/action')
    })

    it("one organisation never sees another's events, and another organisation's slug is the uniform 404", async () => {
      const h = await cloud()
      const a = await h.orgWithKey()
      const b = await h.orgWithKey()
      await seed(h, b.org.id, ['secret.thing'])
      const mine = await h.inject({ org: a.org, apiKey: a.key }, { url: `/api/admin/orgs/${a.org.slug}/audit` })
      assert.ok(!mine.body.includes('secret.thing'))
      const foreign = await h.inject({ org: a.org, apiKey: a.key }, { url: `/api/admin/orgs/${b.org.slug}/audit` })
      const none = await h.inject({ org: a.org, apiKey: a.key }, { url: '/api/admin/orgs/no-such-org/audit' })
      assert.equal(foreign.statusCode, 404)
      assert.deepEqual(comparableBody(foreign.body), comparableBody(none.body))
    })

    it('members are refused (403); admins read', async () => {
      const h = await cloud()
      const { org } = await h.orgWithKey()
      const member = await h.mintKey(org, 'member')
      const adminKey = await h.mintKey(org, 'admin')
      const url = `/api/admin/orgs/${org.slug}/audit`
      const refused = await h.inject({ org, apiKey: member.plaintext }, { url })
      assert.equal(refused.statusCode, 403)
      assert.equal(refused.json().code, 'Forbidden')
      assert.equal((await h.inject({ org, apiKey: adminKey.plaintext }, { url })).statusCode, 200)
      assert.equal((await h.inject(undefined, { url })).statusCode, 401)
    })

    it("a platform admin reads any organisation's trail; a member's bearer session is refused (403)", async (t) => {
      const h = await identityHarness(t, dialect, await sharedProvider())
      await h.makePlatformAdmin('root')
      const other = await h.createOrg()
      await seed(h, other.id, ['other.event'])
      const res = await h.inject({ org: h.org, bearer: await h.token('root') }, { url: `/api/admin/orgs/${other.slug}/audit` })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(
        res.json().items.map((e: { action: string }) => e.action),
        ['other.event'],
      )
      await h.activate('bob', 'member')
      const member = await h.inject({ org: h.org, bearer: await h.token('bob') }, { url: `/api/admin/orgs/${h.org.slug}/audit` })
      assert.equal(member.statusCode, 403)
    })

    it('a bad cursor, a limit above 200 and an unknown query parameter are 400s naming the field', async () => {
      const h = await cloud()
      const { org, key } = await h.orgWithKey()
      for (const [query, pointer] of [
        ['cursor=abc', '/cursor'],
        ['limit=201', '/limit'],
        ['limit=0', '/limit'],
        ['actor=x', '/actor'],
      ]) {
        const res = await h.inject({ org, apiKey: key }, { url: `/api/admin/orgs/${org.slug}/audit?${query}` })
        assert.equal(res.statusCode, 400, query)
        assert.equal(res.json().errors[0].pointer, pointer, query)
      }
    })
  })
}
