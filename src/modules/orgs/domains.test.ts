import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { comparableBody, comparableHeaders, harness, testDialects, type Harness } from '../../../test/harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { buildApp } from '../../app.ts'
import type { Principal } from '../../identity.ts'
import { satisfiesPolicy } from '../../http/auth.ts'
import type { OrgId } from '../../ids.ts'
import { connectDatabase } from '../../db/connect.ts'
import { createLogger } from '../../http/logger.ts'
import { checkDomain } from './domains-rules.ts'
import { createOrgsService } from './service.ts'
import { sharedHarness } from './shared-harness.ts'

// Cloud mode: there an unbound host is unknown (in site mode it is the site's organisation).
const CLOUD = { SITEGRID_MODE: 'cloud' }
const BINDING_FIELDS = ['createdAt', 'domain', 'isEnabled', 'updatedAt']
const uniqueDomain = (suffix = 'example.com') => `d${randomBytes(5).toString('hex')}.${suffix}`

async function admin(h: Harness, role: 'owner' | 'admin' = 'owner') {
  const { org, key } = await h.orgWithKey(role)
  const as = { org, apiKey: key }
  const base = `/api/admin/orgs/${org.slug}/domains`
  return {
    org,
    key,
    as,
    base,
    bind: (domain: unknown) => h.inject(as, { method: 'POST', url: base, payload: { domain } }),
    setEnabled: (domain: string, isEnabled: boolean) => h.inject(as, { method: 'PATCH', url: `${base}/${domain}`, payload: { isEnabled } }),
    unbind: (domain: string) => h.inject(as, { method: 'DELETE', url: `${base}/${domain}` }),
    list: (query = '') => h.inject(as, { url: `${base}${query}` }),
    /** A request at the custom host with this organisation's key. */
    atHost: (host: string) => h.inject(as, { url: '/api/admin/api-keys', host }),
  }
}

const bindingRows = (h: Harness, domain: string) => h.handle.db.selectFrom('domain_bindings').selectAll().where('domain', '=', domain).execute()

// One real OpenID provider for the file, started on first use (platform-admin tests sign in through it).
let provider: Promise<SharedProvider> | undefined
const sharedProvider = () => (provider ??= startSharedProvider({ slots: 4 }))
after(async () => {
  if (provider) await (await provider).stop()
})

