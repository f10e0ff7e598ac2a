// The pool's guarantees on the reusable queries' direct path (pg-pool.ts `read`, issue 29 fifth pass): the tenant
// scope of each caller on a shared client, the pool meter's counts, a timed-out client never lent again, and the
// statement prepared by name. PostgreSQL only; the application's role, so that row-level security applies.
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { postgresUrl, testDialects } from '../../test/harness.ts'
import { appRoleUrl } from '../../test/postgres.ts'
import { connectDatabase, type ConnectOptions } from './connect.ts'
import { reusableQuery } from './reusable-query.ts'
import type { Db } from './schema.ts'
import { currentScope, withOrgScope, withSystemScope } from './tenant-scope.ts'

// No org_id filter: what a read sees here is row-level security's doing alone.
const everySite = reusableQuery((db: Db) => db.selectFrom('sites').select(['org_id', 'code']).orderBy('code'))
const siteOf = reusableQuery((db: Db, code: string) => db.selectFrom('sites').select(['org_id', 'code', 'created_at']).where('code', '=', code))
const sitesWithBackend = reusableQuery((db: Db) => db.selectFrom('sites').select(['org_id', 'code', sql<number>`pg_backend_pid()`.as('pid')]))
const backend = reusableQuery((db: Db, seconds: string) =>
  db.selectNoFrom([sql<number>`pg_backend_pid()`.as('pid'), sql<string>`pg_sleep(${seconds}::float8)::text`.as('slept')]),
)

const unique = () => Math.random().toString(36).slice(2, 10)

/** Two organisations with a site each, written by the owner; the application's handle, as the app role. */
async function twoOrgs(t: TestContext, options: ConnectOptions) {
  const url = await postgresUrl()
  const owner = await connectDatabase(url, { poolSize: 1 })
  t.after(() => owner.close())
  const [a, b] = [`org_${unique()}`, `org_${unique()}`]
  await withSystemScope(async () => {
    for (const id of [a, b]) {
      await owner.db
        .insertInto('orgs')
        .values({ id, slug: id.replace('_', '-'), name: id, created_at: 1 })
        .execute()
      await owner.db
        .insertInto('sites')
        .values({ org_id: id, code: `S-${id}`, name: id, description: null, location: null, time_zone: 'UTC', status: 0, created_at: 7, updated_at: 7 })
        .execute()
    }
  })
  const app = await connectDatabase(appRoleUrl(url), options)
  t.after(() => app.close())
  return { app, owner, a, b }
}

