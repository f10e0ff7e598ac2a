import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigInvalid, loadConfig } from './load.ts'

const base = { SITEGRID_CONFIG_FILE: '', SITEGRID_DATA_DIR: '/nonexistent-sitegrid-dir' }

describe('PostgreSQL timeouts (SITEGRID_DB_*)', () => {
  it('default to a 5 s connection wait, a 30 s statement timeout and no client-side query timeout', () => {
    const config = loadConfig(base, { requireKeySecret: false })
    assert.deepEqual(config.database, { connectTimeoutMs: 5000, statementTimeoutMs: 30_000, queryTimeoutMs: 0 })
  })

  it('are read from the environment', () => {
    const config = loadConfig(
      { ...base, SITEGRID_DB_CONNECT_TIMEOUT_MS: '1000', SITEGRID_DB_STATEMENT_TIMEOUT_MS: '2000', SITEGRID_DB_QUERY_TIMEOUT_MS: '3000' },
      { requireKeySecret: false },
    )
    assert.deepEqual(config.database, { connectTimeoutMs: 1000, statementTimeoutMs: 2000, queryTimeoutMs: 3000 })
  })

  it('refuse values that are not whole milliseconds in range, naming each setting', () => {
    assert.throws(
      () =>
        loadConfig(
          { ...base, SITEGRID_DB_CONNECT_TIMEOUT_MS: '10', SITEGRID_DB_QUERY_TIMEOUT_MS: '-1', SITEGRID_DB_STATEMENT_TIMEOUT_MS: 'soon' },
          { requireKeySecret: false },
        ),
      (err: unknown) => {
        assert.ok(err instanceof ConfigInvalid)
        for (const key of ['SITEGRID_DB_CONNECT_TIMEOUT_MS', 'SITEGRID_DB_QUERY_TIMEOUT_MS', 'SITEGRID_DB_STATEMENT_TIMEOUT_MS'])
          assert.ok(
            err.problems.some((p) => p.startsWith(key)),
            key,
          )
        return true
      },
    )
  })
})
