import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { ConfigInvalid } from './load.ts'
import { loadConfig } from './load.ts'

const dir = mkdtempSync(join(tmpdir(), 'sitegrid-config-'))
const secret = Buffer.alloc(32, 9).toString('base64')
const base = { SITEGRID_DATA_DIR: dir }

describe('configuration', () => {
  it('defaults: site mode, SQLite in the data folder, 127.0.0.1:8080', () => {
    const config = loadConfig({ ...base, SITEGRID_KEY_SECRET: secret }, { requireKeySecret: true })
    assert.equal(config.mode, 'site')
    assert.equal(config.databaseUrl, `sqlite:${join(dir, 'sitegrid.db')}`)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.port, 8080)
    assert.ok(Object.isFrozen(config))
  })

  it('no verifier secret configured is a hard failure when one is required, and never invented', () => {
    assert.throws(
      () => loadConfig({ ...base }, { requireKeySecret: true }),
      (err: ConfigInvalid) => err.problems.some((p) => p.includes('no API-key verifier secret')),
    )
    assert.equal(loadConfig({ ...base }, { requireKeySecret: false }).keySecret, undefined)
  })

  it('a secret shorter than 32 bytes, not base64, or a missing or unreadable file is refused', () => {
    const short = Buffer.alloc(31, 1).toString('base64')
    assert.throws(() => loadConfig({ ...base, SITEGRID_KEY_SECRET: short }, { requireKeySecret: true }), /at least 32 bytes/)
    assert.throws(() => loadConfig({ ...base, SITEGRID_KEY_SECRET: 'not base64 at all!' }, { requireKeySecret: true }), /must be base64/)
    assert.throws(() => loadConfig({ ...base, SITEGRID_KEY_SECRET_FILE: join(dir, 'missing') }, { requireKeySecret: true }), /cannot read/)
    const shortFile = join(dir, 'short')
    writeFileSync(shortFile, short)
    assert.throws(() => loadConfig({ ...base, SITEGRID_KEY_SECRET_FILE: shortFile }, { requireKeySecret: true }), /at least 32 bytes/)
    const goodFile = join(dir, 'good')
    writeFileSync(goodFile, `${secret}\n`)
    assert.equal(loadConfig({ ...base, SITEGRID_KEY_SECRET_FILE: goodFile }, { requireKeySecret: true }).keySecret?.length, 32)
  })

  it('every invalid setting is reported at once', () => {
    assert.throws(
      () => loadConfig({ ...base, SITEGRID_MODE: 'moon', PORT: '99999', DATABASE_URL: 'mysql://x' }, { requireKeySecret: false }),
      (err: ConfigInvalid) => ['SITEGRID_MODE', 'PORT', 'DATABASE_URL'].every((k) => err.problems.some((p) => p.startsWith(k))),
    )
  })

  it('every invalid setting is reported even after a bad choice setting (TypeBox buffers only 8 errors per check)', () => {
    assert.throws(
      () =>
        loadConfig({ ...base, SITEGRID_LOG_LEVEL: 'loud', SITEGRID_RATE_LIMIT_PER_MINUTE: '0', SITEGRID_TRUST_PROXY: 'maybe' }, { requireKeySecret: false }),
      (err: ConfigInvalid) =>
        ['SITEGRID_LOG_LEVEL', 'SITEGRID_RATE_LIMIT_PER_MINUTE', 'SITEGRID_TRUST_PROXY'].every((k) => err.problems.some((p) => p.startsWith(k))),
    )
  })

  it('an empty setting in the environment is refused naming it, never taken as its default', () => {
    for (const key of ['PORT', 'SITEGRID_MODE', 'SITEGRID_KEY_SECRET', 'DATABASE_URL']) {
      assert.throws(
        () => loadConfig({ ...base, SITEGRID_KEY_SECRET: secret, [key]: '' }, { requireKeySecret: true }),
        (err: ConfigInvalid) => err.problems.length === 1 && err.problems[0] === `${key}: is empty: give it a value, or unset it for its default`,
        key,
      )
    }
  })

  it('a setting with a pattern names its rule in words, not the pattern; sqlite: needs a path', () => {
    const env = { ...base, DATABASE_URL: 'mysql://u:pw@h/db', SITEGRID_BASE_DOMAIN: 'Plant.Example', SITEGRID_METRICS_ADDRESS: 'everywhere' }
    assert.throws(
      () => loadConfig(env, { requireKeySecret: false }),
      (err: ConfigInvalid) =>
        assert.deepEqual(err.problems, [
          'DATABASE_URL: must be sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE',
          'SITEGRID_BASE_DOMAIN: must be a domain name in lower case (a-z, 0-9, dots and hyphens)',
          'SITEGRID_METRICS_ADDRESS: must be HOST:PORT, [IPv6]:PORT, PORT or off',
        ]) ?? true,
    )
    assert.throws(() => loadConfig({ ...base, DATABASE_URL: 'sqlite:' }, { requireKeySecret: false }), /DATABASE_URL: must be sqlite:PATH/)
  })

  it('a numeric setting is digits: a fraction, a hexadecimal, an exponent or spaces are refused naming the value, never truncated or read otherwise', () => {
    for (const value of ['8080.5', '0x50', '1e3', ' 80', '80abc']) {
      assert.throws(
        () => loadConfig({ ...base, PORT: value }, { requireKeySecret: false }),
        (err: ConfigInvalid) => err.problems.length === 1 && err.problems[0] === `PORT: must be a whole number in digits, got ${JSON.stringify(value)}`,
        value,
      )
    }
    const file = join(dir, 'numbers.json')
    writeFileSync(file, JSON.stringify({ SITEGRID_SMTP_PORT: 25.5 }))
    assert.throws(
      () => loadConfig({ ...base, SITEGRID_CONFIG_FILE: file }, { requireKeySecret: false }),
      /SITEGRID_SMTP_PORT: must be a whole number in digits, got 25.5/,
    )
    assert.equal(loadConfig({ ...base, PORT: '8081' }, { requireKeySecret: false }).port, 8081)
  })

  it('the config file adds settings, the environment wins, and an unknown setting in the file is refused', () => {
    const file = join(dir, 'cfg.json')
    writeFileSync(file, JSON.stringify({ SITEGRID_MODE: 'cloud', PORT: 9000 }))
    const config = loadConfig({ ...base, SITEGRID_CONFIG_FILE: file, PORT: '9100' }, { requireKeySecret: false })
    assert.equal(config.mode, 'cloud')
    assert.equal(config.port, 9100)
    writeFileSync(file, JSON.stringify({ SITEGRID_MODEE: 'cloud' }))
    assert.throws(() => loadConfig({ ...base, SITEGRID_CONFIG_FILE: file }, { requireKeySecret: false }), /unknown setting SITEGRID_MODEE/)
  })

  it("relative paths in the config file are relative to the file's folder; the data folder defaults to that folder", () => {
    const folder = mkdtempSync(join(tmpdir(), 'sitegrid-config-rel-'))
    const file = join(folder, 'sitegrid.json')
    writeFileSync(join(folder, 'secret'), `${secret}\n`)
    writeFileSync(file, JSON.stringify({ SITEGRID_KEY_SECRET_FILE: 'secret', DATABASE_URL: 'sqlite:db/site.db' }))
    const config = loadConfig({ SITEGRID_CONFIG_FILE: file }, { requireKeySecret: true })
    assert.equal(config.keySecret?.length, 32)
    assert.equal(config.databaseUrl, `sqlite:${join(folder, 'db', 'site.db')}`)
    assert.equal(config.dataDir, folder)
    writeFileSync(file, JSON.stringify({ SITEGRID_DATA_DIR: 'var', SITEGRID_KEY_SECRET_FILE: join(folder, 'secret') })) // absolute: as it is
    const moved = loadConfig({ SITEGRID_CONFIG_FILE: file }, { requireKeySecret: true })
    assert.equal(moved.keySecret?.length, 32)
    assert.equal(moved.dataDir, join(folder, 'var'))
    assert.equal(moved.databaseUrl, `sqlite:${join(folder, 'var', 'sitegrid.db')}`)
    assert.throws(
      () => loadConfig({ SITEGRID_CONFIG_FILE: file }, { requireKeySecret: false, requireDatabaseFolder: true }),
      (err: ConfigInvalid) => err.problems.some((p) => p.startsWith(`SITEGRID_DATA_DIR: the data folder ${join(folder, 'var')} does not exist`)),
    )
  })
})
