// Defects 7 and 8 of issue 24 with the server as a user runs it: two `sitegrid serve` processes (site mode) on one
// database, the PostgreSQL one as the application role, clients on three loopback addresses (the server trusts no
// X-Forwarded-For, so the socket's own address is the client address).
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it } from 'node:test'
import { CLI_ACTOR } from '../../src/identity.ts'
import { accountSubject, LOCK_THRESHOLD } from '../../src/auth/site-pin/lockout.ts'
import { systemClock } from '../../src/clock.ts'
import { createSiteUsersService } from '../../src/modules/site-users/service.ts'
import { runCliAsync, startServer } from '../cli/process.ts'
import { comparableBody, testDialects } from '../harness.ts'
import { processWorld, serverRoles } from './process-support.ts'
import { TEST_APP_ROLE } from '../postgres.ts'

const CONCURRENT = 50
const EMAIL = 'operator@plant.example'
const PIN = '24681357'

interface Answer {
  status: number
  body: string
  retryAfter: string | undefined
}

/** POST /auth/site/login from the loopback address `localAddress`, on a fresh connection. */
function login(url: string, localAddress: string, email: string, pin: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/auth/site/login`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { host: 'plant.localhost', 'content-type': 'application/json' },
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          body += d
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, retryAfter: res.headers['retry-after'] }))
      },
    )
    req.on('error', reject)
    req.end(JSON.stringify({ email, pin }))
  })
}

// A cell on PostgreSQL: two processes. A SQLite file is served by one process (a second is refused at start-up,
// test/hardening/cell-concurrency.test.ts), so there the same load goes to one process, as a site server runs.
for (const dialect of testDialects()) {
  const processes = dialect === 'postgres' ? 2 : 1
  describe(`${dialect}: site-PIN lockout over ${processes} server process(es) on one database`, () => {
    it(`${CONCURRENT} concurrent wrong PINs for one e-mail from 3 addresses check at most ${LOCK_THRESHOLD}; then every PIN gets the same 423 until the owner unlocks by CLI (audited)`, async (t) => {
      const world = await processWorld(t, dialect, 'plant', { SITEGRID_MODE: 'site' })
      const { cwd, env, handle } = world
      await createSiteUsersService({ handle, clock: systemClock }).create(world.orgId, CLI_ACTOR, {
        email: EMAIL,
        displayName: 'Operator',
        siteRole: 'member',
        pin: PIN,
      })
      const servers = await Promise.all(Array.from({ length: processes }, () => startServer({ cwd, env })))
      t.after(async () => {
        for (const server of servers) await server.stop()
      })
      const [a, b] = [servers[0]!, servers[processes - 1]!]

      const answers = await Promise.all(
        Array.from({ length: CONCURRENT }, (_, i) => login((i % 2 === 0 ? a : b).url, `127.0.0.${1 + (i % 3)}`, EMAIL, String(10_000_000 + i))),
      )
      const statuses = answers.reduce<Record<number, number>>((acc, x) => ({ ...acc, [x.status]: (acc[x.status] ?? 0) + 1 }), {})
      const counter = await handle.db
        .selectFrom('site_sign_in_failures')
        .select(['failures', 'locked_until'])
        .where('org_id', '=', world.orgId)
        .where('subject', '=', accountSubject(EMAIL))
        .executeTakeFirstOrThrow()
      console.log(
        `site-PIN lockout ${dialect}: ${CONCURRENT} concurrent wrong PINs over ${processes} process(es), 3 addresses -> statuses ${JSON.stringify(statuses)}, counted ${counter.failures}`,
      )
      assert.equal(statuses[401], LOCK_THRESHOLD, 'PINs checked (each wrong PIN checked answers 401)')
      assert.equal((statuses[423] ?? 0) + (statuses[429] ?? 0), CONCURRENT - LOCK_THRESHOLD)
      assert.equal(counter.failures, LOCK_THRESHOLD)
      if (dialect === 'postgres') assert.deepEqual(await serverRoles(world), [TEST_APP_ROLE])

      const right = await login(b.url, '127.0.0.4', EMAIL, PIN)
      const wrong = await login(a.url, '127.0.0.5', EMAIL, '99999999')
      for (const res of [right, wrong]) {
        assert.equal(res.status, 423)
        assert.ok(Number(res.retryAfter) > 0)
      }
      assert.deepEqual(comparableBody(right.body), comparableBody(wrong.body), 'the right PIN is not told apart while locked')
      assert.equal((JSON.parse(right.body) as { lockedUntil: string }).lockedUntil, new Date(counter.locked_until).toISOString())

      const unlock = await runCliAsync(['site-user', 'unlock', '--email', 'Operator@Plant.example'], { cwd, env: { ...env, SITEGRID_LOG_LEVEL: 'error' } })
      assert.equal(unlock.code, 0, unlock.stderr)
      assert.match(unlock.stderr, /unlocked Operator@Plant\.example \(was locked until /)
      assert.equal((await login(a.url, '127.0.0.6', EMAIL, PIN)).status, 200, 'the rightful user signs in at once')
      const audit = await handle.db
        .selectFrom('audit_events')
        .select(['actor_kind', 'target', 'detail'])
        .where('org_id', '=', world.orgId)
        .where('action', '=', 'site_user.unlocked')
        .execute()
      assert.deepEqual(
        audit.map((r) => [r.actor_kind, r.target, (JSON.parse(r.detail!) as { failures: number }).failures]),
        [['cli', EMAIL, LOCK_THRESHOLD]],
      )
    })
  })
}
