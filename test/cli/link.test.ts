import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { connectDatabase } from '../../src/db/connect.ts'
import { httpRequest, runCli, startServer } from './process.ts'

describe('sitegrid link (processes, SQLite)', () => {
  it('register prints the code once; a site server enrols with it and is seeded; list and revoke; each command refuses the other mode', async (t) => {
    const cloudDir = mkdtempSync(join(tmpdir(), 'sitegrid-link-cloud-'))
    const siteDir = mkdtempSync(join(tmpdir(), 'sitegrid-link-site-'))
    t.after(() => {
      rmSync(cloudDir, { recursive: true, force: true })
      rmSync(siteDir, { recursive: true, force: true })
    })
    const cloudEnv = { SITEGRID_MODE: 'cloud', SITEGRID_LOG_LEVEL: 'warn' }
    runCli(['init'], { cwd: cloudDir, env: cloudEnv })
    runCli(['init'], { cwd: siteDir })
    const orgId = runCli(['org', 'create', 'plant', '--name', 'Plant Co'], { cwd: cloudDir, env: cloudEnv }).stdout.trim()
    const key = runCli(['key', 'mint', '--org', 'plant', '--role', 'owner', '--name', 'ops', '--expires-in', '1d'], {
      cwd: cloudDir,
      env: cloudEnv,
    }).stdout.trim()
    // The cloud is reached as http://127.0.0.1:PORT here (no name resolves to loopback but localhost): a custom domain
    // binding makes that host the organisation's, as {slug}.{domain} would.
    const handle = await connectDatabase(`sqlite:${join(cloudDir, 'data', 'sitegrid.db')}`)
    await handle.db
      .insertInto('domain_bindings')
      .values({ org_id: orgId, domain: '127.0.0.1', is_enabled: 1, created_at: 0, updated_at: 0, created_by: 'test' })
      .execute()
    await handle.close()
    const cloud = await startServer({ cwd: cloudDir, env: cloudEnv })
    t.after(() => cloud.stop())
    const site = await httpRequest(`${cloud.url}/api/sites`, {
      method: 'POST',
      headers: { host: 'plant.localhost', 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'PIT-3', name: 'Pit 3' }),
    })
    assert.equal(site.status, 201, site.body)

    const registered = runCli(['link', 'register', '--org', 'plant', '--name', 'Pit 3 box', '--site', 'PIT-3'], { cwd: cloudDir, env: cloudEnv })
    assert.equal(registered.code, 0, registered.stderr)
    const code = registered.stdout.trim()
    assert.match(code, /^sle_[0-9A-Za-z]{32}$/)
    const serverId = /site server (srv_[0-9A-Z]{26})/.exec(registered.stderr)?.[1]
    assert.ok(serverId, registered.stderr)
    assert.ok(!runCli(['link', 'list', '--org', 'plant', '--json'], { cwd: cloudDir, env: cloudEnv }).stdout.includes(code), 'never shown again')

    assert.equal(runCli(['link', 'enrol', '--cloud', cloud.url, '--code', code], { cwd: cloudDir, env: cloudEnv }).code, 2, 'enrol is for a site server')
    assert.equal(runCli(['link', 'list', '--org', 'plant'], { cwd: siteDir }).code, 2, 'list is for a cloud cell')

    const hostOnly = runCli(['link', 'enrol', '--cloud', cloud.url.replace(/^https?:\/\//, ''), '--code', code], { cwd: siteDir })
    assert.equal(hostOnly.code, 2, 'a --cloud without its scheme is bad usage')
    assert.match(hostOnly.stderr, /--cloud must be the cloud cell's http\(s\) URL/)
    const enrolled = runCli(['link', 'enrol', '--cloud', cloud.url, '--code', code], { cwd: siteDir })
    assert.equal(enrolled.code, 0, enrolled.stderr)
    assert.match(enrolled.stderr, new RegExp(`enrolled as site server ${serverId} of plant \\(${orgId}\\) for PIT-3; seeded PIT-3`))
    assert.ok(!enrolled.stderr.includes('slk_') && enrolled.stdout === '', 'the credential is never printed')
    assert.equal(runCli(['org', 'list'], { cwd: siteDir }).stdout.split('\t').slice(0, 3).join('\t'), `${orgId}\tplant\tPlant Co`)
    const again = runCli(['link', 'enrol', '--cloud', cloud.url, '--code', code], { cwd: siteDir })
    assert.equal(again.code, 1)
    assert.match(again.stderr, /Unauthorized/, 'a used code')

    const listed = runCli(['link', 'list', '--org', 'plant'], { cwd: cloudDir, env: cloudEnv }).stdout.trim().split('\t')
    assert.deepEqual(listed.slice(0, 4), [serverId, 'Pit 3 box', 'PIT-3', 'enrolled'])
    assert.equal(runCli(['link', 'revoke', '--org', 'plant', serverId!], { cwd: cloudDir, env: cloudEnv }).code, 0)
    assert.equal(runCli(['link', 'list', '--org', 'plant'], { cwd: cloudDir, env: cloudEnv }).stdout.split('\t')[3], 'revoked')
    assert.equal(runCli(['link', 'revoke', '--org', 'plant', serverId!], { cwd: cloudDir, env: cloudEnv }).code, 1, 'already revoked: NotFound')
    const renewed = runCli(['link', 'code', '--org', 'plant', serverId!], { cwd: cloudDir, env: cloudEnv })
    assert.equal(renewed.code, 0, renewed.stderr)
    const reenrolled = runCli(['link', 'enrol', '--cloud', cloud.url, '--code', renewed.stdout.trim()], { cwd: siteDir })
    assert.equal(reenrolled.code, 0, reenrolled.stderr)
    assert.match(reenrolled.stderr, new RegExp(`re-enrolled as site server ${serverId}.*seeded nothing`))
  })
})
