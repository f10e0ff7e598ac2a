// Session 26: a key restricted to client networks gives no access that works from elsewhere. Session 24 kept its mints
// inside its networks; it could still approve an account as a member (who then signs in from anywhere), create a site
// user or set a site user's role or PIN, register a site server or issue its enrolment code (a link credential), or
// import a tenant package with memberships and keys. Each of those operations now answers it 403, changes nothing, and
// says so in the OpenAPI document; an unrestricted key, and the restricted key's other operations, are as before.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT } from './hardening/support.ts'

const DAY = 86_400_000
const LAN = '10.20.1.5'
/** The sentence openapi.ts adds to every operation marked `grantsAccess`. */
const MARK = 'an API key restricted to client networks is refused (403 `Forbidden`)'

const GRANTS = {
  site: ['approveMember', 'createSiteUser', 'importTenant', 'setSiteUserPin', 'updateSiteUser'],
  cloud: ['approveMember', 'importTenant', 'issueEnrolmentCode', 'registerSiteServer'],
} as const

interface Operation {
  operationId: string
  description?: string
}

for (const dialect of testDialects()) {
  for (const mode of ['site', 'cloud'] as const) {
    describe(`${dialect}, ${mode} mode: a network-restricted key gives no access of its own`, () => {
      it('every operation that gives an account or machine access answers it 403 before reading the request, and its document says so; its other operations and an unrestricted key are unchanged', async (t) => {
        const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: mode })
        const { org, key } = await h.orgWithKey('owner')
        const owner = { org, apiKey: key }
        const minted = await h.inject(owner, {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role: 'owner', name: 'lan owner', expiresAt: new Date(h.clock.now() + 30 * DAY).toISOString(), networks: ['10.20.0.0/16'] },
        })
        assert.equal(minted.statusCode, 201, minted.body)
        const lan = { org, apiKey: minted.json().plaintext as string }

        const document = (await h.inject(owner, { url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> }
        const marked = Object.entries(document.paths).flatMap(([path, item]) =>
          Object.entries(item)
            .filter(([, op]) => op.description?.includes(MARK))
            .map(([method, op]) => ({ path, method: method.toUpperCase(), operationId: op.operationId })),
        )
        assert.deepEqual(marked.map((op) => op.operationId).sort(), [...GRANTS[mode]])

        const problems: string[] = []
        for (const op of marked) {
          // Any body, any parameters: the refusal comes with the credential, before the request is read.
          const url = op.path.replace('{slug}', org.slug).replace(/\{[^}]+\}/g, 'x')
          const res = await h.inject(lan, { method: op.method as 'POST', url, remoteAddress: LAN, payload: {} })
          const body = res.json() as { code?: string; detail?: string }
          if (res.statusCode !== 403 || body.code !== 'Forbidden' || !body.detail?.includes('restricted to client networks'))
            problems.push(`${op.operationId}: ${res.statusCode} ${res.body.slice(0, 160)}`)
        }
        assert.deepEqual(problems, [])

        // Its other operations, as before: the key list, a site created.
        assert.equal((await h.inject(lan, { url: '/api/admin/api-keys', remoteAddress: LAN })).statusCode, 200)
        const site = await h.inject(lan, { method: 'POST', url: '/api/sites', remoteAddress: LAN, payload: { code: 'S1', name: 'Site one' } })
        assert.equal(site.statusCode, 201, site.body)

        if (mode === 'site') {
          // A valid site user: refused to the restricted key with nothing stored, created by the unrestricted one.
          const user = { email: 'op@example.test', displayName: 'Operator', siteRole: 'admin', pin: '482916' }
          const users = async () => ((await h.inject(owner, { url: '/api/site/users' })).json() as { items: unknown[] }).items.length
          assert.equal((await h.inject(lan, { method: 'POST', url: '/api/site/users', remoteAddress: LAN, payload: user })).statusCode, 403)
          assert.equal(await users(), 0, 'a refused create stores nothing')
          assert.equal((await h.inject(owner, { method: 'POST', url: '/api/site/users', remoteAddress: LAN, payload: user })).statusCode, 201)
          assert.equal(await users(), 1)
        } else {
          // A valid site server: refused to the restricted key with nothing stored, registered by the unrestricted one.
          const servers = async () => ((await h.inject(owner, { url: '/api/admin/site-servers' })).json() as { items: unknown[] }).items.length
          const payload = { name: 'box', sites: ['S1'] }
          assert.equal((await h.inject(lan, { method: 'POST', url: '/api/admin/site-servers', remoteAddress: LAN, payload })).statusCode, 403)
          assert.equal(await servers(), 0, 'a refused registration stores nothing')
          assert.equal((await h.inject(owner, { method: 'POST', url: '/api/admin/site-servers', payload })).statusCode, 201)
          assert.equal(await servers(), 1)
        }
      })
    })
  }
}