for (const dialect of testDialects()) {
  describe(`${dialect}: domain bindings`, () => {
    const cloud = sharedHarness(dialect, CLOUD)
    it('binding answers 201 with a disabled binding of exactly the documented fields, listed and audited', async () => {
      const h = await cloud()
      const a = await admin(h)
      const domain = uniqueDomain()
      const res = await a.bind(domain)
      assert.equal(res.statusCode, 201)
      assert.deepEqual(Object.keys(res.json()).sort(), BINDING_FIELDS)
      assert.equal(res.json().domain, domain)
      assert.equal(res.json().isEnabled, false)
      const list = await a.list()
      assert.equal(list.statusCode, 200)
      assert.deepEqual(
        list.json().items.map((b: { domain: string }) => b.domain),
        [domain],
      )
      assert.equal(list.json().nextCursor, null)
      const audit = await h.handle.db.selectFrom('audit_events').selectAll().where('org_id', '=', a.org.id).where('action', '=', 'domain.bound').execute()
      assert.equal(audit.length, 1)
      assert.equal(audit[0]!.target, domain)
    })

    it('a disabled binding is an unknown host (the uniform 401); enabled it serves the organisation exactly as its subdomain; disabled or removed it stops at once', async () => {
      const h = await cloud()
      const a = await admin(h)
      const domain = uniqueDomain()
      const unknown = await a.atHost(uniqueDomain())
      assert.equal(unknown.statusCode, 401)

      await a.bind(domain)
      const disabled = await a.atHost(domain)
      assert.equal(disabled.statusCode, 401)
      assert.deepEqual(comparableBody(disabled.body), comparableBody(unknown.body))
      assert.deepEqual(comparableHeaders(disabled.headers), comparableHeaders(unknown.headers))

      const enabled = await a.setEnabled(domain, true)
      assert.equal(enabled.statusCode, 200)
      assert.equal(enabled.json().isEnabled, true)
      const served = await a.atHost(domain)
      assert.equal(served.statusCode, 200)
      const viaSubdomain = await h.inject(a.as, { url: '/api/admin/api-keys' })
      // lastUsedAt is written best-effort a few seconds after use: a flush may land between the two reads.
      const keys = (list: Array<Record<string, unknown>>) => list.map(({ lastUsedAt: _, ...key }) => key)
      assert.deepEqual(keys(served.json()), keys(viaSubdomain.json()))
      assert.equal(served.json().length, 1)
      assert.equal((await a.atHost(domain.toUpperCase())).statusCode, 200, 'the Host header is case-insensitive')

      assert.equal((await a.setEnabled(domain, false)).statusCode, 200)
      assert.equal((await a.atHost(domain)).statusCode, 401)
      assert.equal((await a.setEnabled(domain, true)).statusCode, 200)
      assert.equal((await a.atHost(domain)).statusCode, 200)
      assert.equal((await a.unbind(domain)).statusCode, 204)
      assert.equal((await a.atHost(domain)).statusCode, 401)
    })

    it("an enabled binding serves only its organisation: another organisation's key there is the uniform 401", async () => {
      const h = await cloud()
      const a = await admin(h)
      const other = await h.orgWithKey()
      const domain = uniqueDomain()
      await a.bind(domain)
      await a.setEnabled(domain, true)
      const res = await h.inject({ org: other.org, apiKey: other.key }, { url: '/api/admin/api-keys', host: domain })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().code, 'Unauthorized')
    })

    it("in site mode a disabled binding is still an unknown host, not the site's organisation", async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'site' })
      const a = await admin(h)
      const domain = uniqueDomain()
      await a.bind(domain)
      const res = await h.inject(a.as, { url: '/api/admin/api-keys', host: domain })
      assert.equal(res.statusCode, 401)
    })

    it('a domain is bound to at most one organisation: 409 for another organisation and for the same one again, and nothing changes', async () => {
      const h = await cloud()
      const a = await admin(h)
      const b = await admin(h)
      const domain = uniqueDomain()
      assert.equal((await a.bind(domain)).statusCode, 201)
      const taken = await b.bind(domain)
      assert.equal(taken.statusCode, 409)
      assert.equal(taken.json().code, 'Conflict')
      assert.equal((await a.bind(domain)).statusCode, 409)
      const rows = await bindingRows(h, domain)
      assert.equal(rows.length, 1)
      assert.equal(rows[0]!.org_id, a.org.id)
      assert.deepEqual((await b.list()).json().items, [])
      const audit = await h.handle.db.selectFrom('audit_events').select('id').where('org_id', '=', b.org.id).where('action', 'like', 'domain%').execute()
      assert.equal(audit.length, 0, 'a refused bind writes no audit row')
    })

    it('two organisations racing for one domain: exactly one wins, the other gets 409 (the unique index decides)', async () => {
      const h = await cloud()
      const contenders = await Promise.all([admin(h), admin(h), admin(h), admin(h)])
      const domain = uniqueDomain()
      const answers = await Promise.all(contenders.map((c) => c.bind(domain)))
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 409, 409, 409])
      assert.equal((await bindingRows(h, domain)).length, 1)
    })

    const invalid: Array<[string, unknown]> = [
      // [rule, domain]
      ['null', null],
      ['empty', ''],
      ['upper case (refused, not folded)', 'Plant.Example.com'],
      ['an IPv4 address', '192.0.2.10'],
      ['an IPv6 address', '2001:db8::1'],
      ['a bracketed IPv6 address', '[2001:db8::1]'],
      ['an all-numeric top label', 'plant.example.123'],
      ['a wildcard', '*.example.com'],
      ['under the base domain', 'plant.localhost'],
      ['a single label', 'intranet'],
      ['254 characters', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`],
      ['a 64-character label', `${'a'.repeat(64)}.example.com`],
      ['an underscore', 'my_plant.example.com'],
      ['a label starting with a hyphen', '-plant.example.com'],
      ['an empty label (trailing dot)', 'plant.example.com.'],
      ['a port', 'plant.example.com:8443'],
    ]
    it('an invalid domain is a 400 ValidationFailed naming /domain, one rule at a time, and nothing is bound', async () => {
      const h = await cloud()
      const a = await admin(h)
      for (const [rule, domain] of invalid) {
        const res = await a.bind(domain)
        assert.equal(res.statusCode, 400, rule)
        assert.equal(res.json().code, 'ValidationFailed', rule)
        assert.equal(res.json().errors[0].pointer, '/domain', rule)
      }
      const rows = await h.handle.db.selectFrom('domain_bindings').select('domain').where('org_id', '=', a.org.id).execute()
      assert.deepEqual(rows, [])
    })

    it('the base domain itself and hosts under it are refused whatever the base domain is', async (t) => {
      const h = await harness(t, dialect, { ...CLOUD, SITEGRID_BASE_DOMAIN: 'grid.example' })
      const { org, key } = await h.orgWithKey()
      const bind = (domain: string) =>
        h.inject({ org, apiKey: key }, { method: 'POST', url: `/api/admin/orgs/${org.slug}/domains`, host: `${org.slug}.grid.example`, payload: { domain } })
      for (const domain of ['grid.example', 'x.grid.example', 'a.b.grid.example']) {
        const res = await bind(domain)
        assert.equal(res.statusCode, 400, domain)
        assert.equal(res.json().errors[0].pointer, '/domain')
      }
      assert.equal((await bind('xgrid.example')).statusCode, 201, 'a sibling that merely ends with the same letters is fine')
    })

    it('253 characters and 63-character labels are accepted (the bounds are inclusive)', () => {
      const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`
      assert.equal(longest.length, 253)
      assert.equal(checkDomain(longest, 'localhost'), longest)
      assert.equal(checkDomain('xn--bcher-kva.example', 'localhost'), 'xn--bcher-kva.example')
    })

    it('a body without domain or with an unknown property is a 400 naming the field', async () => {
      const h = await cloud()
      const a = await admin(h)
      const missing = await h.inject(a.as, { method: 'POST', url: a.base, payload: {} })
      assert.equal(missing.statusCode, 400)
      assert.equal(missing.json().errors[0].pointer, '/domain')
      const extra = await h.inject(a.as, { method: 'POST', url: a.base, payload: { domain: uniqueDomain(), isEnabled: true } })
      assert.equal(extra.statusCode, 400)
      assert.equal(extra.json().errors[0].pointer, '/isEnabled')
      const patch = await h.inject(a.as, { method: 'PATCH', url: `${a.base}/x.example.com`, payload: { isEnabled: 'yes' } })
      assert.equal(patch.statusCode, 400)
    })

    it('{slug} of another organisation, or of none, answers the same 404 on every route and changes nothing', async () => {
      const h = await cloud()
      const a = await admin(h)
      const b = await admin(h)
      const domain = uniqueDomain()
      await b.bind(domain)
      const answers = []
      for (const slug of [b.org.slug, 'no-such-org']) {
        const base = `/api/admin/orgs/${slug}/domains`
        answers.push(
          await h.inject(a.as, { method: 'POST', url: base, payload: { domain: uniqueDomain() } }),
          await h.inject(a.as, { url: base }),
          await h.inject(a.as, { method: 'PATCH', url: `${base}/${domain}`, payload: { isEnabled: true } }),
          await h.inject(a.as, { method: 'DELETE', url: `${base}/${domain}` }),
        )
      }
      for (const res of answers) {
        assert.equal(res.statusCode, 404)
        assert.deepEqual(comparableBody(res.body), comparableBody(answers[0]!.body))
      }
      const rows = await h.handle.db.selectFrom('domain_bindings').selectAll().where('org_id', 'in', [a.org.id, b.org.id]).execute()
      assert.equal(rows.length, 1)
      assert.equal(rows[0]!.is_enabled, 0)
    })

    it("PATCH and DELETE of an absent domain or of another organisation's domain answer the same 404", async () => {
      const h = await cloud()
      const a = await admin(h)
      const b = await admin(h)
      const theirs = uniqueDomain()
      await b.bind(theirs)
      const answers = [await a.setEnabled(theirs, true), await a.setEnabled(uniqueDomain(), true), await a.unbind(theirs), await a.unbind(uniqueDomain())]
      for (const res of answers) {
        assert.equal(res.statusCode, 404)
        assert.deepEqual(comparableBody(res.body), comparableBody(answers[0]!.body))
      }
      const mine = uniqueDomain()
      await a.bind(mine)
      assert.equal((await a.unbind(mine)).statusCode, 204)
      assert.equal((await a.unbind(mine)).statusCode, 404, 'a repeated DELETE is the same 404')
      assert.equal((await bindingRows(h, theirs))[0]!.is_enabled, 0)
    })

    it('members are refused (403) on every route; admins and owners pass', async () => {
      const h = await cloud()
      const owner = await admin(h)
      const { plaintext: memberKey } = await h.mintKey(owner.org, 'member')
      const { plaintext: adminKey } = await h.mintKey(owner.org, 'admin')
      const domain = uniqueDomain()
      await owner.bind(domain)
      const member = { org: owner.org, apiKey: memberKey }
      for (const options of [
        { method: 'POST' as const, url: owner.base, payload: { domain: uniqueDomain() } },
        { method: 'GET' as const, url: owner.base },
        { method: 'PATCH' as const, url: `${owner.base}/${domain}`, payload: { isEnabled: true } },
        { method: 'DELETE' as const, url: `${owner.base}/${domain}` },
      ]) {
        const res = await h.inject(member, options)
        assert.equal(res.statusCode, 403, `${options.method}`)
        assert.equal(res.json().code, 'Forbidden')
      }
      assert.equal((await bindingRows(h, domain))[0]!.is_enabled, 0)
      const asAdmin = await h.inject({ org: owner.org, apiKey: adminKey }, { method: 'PATCH', url: `${owner.base}/${domain}`, payload: { isEnabled: true } })
      assert.equal(asAdmin.statusCode, 200)
    })

    it('enable, disable and unbind are audited with who and what; an unchanged PATCH writes nothing', async () => {
      const h = await cloud()
      const a = await admin(h)
      const domain = uniqueDomain()
      await a.bind(domain)
      h.clock.advance(1) // audit ids are time-ordered: one step per millisecond keeps the expected order
      await a.setEnabled(domain, true)
      h.clock.advance(1)
      await a.setEnabled(domain, true)
      h.clock.advance(1)
      await a.setEnabled(domain, false)
      h.clock.advance(1)
      await a.unbind(domain)
      const audit = await h.handle.db.selectFrom('audit_events').selectAll().where('org_id', '=', a.org.id).where('target', '=', domain).orderBy('id').execute()
      assert.deepEqual(
        audit.map((r) => r.action),
        ['domain.bound', 'domain.enabled', 'domain.disabled', 'domain.unbound'],
      )
      const keyId = (await h.handle.db.selectFrom('api_keys').select('id').where('org_id', '=', a.org.id).executeTakeFirstOrThrow()).id
      assert.ok(audit.every((r) => r.actor_kind === 'apiKey' && r.actor_id === keyId))
    })

    it('the list is keyset-paged in domain order; a foreign cursor is a 400 naming cursor', async () => {
      const h = await cloud()
      const a = await admin(h)
      const domains = ['c.example.com', 'a.example.com', 'b.example.com'].map((d) => `${a.org.slug}-${d}`)
      for (const d of domains) assert.equal((await a.bind(d)).statusCode, 201)
      const first = (await a.list('?limit=2')).json()
      assert.equal(first.items.length, 2)
      assert.ok(first.nextCursor)
      const second = (await a.list(`?limit=2&cursor=${first.nextCursor}`)).json()
      assert.equal(second.nextCursor, null)
      assert.deepEqual(
        [...first.items, ...second.items].map((b: { domain: string }) => b.domain),
        [...domains].sort(),
      )
      const bad = await a.list('?cursor=not-a-cursor')
      assert.equal(bad.statusCode, 400)
      assert.equal(bad.json().errors[0].pointer, '/cursor')
    })

    it('another process sharing the database serves and stops serving the host as soon as the binding changes', async (t) => {
      const h = await cloud()
      const a = await admin(h)
      const otherHandle = await connectDatabase(h.config.databaseUrl, { poolSize: 2 })
      const other = await buildApp({ config: h.config, handle: otherHandle, clock: h.clock, log: createLogger('silent') })
      t.after(async () => {
        await other.close()
        await otherHandle.close()
      })
      const domain = uniqueDomain()
      const viaOther = () => other.inject({ url: '/api/admin/api-keys', headers: { host: domain, 'x-api-key': a.key } })
      await a.bind(domain)
      assert.equal((await viaOther()).statusCode, 401, 'disabled (and now cached as such)')
      await a.setEnabled(domain, true)
      assert.equal((await waitFor(viaOther, 200)).statusCode, 200)
      await a.setEnabled(domain, false)
      assert.equal((await waitFor(viaOther, 401)).statusCode, 401)
    })

    it("a platform admin (OIDC bearer) administers another organisation's domains from any host; an owner's bearer session gets the uniform 404 there", async (t) => {
      const h = await identityHarness(t, dialect, await sharedProvider())
      await h.makePlatformAdmin('root')
      const root = { org: h.org, bearer: await h.token('root') }
      const other = await h.createOrg()
      const base = `/api/admin/orgs/${other.slug}/domains`
      const domain = uniqueDomain()
      const bound = await h.inject(root, { method: 'POST', url: base, payload: { domain } })
      assert.equal(bound.statusCode, 201)
      assert.equal((await bindingRows(h, domain))[0]!.org_id, other.id)
      assert.equal((await h.inject(root, { method: 'PATCH', url: `${base}/${domain}`, payload: { isEnabled: true } })).statusCode, 200)
      assert.deepEqual(
        (await h.inject(root, { url: base })).json().items.map((b: { domain: string }) => b.domain),
        [domain],
      )
      const { plaintext } = await h.mintKey(other)
      assert.equal(
        (await h.inject({ org: other, apiKey: plaintext }, { url: '/api/admin/api-keys', host: domain })).statusCode,
        200,
        'the binding serves the other organisation',
      )
      assert.equal((await h.inject(root, { url: '/api/admin/orgs/no-such-org/domains' })).statusCode, 404)
      const audit = await h.handle.db.selectFrom('audit_events').selectAll().where('org_id', '=', other.id).where('target', '=', domain).execute()
      assert.ok(audit.length === 2 && audit.every((r) => r.actor_kind === 'user'))

      await h.activate('alice', 'owner')
      const alice = { org: h.org, bearer: await h.token('alice') }
      const refused = await h.inject(alice, { method: 'DELETE', url: `${base}/${domain}` })
      assert.equal(refused.statusCode, 404)
      assert.equal(
        (await h.inject(alice, { method: 'POST', url: `/api/admin/orgs/${h.org.slug}/domains`, payload: { domain: uniqueDomain() } })).statusCode,
        201,
      )
      assert.equal((await h.inject(root, { method: 'DELETE', url: `${base}/${domain}` })).statusCode, 204)
    })

    it('the OpenAPI document describes every route with its bodies and answers', async () => {
      const h = await cloud()
      const doc = (await h.app.inject({ url: '/openapi.json' })).json()
      const domains = doc.paths['/api/admin/orgs/{slug}/domains']
      assert.ok(domains.post.requestBody && domains.post.responses['201'] && domains.post.responses['409'] && domains.get.responses['200'])
      const one = doc.paths['/api/admin/orgs/{slug}/domains/{domain}']
      assert.ok(one.patch.responses['200'] && one.delete.responses['204'] && one.delete.responses['404'])
      assert.ok(doc.paths['/api/admin/orgs/{slug}/audit'].get.responses['200'])
      assert.ok(doc.paths['/api/admin/config/reload'].post.responses['422'])
    })

    it('deprovisioning the organisation removes its bindings and the host stops serving', async () => {
      const h = await cloud()
      const a = await admin(h)
      const domain = uniqueDomain()
      await a.bind(domain)
      await a.setEnabled(domain, true)
      assert.equal((await a.atHost(domain)).statusCode, 200)
      await createOrgsService({ handle: h.handle, clock: h.clock }).deprovision(a.org.slug)
      assert.deepEqual(await bindingRows(h, domain), [])
      assert.equal((await a.atHost(domain)).statusCode, 401)
    })
  })
}

