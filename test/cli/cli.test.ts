import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ORG_ID_PATTERN } from '../../src/ids.ts'
import { runCli, startServer } from './process.ts'

function workdir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-cli-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

describe('the sitegrid command', () => {
  it('init creates the data folder, a 0600 secret file and a config file naming it, and is idempotent', (t) => {
    const cwd = workdir(t)
    const first = runCli(['init'], { cwd })
    assert.equal(first.code, 0, first.stderr)
    const secret = readFileSync(join(cwd, 'data', 'key-secret'), 'utf8')
    assert.equal(Buffer.from(secret.trim(), 'base64').length, 32)
    assert.equal(statSync(join(cwd, 'data', 'key-secret')).mode & 0o777, 0o600)
    assert.ok(!first.stdout.includes(secret.trim()) && !first.stderr.includes(secret.trim()), 'the secret is never printed')
    assert.equal(runCli(['init'], { cwd }).code, 0)
    assert.equal(readFileSync(join(cwd, 'data', 'key-secret'), 'utf8'), secret, 'a second init keeps the secret')
  })

  it("a data folder made by an earlier version (its config file's paths relative to the working directory) works again after init, which is what npm start runs", (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    assert.equal(runCli(['org', 'create', 'plant', '--name', 'Plant'], { cwd }).code, 0)
    const configFile = join(cwd, 'data', 'sitegrid.json')
    // What init wrote before: the secret file named from the working directory, and a database named the same way.
    writeFileSync(configFile, JSON.stringify({ SITEGRID_KEY_SECRET_FILE: './data/key-secret', DATABASE_URL: 'sqlite:./data/sitegrid.db' }))
    const before = runCli(['org', 'list'], { cwd })
    assert.equal(before.code, 78, 'read from its own folder, the old paths name nothing')
    assert.match(before.stderr, /data\/data/)
    const init = runCli(['init'], { cwd })
    assert.equal(init.code, 0, init.stderr)
    assert.match(init.stderr, /SITEGRID_KEY_SECRET_FILE: \.\/data\/key-secret → key-secret/)
    assert.match(init.stderr, /DATABASE_URL: sqlite:\.\/data\/sitegrid\.db → sqlite:sitegrid\.db/)
    assert.deepEqual(JSON.parse(readFileSync(configFile, 'utf8')), { SITEGRID_KEY_SECRET_FILE: 'key-secret', DATABASE_URL: 'sqlite:sitegrid.db' })
    assert.equal(statSync(configFile).mode & 0o777, 0o600)
    const after = runCli(['org', 'list'], { cwd })
    assert.equal(after.code, 0, after.stderr)
    assert.match(after.stdout, /\tplant\t/, 'the same database, with its organisation')
    assert.equal(runCli(['init'], { cwd }).stderr.includes('→'), false, 'nothing to change a second time')
  })

  it('serve without a configured secret stops with a clear message and a non-zero exit, inventing nothing', (t) => {
    const cwd = workdir(t)
    const res = runCli(['serve'], { cwd, env: { PORT: '0' } })
    assert.notEqual(res.code, 0)
    assert.match(res.stderr, /no API-key verifier secret is configured/)
    const missing = runCli(['serve'], { cwd, env: { SITEGRID_KEY_SECRET_FILE: join(cwd, 'nope'), PORT: '0' } })
    assert.notEqual(missing.code, 0)
    assert.match(missing.stderr, /cannot read/)
    assert.throws(() => statSync(join(cwd, 'data', 'key-secret')), 'no secret file appeared')
  })

  it('org create prints the id alone; key mint prints the plaintext alone; list and revoke work; errors go to stderr', (t) => {
    const cwd = workdir(t)
    runCli(['init'], { cwd })
    const created = runCli(['org', 'create', 'acme', '--name', 'Acme Mining'], { cwd })
    assert.equal(created.code, 0, created.stderr)
    assert.match(created.stdout, /^org_[0-9A-HJKMNP-TV-Z]{8}\n$/)
    assert.ok(ORG_ID_PATTERN.test(created.stdout.trim()))
    const dup = runCli(['org', 'create', 'acme'], { cwd })
    assert.equal(dup.code, 1)
    assert.equal(dup.stdout, '')
    assert.match(dup.stderr, /Conflict/)
    assert.match(runCli(['org', 'list'], { cwd }).stdout, /\tacme\tAcme Mining\t/)
    const minted = runCli(['key', 'mint', '--org', 'acme', '--role', 'admin', '--name', 'bootstrap', '--expires-in', '30d'], { cwd })
    assert.equal(minted.code, 0, minted.stderr)
    assert.match(minted.stdout, /^csk_[0-9A-Za-z]{32}\n$/)
    const list = runCli(['key', 'list', '--org', 'acme', '--json'], { cwd })
    const keys = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.equal(keys.length, 1)
    assert.equal(keys[0].keyPrefix, minted.stdout.slice(0, 8))
    assert.ok(!list.stdout.includes(minted.stdout.trim()))
    const badExpiry = runCli(['key', 'mint', '--org', 'acme', '--role', 'admin', '--name', 'x', '--expires-in', '30m'], { cwd })
    assert.equal(badExpiry.code, 1)
    assert.match(badExpiry.stderr, /ExpiryPolicyViolation/)
    const reserved = runCli(['key', 'mint', '--org', 'acme', '--role', 'Platform_Admin', '--name', 'x', '--expires-in', '1d'], { cwd })
    assert.match(reserved.stderr, /ReservedRole/)
    // A misspelt organisation is named, with where to find the right one (not the API's anonymous "No such resource.").
    for (const args of [
      ['key', 'mint', '--org', 'acne', '--role', 'admin', '--name', 'x', '--expires-in', '1d'],
      ['tenant', 'export', 'acne', '--output', join(cwd, 'p.gz')],
    ]) {
      const unknown = runCli(args, { cwd })
      assert.equal(unknown.code, 1, args.join(' '))
      assert.match(unknown.stderr, /NotFound: no organisation "acne" on this server \(`sitegrid org list` shows them\)/, args.join(' '))
    }
    assert.equal(runCli(['key', 'revoke', '--org', 'acme', keys[0].keyId], { cwd }).code, 0)
    assert.equal(runCli(['key', 'revoke', '--org', 'acme', keys[0].keyId], { cwd }).code, 1)
    assert.equal(runCli(['key', 'list', '--org', 'acme'], { cwd }).stdout, '')
  })

  it('org delete removes the organisation and its keys', (t) => {
    const cwd = workdir(t)
    runCli(['init'], { cwd })
    runCli(['org', 'create', 'gone'], { cwd })
    runCli(['key', 'mint', '--org', 'gone', '--role', 'owner', '--name', 'k', '--expires-in', '1d'], { cwd })
    assert.equal(runCli(['org', 'delete', 'gone'], { cwd }).code, 0)
    assert.equal(runCli(['org', 'list'], { cwd }).stdout, '')
    assert.equal(runCli(['key', 'list', '--org', 'gone'], { cwd }).code, 1)
  })

  it('--help works on every command and bad usage exits 2', (t) => {
    const cwd = workdir(t)
    for (const args of [
      ['--help'],
      ['init', '--help'],
      ['serve', '--help'],
      ['migrate', '--help'],
      ['org', 'create', '--help'],
      ['org', 'list', '--help'],
      ['org', 'delete', '--help'],
      ['key', 'mint', '--help'],
      ['key', 'list', '--help'],
      ['key', 'revoke', '--help'],
      ['key', '--help'],
    ]) {
      const res = runCli(args, { cwd })
      assert.equal(res.code, 0, args.join(' '))
      assert.match(res.stdout, /sitegrid/)
    }
    assert.equal(runCli(['frobnicate'], { cwd }).code, 2)
    assert.equal(runCli(['key', 'mint', '--bogus'], { cwd }).code, 2)
    assert.equal(runCli(['key', 'mint', '--org', 'a', '--role', 'owner', '--name', 'n', '--expires-in', 'soon'], { cwd }).code, 2)
  })

  it('serve answers, and SIGTERM drains and exits 0', async (t) => {
    const cwd = workdir(t)
    runCli(['init'], { cwd })
    const server = await startServer({ cwd, env: {} })
    const res = await fetch(`${server.url}/readyz`)
    assert.equal(res.status, 200)
    assert.equal(await server.stop('SIGTERM'), 0)
    assert.match(server.output(), /key-secret/, 'the log says where the secret file is')
  })
})