if (testDialects().includes('postgres')) {
  describe('postgres: reusable queries on the pool directly (pg-pool.ts)', () => {
    it("concurrent reads of two organisations on one pooled client each see their own organisation's rows only", async (t) => {
      const { app, a, b } = await twoOrgs(t, { poolSize: 1 })
      const reads = Array.from({ length: 24 }, (_, i) => {
        const org = i % 3 === 0 ? a : b
        return withOrgScope(org, async () => {
          const rows = await everySite(app.db)
          // The pool answers from other reads' callbacks; the caller goes on in its own scope all the same.
          return { org, rows, after: currentScope(), again: await everySite(app.db) }
        })
      })
      for (const { org, rows, after, again } of await Promise.all(reads)) {
        assert.deepEqual(rows, [{ org_id: org, code: `S-${org}` }])
        assert.equal(after, org)
        assert.deepEqual(again, rows)
      }
      // Kysely's path and the direct one share the client's scope: a transaction in one scope, a read in the other.
      await withOrgScope(a, () => app.db.transaction().execute((trx) => sql`select 1`.execute(trx)))
      assert.deepEqual(await withOrgScope(b, () => everySite(app.db)), [{ org_id: b, code: `S-${b}` }])
      assert.deepEqual((await withOrgScope(a, () => sql<{ org_id: string }>`select org_id from sites`.execute(app.db))).rows, [{ org_id: a }])
      assert.deepEqual(await everySite(app.db), [], 'no scope: no tenant rows')
    })

    it("answer Kysely's rows, prepared once by name on the client, and never in a transaction's place", async (t) => {
      const { app, a } = await twoOrgs(t, { poolSize: 2 })
      const code = `S-${a}`
      const kysely = await withOrgScope(a, () => app.db.selectFrom('sites').select(['org_id', 'code', 'created_at']).where('code', '=', code).execute())
      assert.deepEqual(await withOrgScope(a, () => siteOf(app.db, code)), kysely)
      assert.equal(typeof kysely[0]!.created_at, 'number', "the pool's type parsers apply to both")
      await withOrgScope(a, async () => {
        await app.db.transaction().execute(async (trx) => {
          await trx.updateTable('sites').set({ created_at: 8 }).where('org_id', '=', a).where('code', '=', code).execute()
          const [inside] = await siteOf(trx, code)
          assert.equal(inside!.created_at, 8, "the transaction's own write, on its client")
          const [outside] = await siteOf(app.db, code)
          assert.equal(outside!.created_at, 7, 'another client: not the uncommitted write')
          throw new Error('roll back')
        })
      }).catch((err: Error) => assert.equal(err.message, 'roll back'))
      const single = await connectDatabase(appRoleUrl(await postgresUrl()), { poolSize: 1 })
      t.after(() => single.close())
      for (let i = 0; i < 3; i++) await withOrgScope(a, () => siteOf(single.db, code))
      const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(single.db)
      assert.deepEqual(
        prepared.rows.filter((r) => r.statement.includes('"sites"')).map((r) => r.name.startsWith('sitegrid_')),
        [true],
        'the read is prepared once, by name',
      )
    })

    it("build Kysely's rows from the statement's columns: every type through the pool's parsers, null, a repeated name", async (t) => {
      const { app, a } = await twoOrgs(t, { poolSize: 2 })
      const columns = (text: string) => [
        sql<string>`${text}::text`.as('text'),
        sql<number>`9007199254740991::int8`.as('big'),
        sql<number>`12.5::numeric`.as('amount'),
        sql<Date>`'2026-01-02T03:04:05.678Z'::timestamptz`.as('at'),
        sql<unknown>`'{"x":[1,null],"y":"z"}'::jsonb`.as('doc'),
        sql<unknown>`'[2]'::json`.as('plain'),
        sql<number[]>`array[1, 2]::int4[]`.as('list'),
        sql<boolean>`true`.as('flag'),
        sql<string | null>`null::text`.as('nothing'),
        sql<number>`1`.as('twice'),
        sql<number>`2`.as('twice'),
      ]
      const typed = reusableQuery((db: Db, text: string) => db.selectNoFrom(columns(text)))
      const kysely = (text: string) => withOrgScope(a, () => app.db.selectNoFrom(columns(text)).execute())
      for (const text of ['first', 'again', '']) {
        const rows = await withOrgScope(a, () => typed(app.db, text))
        assert.deepEqual(rows, await kysely(text))
        assert.deepEqual(Object.keys(rows[0]!), ['text', 'big', 'amount', 'at', 'doc', 'plain', 'list', 'flag', 'nothing', 'twice'])
      }
      const [row] = await withOrgScope(a, () => typed(app.db, 'x'))
      assert.ok(row!.at instanceof Date && row!.at.toISOString() === '2026-01-02T03:04:05.678Z')
      assert.deepEqual(
        [row!.big, row!.amount, row!.doc, row!.list, row!.nothing, row!.twice],
        [9007199254740991, 12.5, { x: [1, null], y: 'z' }, [1, 2], null, 2],
      )
      assert.deepEqual(await withOrgScope(a, () => siteOf(app.db, 'no such site')), [], 'no row')
    })

    it('the reads of one turn go to the server together: one loan and one client for up to 64 of them', async (t) => {
      const { app, a, b } = await twoOrgs(t, { poolSize: 10 })
      const turn = (count: number) =>
        Promise.all(
          Array.from({ length: count }, (_, i) =>
            withOrgScope(i % 2 === 0 ? a : b, async () => ({ org: currentScope(), rows: await sitesWithBackend(app.db) })),
          ),
        )
      await turn(1)
      let before = app.poolStats().acquired
      const answers = await turn(30)
      assert.equal(app.poolStats().acquired - before, 1, 'one loan for the thirty reads of the turn')
      assert.equal(new Set(answers.map((r) => r.rows[0]!.pid)).size, 1, 'one client answered them')
      for (const { org, rows } of answers)
        assert.deepEqual(
          rows.map(({ pid: _, ...site }) => site),
          [{ org_id: org, code: `S-${org}` }],
        )
      before = app.poolStats().acquired
      const many = await turn(150)
      assert.equal(app.poolStats().acquired - before, 3, 'batches of at most 64')
      assert.ok(new Set(many.map((r) => r.rows[0]!.pid)).size <= 3)
      for (const { org, rows } of many)
        assert.deepEqual(
          rows.map(({ pid: _, ...site }) => site),
          [{ org_id: org, code: `S-${org}` }],
        )
    })

    it('a read the server refuses, or whose value pg cannot send, fails alone: the reads before and after it in its turn answer, each in its own scope', async (t) => {
      const { app, a, b } = await twoOrgs(t, { poolSize: 1 })
      const before = app.poolStats().acquired
      const circular: Record<string, unknown> = {}
      circular.self = circular
      const settled = await Promise.allSettled([
        withOrgScope(a, () => siteOf(app.db, circular as unknown as string)),
        withOrgScope(a, () => everySite(app.db)),
        withOrgScope(b, () => everySite(app.db)),
        withOrgScope(b, () => backend(app.db, 'not a number')),
        withOrgScope(a, () => everySite(app.db)),
        withOrgScope(b, () => backend(app.db, 'nor this')),
        withOrgScope(b, () => everySite(app.db)),
        everySite(app.db),
      ])
      assert.deepEqual(
        settled.map((r) => (r.status === 'fulfilled' ? r.value : String((r.reason as Error).message).split('\n')[0])),
        [
          'Converting circular structure to JSON',
          [{ org_id: a, code: `S-${a}` }],
          [{ org_id: b, code: `S-${b}` }],
          'invalid input syntax for type double precision: "not a number"',
          [{ org_id: a, code: `S-${a}` }],
          'invalid input syntax for type double precision: "nor this"',
          [{ org_id: b, code: `S-${b}` }],
          [],
        ],
      )
      // The batch of seven failed at its third read; the four after it ran again, each by itself (one loan each).
      assert.equal(app.poolStats().acquired - before, 1 + 4)
      assert.equal(app.poolStats().open, 1, 'the client is not discarded for an error of a read')
    })

    it("a scope set in a batch that failed is undone with it, and set again: a read never runs in another's scope", async (t) => {
      const { app, a, b } = await twoOrgs(t, { poolSize: 1 })
      assert.deepEqual(await withOrgScope(a, () => everySite(app.db)), [{ org_id: a, code: `S-${a}` }])
      // Alone in its turn: the batch sets b, then fails; the server's session is back in a's scope.
      await assert.rejects(
        withOrgScope(b, () => backend(app.db, 'x')),
        /invalid input syntax/,
      )
      assert.deepEqual(await withOrgScope(b, () => everySite(app.db)), [{ org_id: b, code: `S-${b}` }])
      // A statement first prepared in a failed batch is prepared again without a clash.
      await assert.rejects(Promise.all([withOrgScope(a, () => siteOf(app.db, `S-${a}`)), withOrgScope(a, () => backend(app.db, 'y'))]), /invalid input/)
      assert.deepEqual(
        (await withOrgScope(a, () => siteOf(app.db, `S-${a}`))).map((r) => r.code),
        [`S-${a}`],
      )
      assert.deepEqual(await everySite(app.db), [], 'no scope: no tenant rows')
    })

    it('a client whose read timed out is never lent again; the meter counts the loans and the timeout', async (t) => {
      const { app } = await twoOrgs(t, { poolSize: 1, queryTimeoutMs: 300 })
      const [first] = await backend(app.db, '0')
      const before = app.poolStats()
      await assert.rejects(backend(app.db, '10'), /Query read timeout/)
      const started = performance.now()
      const [after] = await backend(app.db, '0')
      assert.ok(performance.now() - started < 6_000, 'the next read did not wait behind the timed-out one (10 s)')
      assert.notEqual(after!.pid, first!.pid, 'a new connection, not the one still running the slow statement')
      const stats = app.poolStats()
      assert.equal(stats.acquired - before.acquired, 2)
      assert.equal(stats.timeouts.query - before.timeouts.query, 1)
      assert.equal(stats.idle, 1, 'lent back')
    })

    it('a client given back is lent again without a timer; one idle past the idle timeout is closed; a dead one is never lent', async (t) => {
      const { app, owner, a } = await twoOrgs(t, { poolSize: 2, idleTimeoutMs: 1_000 })
      const code = `S-${a}`
      // Two transactions at once hold two clients (the reads of one turn would share one).
      const held = () => withOrgScope(a, () => app.db.transaction().execute((trx) => sql`select pg_sleep(0.05)`.execute(trx)))
      await Promise.all([held(), held()])
      assert.deepEqual([app.poolStats().open, app.poolStats().idle], [2, 2])
      // pg-pool arms a connection timer on every loan and an idle timer on every release; a client kept by the lender
      // arms neither (the idle timeout is one timer for all the kept clients, armed when the first is kept).
      const timers = countTimers(t)
      for (let i = 0; i < 20; i++) await withOrgScope(a, () => siteOf(app.db, code))
      assert.ok(timers.count <= 1, `${timers.count} timers for 20 loans`)
      timers.stop()
      const before = app.poolStats()
      const pid = (await backend(app.db, '0'))[0]!.pid
      assert.equal(app.poolStats().acquired - before.acquired, 1, 'the meter counts a kept client lent')
      // The server ends the backend of an idle client: the next loans get a live one, never the dead one.
      await sql`select pg_terminate_backend(${pid}::int)`.execute(owner.db)
      await new Promise((r) => setTimeout(r, 200))
      for (let i = 0; i < 2; i++) assert.notEqual((await backend(app.db, '0'))[0]!.pid, pid)
      const waited = performance.now()
      while (app.poolStats().open > 0 && performance.now() - waited < 5_000) await new Promise((r) => setTimeout(r, 50))
      assert.equal(app.poolStats().open, 0, 'every client idle past the idle timeout is closed')
      assert.ok(performance.now() - waited >= 800, 'not before the idle timeout')
      assert.deepEqual(await withOrgScope(a, () => siteOf(app.db, code)).then((rows) => rows.length), 1, 'a closed pool opens again')
    })
  })
}

/** Counts the timers set from now until `stop` (pg-pool's and the lender's own use the global setTimeout). */
function countTimers(t: TestContext) {
  const original = globalThis.setTimeout
  const counter = { count: 0, stop: () => void (globalThis.setTimeout = original) }
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    counter.count++
    return original(...args)
  }) as typeof setTimeout
  t.after(counter.stop)
  return counter
}
