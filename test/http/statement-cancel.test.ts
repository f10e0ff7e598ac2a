import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { harness, sleep, testDialects } from '../harness.ts'

// A statement PostgreSQL cancels (its statement timeout, or an operator's pg_cancel_backend: both SQLSTATE 57014) is
// a 503 ServiceUnavailable problem, never a 500. Made deterministic by cancelling a request that waits on a lock.
for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: a cancelled database statement`, () => {
    it('answers 503 ServiceUnavailable with no detail of the database, and the next request works', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey()
      const locker = new pg.Client({ connectionString: h.config.databaseUrl })
      const watcher = new pg.Client({ connectionString: h.config.databaseUrl }) // outside the locker's transaction, whose activity snapshot stays fixed
      await locker.connect()
      await watcher.connect()
      t.after(() => Promise.all([locker.end(), watcher.end()]))
      await locker.query('begin')
      await locker.query('lock table sites in access exclusive mode')
      const answer = h.inject({ org, apiKey: key }, { url: '/api/sites' }).then((res) => res) // sent now, not when awaited
      let waiting: number | undefined
      for (let i = 0; i < 200 && waiting === undefined; i++) {
        const { rows } = await watcher.query<{ pid: number }>(
          `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        )
        waiting = rows[0]?.pid
        if (waiting === undefined) await sleep(25)
      }
      assert.ok(waiting !== undefined, 'the request waits on the lock')
      await watcher.query('select pg_cancel_backend($1)', [waiting])
      const res = await answer
      await locker.query('rollback')
      assert.equal(res.statusCode, 503, res.body)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(res.json().code, 'ServiceUnavailable')
      assert.doesNotMatch(res.body, /canceling|57014|pg_cancel|\.ts:\d/) // the driver's message and stack stay in the log
      const again = await h.inject({ org, apiKey: key }, { url: '/api/sites' })
      assert.equal(again.statusCode, 200, again.body)
    })
  })
}