/** PostgreSQL delivers the other process's invalidation asynchronously (LISTEN/NOTIFY): allow it a moment. */
async function waitFor(request: () => Promise<{ statusCode: number }>, status: number) {
  let res = await request()
  for (let i = 0; i < 50 && res.statusCode !== status; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    res = await request()
  }
  return res
}

describe('the OrgAdmin policy', () => {
  const principal = (over: Partial<Principal>): Principal => ({
    orgId: 'org_00000000' as OrgId,
    kind: 'apiKey',
    role: 'owner',
    subject: 's',
    isPlatformAdmin: false,
    ...over,
  })
  it('passes organisation owners and admins (key or user) and platform admins; refuses members and every site-PIN principal', () => {
    assert.equal(satisfiesPolicy(principal({ role: 'owner' }), 'orgAdmin'), true)
    assert.equal(satisfiesPolicy(principal({ role: 'admin', kind: 'user' }), 'orgAdmin'), true)
    assert.equal(satisfiesPolicy(principal({ role: 'member', kind: 'user' }), 'orgAdmin'), false)
    assert.equal(satisfiesPolicy(principal({ role: 'owner', kind: 'sitePin' }), 'orgAdmin'), false)
    assert.equal(satisfiesPolicy(principal({ role: 'member', kind: 'user', isPlatformAdmin: true }), 'orgAdmin'), true)
  })
})
