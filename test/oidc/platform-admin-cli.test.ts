import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { loadConfig } from '../../src/config/load.ts'
import { runCli } from '../cli/process.ts'

describe('sitegrid platform-admin', () => {
  it('add is idempotent, list shows the oids, remove takes one out and a second remove fails with exit 1', (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-pa-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const add = runCli(['platform-admin', 'add', 'oid-root', '--note', 'on-call'], { cwd })
    assert.equal(add.code, 0, add.stderr)
    assert.equal(runCli(['platform-admin', 'add', 'oid-root'], { cwd }).code, 0)
    assert.equal(runCli(['platform-admin', 'add', 'oid-ops'], { cwd }).code, 0)
    const list = runCli(['platform-admin', 'list', '--json'], { cwd })
    const admins = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { accountId: string; note: string | null })
    assert.deepEqual(
      admins.map((a) => [a.accountId, a.note]),
      [
        ['oid-ops', null],
        ['oid-root', 'on-call'],
      ],
    )
    assert.equal(runCli(['platform-admin', 'remove', 'oid-root'], { cwd }).code, 0)
    const again = runCli(['platform-admin', 'remove', 'oid-root'], { cwd })
    assert.equal(again.code, 1)
    assert.match(again.stderr, /NotFound/)
    assert.match(runCli(['platform-admin', 'list'], { cwd }).stdout, /^oid-ops\t/)
    assert.equal(runCli(['platform-admin', 'add', 'has space'], { cwd }).code, 2)
  })
})

describe('OIDC configuration', () => {
  const base = { DATABASE_URL: 'sqlite::memory:', SITEGRID_DATA_DIR: '/nonexistent-sitegrid' }
  it('an issuer needs cloud mode and an audience; a client id needs its secret; the secret can come from a file', (t) => {
    assert.throws(
      () => loadConfig({ ...base, SITEGRID_OIDC_ISSUER: 'https://id.example', SITEGRID_OIDC_AUDIENCE: 'api' }, { requireKeySecret: false }),
      /cloud mode/,
    )
    assert.throws(
      () => loadConfig({ ...base, SITEGRID_MODE: 'cloud', SITEGRID_OIDC_ISSUER: 'https://id.example' }, { requireKeySecret: false }),
      /SITEGRID_OIDC_AUDIENCE/,
    )
    assert.throws(() => loadConfig({ ...base, SITEGRID_MODE: 'cloud', SITEGRID_OIDC_AUDIENCE: 'api' }, { requireKeySecret: false }), /SITEGRID_OIDC_ISSUER/)
    const cloud = { ...base, SITEGRID_MODE: 'cloud', SITEGRID_OIDC_ISSUER: 'https://id.example', SITEGRID_OIDC_AUDIENCE: 'api' }
    assert.throws(() => loadConfig({ ...cloud, SITEGRID_OIDC_CLIENT_ID: 'console' }, { requireKeySecret: false }), /SITEGRID_OIDC_CLIENT_SECRET/)
    const bearerOnly = loadConfig(cloud, { requireKeySecret: false })
    assert.deepEqual(bearerOnly.oidc, { issuer: 'https://id.example', audience: 'api', clockSkewSec: 60, client: undefined })
    const dir = mkdtempSync(join(tmpdir(), 'sitegrid-oidc-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const secretFile = join(dir, 'client-secret')
    writeFileSync(secretFile, 's3cret\n')
    const full = loadConfig(
      { ...cloud, SITEGRID_OIDC_CLIENT_ID: 'console', SITEGRID_OIDC_CLIENT_SECRET_FILE: secretFile, SITEGRID_OIDC_CLOCK_SKEW_SEC: '30' },
      { requireKeySecret: false },
    )
    assert.deepEqual(full.oidc?.client, { id: 'console', secret: 's3cret' })
    assert.equal(full.oidc?.clockSkewSec, 30)
    assert.throws(() => loadConfig({ ...cloud, SITEGRID_OIDC_CLOCK_SKEW_SEC: '900' }, { requireKeySecret: false }), /SITEGRID_OIDC_CLOCK_SKEW_SEC/)
  })
})
