import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { electricalSetup } from '../../src/modules/electrical/test-support.ts'
import { sleep, testDialects } from '../harness.ts'

// A request whose transaction PostgreSQL ends to break a deadlock (SQLSTATE 40P01) is a 503 ServiceUnavailable
// problem, never a 500: nothing of it was written, and the same request sent again goes through. Made deterministic
// with a transaction of the test's own that takes the two locks a network write takes, in the other order.
for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: a request ended by a deadlock`, () => {
    it('answers 503 ServiceUnavailable naming the deadlock, writes nothing, and the request sent again succeeds', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      const locker = new pg.Client({ connectionString: h.config.databaseUrl })
      const watcher = new pg.Client({ connectionString: h.config.databaseUrl })
      await locker.connect()
      await watcher.connect()
      t.after(() => Promise.all([locker.end(), watcher.end()]))
      // The locker waits long before it looks for a deadlock, so the request's backend (1 s by default) finds it.
      await locker.query(`set deadlock_timeout = '60s'`)
      await locker.query('begin')
      await locker.query('lock table electrical_nodes in access exclusive mode')
      const node = { id: 'B1', name: 'Bus 1', nodeType: 3 }
      // The write takes its site's advisory lock, then waits for the table.
      const answer = as('POST', '/api/sites/S1/electrical/nodes', node).then((res) => res)
      let waiting = false
      for (let i = 0; i < 200 && !waiting; i++) {
        const { rows } = await watcher.query(
          `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        )
        waiting = rows.length > 0
        if (!waiting) await sleep(25)
      }
      assert.ok(waiting, 'the write waits for the table the locker holds')
      // The locker now asks for the site's advisory lock, which the write holds: a deadlock.
      const locked = locker.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`sitegrid.electrical ${org.id} S1`])
      const res = await answer
      await locked
      await locker.query('rollback')
      assert.equal(res.statusCode, 503, res.body)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(res.json().code, 'ServiceUnavailable')
      assert.match(res.json().detail, /deadlock/)
      assert.doesNotMatch(res.body, /40P01|pg_advisory|electrical_nodes|\.ts:\d/) // the driver's message and stack stay in the log
      assert.equal((await as('GET', '/api/sites/S1/electrical/nodes/B1')).statusCode, 404, 'nothing of the ended request was written')
      const again = await as('POST', '/api/sites/S1/electrical/nodes', node)
      assert.equal(again.statusCode, 201, again.body)
    })
  })
}
