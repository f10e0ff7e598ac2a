// Session 23 (part HN): a cloud cell's operator suspends an organisation (`sitegrid org suspend`, the orgs service)
// and resumes it. While suspended its hosts serve nothing, to any credential; nothing it owns changes.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { httpRequest, runCli, startServer } from './cli/process.ts'
import { createOrgsService } from '../src/modules/orgs/service.ts'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT, stableBody } from './hardening/support.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: an operator suspends an organisation of a cloud cell`, () => {
    it('its subdomain and enabled custom domain answer its key as an unknown host (the uniform 401, byte for byte) from the commit on; other organisations are served; resume serves it again with the same key', async (t) => {
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: 'cloud' })
      const [a, b] = [await h.orgWithKey(), await h.orgWithKey()]
      const orgs = createOrgsService({ handle: h.handle, clock: h.clock })
      const owner = { org: a.org, apiKey: a.key }
      const domain = `plant-${a.org.slug}.example.com`
      const bound = await h.inject(owner, { method: 'POST', url: `/api/admin/orgs/${a.org.slug}/domains`, payload: { domain } })
      assert.equal(bound.statusCode, 201, bound.body)
      const enabled = await h.inject(owner, { method: 'PATCH', url: `/api/admin/orgs/${a.org.slug}/domains/${domain}`, payload: { isEnabled: true } })
      assert.equal(enabled.statusCode, 200, enabled.body)
      const hosts = [`${a.org.slug}.localhost`, domain]
      // Served (and so remembered by the tenancy cache) before the suspension.
      for (const host of hosts) assert.equal((await h.inject(owner, { url: '/api/me', host })).statusCode, 200, host)
      const uniform = await h.inject({ org: a.org, apiKey: `csk_${'0'.repeat(32)}` }, { url: '/api/me' })
      assert.equal(uniform.statusCode, 401)

      await orgs.suspend(a.org.slug)
      for (const host of hosts) {
        const res = await h.inject(owner, { url: '/api/me', host })
        assert.equal(res.statusCode, 401, host)
        assert.deepEqual(stableBody(res.body), stableBody(uniform.body), `${host}: nothing says suspended`)
        assert.equal(res.headers['www-authenticate'], uniform.headers['www-authenticate'])
      }
      assert.equal((await h.inject({ org: b.org, apiKey: b.key }, { url: '/api/me' })).statusCode, 200, 'another organisation is served')
      await orgs.suspend(a.org.slug) // again: no error, still suspended
      assert.equal((await h.inject(owner, { url: '/api/me' })).statusCode, 401)

      await orgs.resume(a.org.slug)
      for (const host of hosts) assert.equal((await h.inject(owner, { url: '/api/me', host })).statusCode, 200, `${host} after resume`)
      await orgs.resume(a.org.slug) // not suspended: nothing changes
      await assert.rejects(orgs.suspend('nobody-here'), { code: 'NotFound' })
      await assert.rejects(orgs.resume('nobody-here'), { code: 'NotFound' })
    })
  })
}

describe('sitegrid org suspend and resume beside a serving cloud process', () => {
  it('the command suspends at once in the server it does not run in (uniform 401 to the key), resume serves the same key again; an unknown slug exits non-zero', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-suspend-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    const env = { SITEGRID_MODE: 'cloud' }
    assert.equal(runCli(['init'], { cwd, env }).code, 0)
    assert.equal(runCli(['org', 'create', 'pit'], { cwd, env }).code, 0)
    const key = runCli(['key', 'mint', '--org', 'pit', '--role', 'owner', '--name', 'ops', '--expires-in', '30d'], { cwd, env }).stdout.trim()
    const server = await startServer({ cwd, env })
    t.after(() => server.stop())
    const me = () => httpRequest(`${server.url}/api/me`, { headers: { host: 'pit.localhost', 'x-api-key': key } })
    assert.equal((await me()).status, 200)
    const suspended = runCli(['org', 'suspend', 'pit'], { cwd, env })
    assert.equal(suspended.code, 0, suspended.stderr)
    assert.equal((await me()).status, 401)
    const resumed = runCli(['org', 'resume', 'pit'], { cwd, env })
    assert.equal(resumed.code, 0, resumed.stderr)
    assert.equal((await me()).status, 200)
    assert.notEqual(runCli(['org', 'suspend', 'nobody'], { cwd, env }).code, 0)
    // A site server serves its one organisation at any unbound host: suspending it there is bad usage, nothing changed.
    const onSite = runCli(['org', 'suspend', 'pit'], { cwd, env: { SITEGRID_MODE: 'site' } })
    assert.equal(onSite.code, 2)
    assert.match(onSite.stderr, /runs on a cloud cell/)
    assert.equal((await me()).status, 200)
  })
})
