import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { KEY_SECRET, testDialects } from '../../../test/harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../../../test/oidc/identity-harness.ts'
import { RELOAD_URL as URL, reloadSuite } from './reload-harness.ts'

const bySetting = (changes: Array<{ setting: string }>) => [...changes].sort((a, b) => a.setting.localeCompare(b.setting))

// One real OpenID provider for the file, started on first use (platform-admin tests sign in through it).
let provider: Promise<SharedProvider> | undefined
const sharedProvider = () => (provider ??= startSharedProvider({ slots: 4 }))
after(async () => {
  if (provider) await (await provider).stop()
})

for (const dialect of testDialects()) {
  describe(`${dialect}: configuration reload`, () => {
    const site = reloadSuite(dialect, 'site')
    const cloud = reloadSuite(dialect, 'cloud')
    it('a valid reload swaps in the reloadable settings at once and lists what changed', async () => {
      const r = await site()
      r.writeFile({ SITEGRID_RATE_LIMIT_PER_MINUTE: 3, SITEGRID_LOG_LEVEL: 'debug' })
      const res = await r.reload({ reason: 'tune' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(Object.keys(res.json()).sort(), ['changed', 'reloadedAt', 'requiresRestart'])
      assert.deepEqual(bySetting(res.json().changed), [
        { setting: 'SITEGRID_LOG_LEVEL', from: 'info', to: 'debug' },
        { setting: 'SITEGRID_RATE_LIMIT_PER_MINUTE', from: 1200, to: 3 },
      ])
      assert.deepEqual(res.json().requiresRestart, [])
      assert.equal(r.log.level, 'debug', 'the log level took effect')
      // The reload itself was request 1 of this key's window; the new limit of 3 allows two more.
      assert.deepEqual([(await r.get()).statusCode, (await r.get()).statusCode, (await r.get()).statusCode], [200, 200, 429])
    })

    it('a reload with nothing changed answers an empty list', async () => {
      const r = await site()
      const res = await r.reload()
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json().changed, [])
      assert.deepEqual(res.json().requiresRestart, [])
    })

    it('a setting that needs a restart is listed under requiresRestart and the running value stays', async () => {
      const r = await site()
      r.writeFile({ PORT: 9999, SITEGRID_BODY_LIMIT_BYTES: 2048, SITEGRID_RATE_LIMIT_PER_MINUTE: 500 })
      const first = (await r.reload()).json()
      assert.deepEqual(first.requiresRestart.sort(), ['PORT', 'SITEGRID_BODY_LIMIT_BYTES'])
      assert.deepEqual(
        first.changed.map((c: { setting: string }) => c.setting),
        ['SITEGRID_RATE_LIMIT_PER_MINUTE'],
      )
      const again = (await r.reload()).json()
      assert.deepEqual(again.requiresRestart.sort(), ['PORT', 'SITEGRID_BODY_LIMIT_BYTES'], 'still pending: the running values did not change')
      assert.deepEqual(again.changed, [])
      const big = await r.app.inject({
        method: 'POST',
        url: '/api/admin/api-keys',
        headers: { host: `${r.org.slug}.localhost`, 'x-api-key': r.key },
        payload: { role: 'member', name: 'x'.repeat(200), expiresAt: new Date(r.h.clock.now() + 86_400_000).toISOString(), pad: 'p'.repeat(3000) },
      })
      assert.equal(big.statusCode, 400, 'a 3 KB body still reaches validation: the body limit is still the one in force')
    })

    it('an invalid configuration answers 422 naming every problem and the running one stays in force', async () => {
      const r = await site()
      r.writeFile({ SITEGRID_RATE_LIMIT_PER_MINUTE: 0, SITEGRID_LOG_LEVEL: 'loud', SITEGRID_NO_SUCH: 1 })
      const res = await r.reload({ reason: 'oops' })
      assert.equal(res.statusCode, 422)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(res.json().code, 'UnprocessableEntity')
      const problems: string[] = res.json().problems
      assert.ok(
        problems.some((p) => p.startsWith('SITEGRID_RATE_LIMIT_PER_MINUTE')),
        problems.join(),
      )
      assert.ok(
        problems.some((p) => p.startsWith('SITEGRID_LOG_LEVEL')),
        problems.join(),
      )
      assert.ok(
        problems.some((p) => p.includes('unknown setting SITEGRID_NO_SUCH')),
        problems.join(),
      )
      assert.equal(r.log.level, 'info')
      assert.equal((await r.get()).statusCode, 200, 'a rate limit of 0 was not swapped in')
    })

    it('an invalid environment, a file that is not JSON and a missing verifier secret are 422s too', async () => {
      const r = await site()
      r.env.PORT = 'eighty'
      const env = await r.reload()
      assert.equal(env.statusCode, 422)
      assert.ok(env.json().problems.some((p: string) => p.startsWith('PORT')))
      delete r.env.PORT
      r.writeFile('{ not json')
      assert.equal((await r.reload()).statusCode, 422)
      r.writeFile('{}')
      const secret = r.env.SITEGRID_KEY_SECRET!
      delete r.env.SITEGRID_KEY_SECRET
      const noSecret = await r.reload()
      assert.equal(noSecret.statusCode, 422)
      assert.ok(noSecret.json().problems.some((p: string) => p.includes('verifier secret')))
      r.env.SITEGRID_KEY_SECRET = secret
      assert.equal((await r.reload()).statusCode, 200)
      assert.equal((await r.get()).statusCode, 200)
    })

    it('every reload is audited with who, what changed and the reason, a refused one too', async () => {
      const r = await site()
      r.writeFile({ SITEGRID_RATE_LIMIT_PER_MINUTE: 900 })
      await r.reload({ reason: 'tune' })
      r.h.clock.advance(1) // audit ids are time-ordered
      r.writeFile({ SITEGRID_RATE_LIMIT_PER_MINUTE: -1 })
      await r.reload({ reason: 'typo' })
      const rows = await r.auditRows()
      assert.deepEqual(
        rows.map((row) => row.action),
        ['config.reloaded', 'config.reload_refused'],
      )
      assert.ok(rows.every((row) => row.actor_kind === 'apiKey' && row.actor_id === r.keyId && row.target === 'config'))
      assert.deepEqual(JSON.parse(rows[0]!.detail!), {
        reason: 'tune',
        changed: [{ setting: 'SITEGRID_RATE_LIMIT_PER_MINUTE', from: 1200, to: 900 }],
        requiresRestart: [],
      })
      const refused = JSON.parse(rows[1]!.detail!)
      assert.equal(refused.reason, 'typo')
      assert.ok(refused.problems.some((p: string) => p.startsWith('SITEGRID_RATE_LIMIT_PER_MINUTE')))
      assert.ok(!rows.some((row) => row.detail?.includes(KEY_SECRET)), 'no secret in an audit row')
    })

    it('on a site server only the site role owner may reload (admin and member: 403, nothing read or audited)', async () => {
      const r = await site()
      for (const role of ['admin', 'member'] as const) {
        const { plaintext } = await r.h.mintKey(r.org, role)
        const res = await r.reload({ reason: 'x' }, plaintext)
        assert.equal(res.statusCode, 403, role)
        assert.equal(res.json().code, 'Forbidden')
      }
      assert.equal(r.reloads(), 0)
      assert.deepEqual(await r.auditRows(), [])
    })

    it('in cloud mode an organisation owner is refused (403): reload is for platform admins only', async () => {
      const r = await cloud()
      const res = await r.reload({ reason: 'x' })
      assert.equal(res.statusCode, 403)
      assert.equal(r.reloads(), 0)
    })

    it("in cloud mode a platform admin (OIDC bearer) reloads and is audited in the host's organisation; an owner's bearer session gets 403", async (t) => {
      const h = await identityHarness(t, dialect, await sharedProvider())
      await h.makePlatformAdmin('root')
      const res = await h.inject({ org: h.org, bearer: await h.token('root') }, { method: 'POST', url: URL, payload: { reason: 'rotate logs' } })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json().changed, [])
      const rows = await h.handle.db.selectFrom('audit_events').selectAll().where('org_id', '=', h.org.id).where('action', '=', 'config.reloaded').execute()
      assert.equal(rows.length, 1)
      assert.equal(rows[0]!.actor_kind, 'user')
      assert.equal(JSON.parse(rows[0]!.detail!).reason, 'rotate logs')
      await h.activate('alice', 'owner')
      const owner = await h.inject({ org: h.org, bearer: await h.token('alice') }, { method: 'POST', url: URL, payload: {} })
      assert.equal(owner.statusCode, 403)
    })

    it('the body is optional; a non-string reason or an unknown property is a 400 naming it', async () => {
      const r = await site()
      assert.equal((await r.reload()).statusCode, 200)
      assert.equal((await r.reload({})).statusCode, 200)
      const bad = await r.reload({ reason: 5 })
      assert.equal(bad.statusCode, 400)
      const unknown = await r.reload({ force: true })
      assert.equal(unknown.statusCode, 400)
      assert.ok(unknown.json().errors.some((e: { pointer: string }) => e.pointer === '/force'))
    })
  })
}
