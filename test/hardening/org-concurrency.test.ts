// Organisation rules under concurrency: 50 conflicting requests at once, split over two `sitegrid serve` processes on
// one PostgreSQL (as the app role), or sent at once to the one process that serves a SQLite file. Every answer is the
// rule's documented one (never a 5xx), and the database holds what the rule promises: at least one owner, one
// organisation per slug, one organisation per domain, a network whose edges join its nodes.
import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { startServer, type Server } from '../cli/process.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { endSessionsOfAccount } from '../../src/auth/sessions/end-sessions.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { createMembersService } from '../../src/modules/orgs/members-service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { KEY_SECRET, sleep, testDialects, type TestDialect } from '../harness.ts'
import { processWorld, type ProcessWorld } from './process-support.ts'

interface Answer {
  status: number
  body: string
  server: number
}

interface Cell {
  world: ProcessWorld
  servers: Server[]
}

const RACERS = 50
const agent = new Agent({ keepAlive: true, maxSockets: 64 })

async function startCell(t: TestContext, dialect: TestDialect, slug: string, mode: 'cloud' | 'site'): Promise<Cell> {
  const world = await processWorld(t, dialect, slug, { SITEGRID_MODE: mode, SITEGRID_PIN_SCRYPT_LOG2N: '10' })
  const processes = dialect === 'postgres' ? 2 : 1
  const servers = await Promise.all(Array.from({ length: processes }, () => startServer({ cwd: world.cwd, env: world.env })))
  t.after(async () => {
    for (const s of servers) await s.stop()
  })
  return { world, servers }
}

/** Request `i` to process `i % servers.length`, at `host` with `key`. */
function call(cell: Cell, i: number, host: string, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const server = i % cell.servers.length
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = { host, 'x-api-key': key }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const req = request(`${cell.servers[server]!.url}${path}`, { method, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, server }))
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

const codeOf = (a: Answer) => (a.status < 300 ? String(a.status) : `${a.status} ${(JSON.parse(a.body) as { code?: string }).code}`)

/**
 * Sends `RACERS` requests at once and prints the figures. No answer is a 5xx; every other one is a 2xx or one of the
 * `refusals` ("409 Conflict"), the rule's documented answers.
 */
async function race(cell: Cell, dialect: TestDialect, rule: string, refusals: string[], send: (i: number) => Promise<Answer>): Promise<Answer[]> {
  const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => send(i)))
  const codes: Record<string, number> = {}
  for (const a of answers) codes[codeOf(a)] = (codes[codeOf(a)] ?? 0) + 1
  console.log(`org-concurrency ${dialect}: ${rule}: sent ${RACERS} over ${cell.servers.length} process(es) -> ${JSON.stringify(codes)}`)
  const fivexx = answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${a.body}`)
  // The cause a 5xx logged (its detail stays generic on the wire).
  if (fivexx.length > 0)
    for (const s of cell.servers)
      console.log(
        s
          .output()
          .split('\n')
          .filter((l) => l.includes('"level":50'))
          .slice(0, 3)
          .join('\n'),
      )
  assert.deepEqual(fivexx, [], rule)
  for (const code of Object.keys(codes)) assert.ok(/^2\d\d$/.test(code) || refusals.includes(code), `${rule}: undocumented answer ${code}`)
  return answers
}

/** Server connections of this database waiting for a lock (the owner's connection sees every role's activity). */
async function lockWaiters(w: ProcessWorld): Promise<number> {
  const { rows } = await sql<{
    n: number
  }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(w.handle.db)
  return rows[0]!.n
}

async function mintKey(w: ProcessWorld, orgId: ProcessWorld['orgId'], role: 'owner' | 'admin' = 'owner'): Promise<string> {
  const keys = createApiKeysService({ handle: w.handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
  return (await keys.mint(orgId, CLI_ACTOR, { role, name: role, expiresAt: new Date(Date.now() + 86_400_000).toISOString() })).plaintext
}

for (const dialect of testDialects()) {
  describe(`${dialect}: organisation rules under ${RACERS} concurrent requests (two processes on PostgreSQL)`, () => {
    it('cloud: the last two owners revoked at once leave exactly one (the others 409 Conflict or 404); custom domains bound, toggled and removed at once stay with one organisation, no process serves a removed binding, and a toggle of a binding removed meanwhile is a 404', async (t) => {
      const cell = await startCell(t, dialect, 'acme', 'cloud')
      const { world } = cell
      const host = 'acme.localhost'
      const members = createMembersService({ handle: world.handle, clock: systemClock, endSessions: endSessionsOfAccount })
      const platform = { actor: CLI_ACTOR, isPlatformAdmin: true }

      // Last owner, three rounds: two owners (and a member, so a revoke of a non-owner is in the mix).
      for (let round = 0; round < 3; round++) {
        const owners = [`own-a-${round}`, `own-b-${round}`]
        for (const oid of [...owners, `mem-${round}`]) {
          await members.recordSignIn(world.orgId, { oid, email: `${oid}@example.test`, name: oid })
          await members.approve(world.orgId, platform, oid, oid.startsWith('own') ? 'owner' : 'member')
        }
        // The org's own owners before: the key's org has no other owner membership (a key is not a member).
        const answers = await race(cell, dialect, `last owner, round ${round} (two owners revoked at once)`, ['409 Conflict', '404 NotFound'], (i) =>
          call(cell, i, host, world.ownerKey, 'DELETE', `/api/admin/orgs/acme/members/${owners[i % 2]}`),
        )
        const active = await world.handle.db
          .selectFrom('memberships')
          .select('account_id')
          .where('org_id', '=', world.orgId)
          .where('status', '=', 'active')
          .where('role', '=', 'owner')
          .execute()
        assert.equal(active.length, 1, 'the organisation keeps exactly one owner')
        const survivor = active[0]!.account_id
        const onSurvivor = answers.filter((_, i) => owners[i % 2] === survivor)
        const onVictim = answers.filter((_, i) => owners[i % 2] !== survivor)
        assert.deepEqual([...new Set(onSurvivor.map(codeOf))], ['409 Conflict'], 'every revoke of the survivor is refused as the last owner')
        assert.equal(onVictim.filter((a) => a.status === 204).length, 1, 'the other owner is revoked once')
        assert.deepEqual([...new Set(onVictim.filter((a) => a.status !== 204).map(codeOf))], ['404 NotFound'])
        // Back to no owner membership for the next round.
        await world.handle.db.deleteFrom('memberships').where('org_id', '=', world.orgId).execute()
      }

      // Custom domains: a second organisation wants the same domain; acme binds, enables, disables, removes it.
      const rival = await createOrgsService({ handle: world.handle, clock: systemClock }).provision('rival')
      const rivalKey = await mintKey(world, rival.id)
      const keyOf = (orgId: string) => (orgId === world.orgId ? world.ownerKey : rivalKey)
      for (let round = 0; round < 3; round++) {
        const domain = `plant${round}.example.com`
        const admin = (org: 'acme' | 'rival', key: string) => ({
          bind: (i: number) => call(cell, i, `${org}.localhost`, key, 'POST', `/api/admin/orgs/${org}/domains`, { domain }),
          toggle: (i: number) => call(cell, i, `${org}.localhost`, key, 'PATCH', `/api/admin/orgs/${org}/domains/${domain}`, { isEnabled: i % 4 !== 1 }),
          unbind: (i: number) => call(cell, i, `${org}.localhost`, key, 'DELETE', `/api/admin/orgs/${org}/domains/${domain}`),
        })
        const acme = admin('acme', world.ownerKey)
        const other = admin('rival', rivalKey)
        assert.equal((await acme.bind(0)).status, 201)
        assert.equal((await acme.toggle(0)).status, 200)
        // Every process has the binding cached: a request at the domain is acme's.
        for (let s = 0; s < cell.servers.length; s++) assert.equal((await call(cell, s, domain, world.ownerKey, 'GET', '/api/admin/api-keys')).status, 200)
        const moves = [
          acme.unbind,
          acme.toggle,
          other.bind,
          acme.bind,
          other.toggle,
          other.unbind,
          (i: number) => call(cell, i, domain, world.ownerKey, 'GET', '/api/sites'),
        ]
        await race(
          cell,
          dialect,
          `custom domain, round ${round} (bind/enable/disable/remove by two organisations at once)`,
          ['409 Conflict', '404 NotFound', '401 Unauthorized'],
          (i) => moves[i % moves.length]!(i),
        )
        const rows = await world.handle.db.selectFrom('domain_bindings').select(['org_id', 'is_enabled']).where('domain', '=', domain).execute()
        assert.ok(rows.length <= 1, 'a domain is bound to at most one organisation')
        // Whoever holds it now: every process answers a request at the domain from the database's state, not a
        // cached binding the race removed or moved.
        for (const [orgId, key] of [
          [world.orgId, world.ownerKey],
          [rival.id, rivalKey],
        ] as const) {
          const servedHere = rows.length === 1 && rows[0]!.org_id === orgId && rows[0]!.is_enabled === 1
          for (let s = 0; s < cell.servers.length; s++) {
            const res = await call(cell, s, domain, key, 'GET', '/api/admin/api-keys')
            if (servedHere) assert.equal(res.status, 200, `process ${s} does not serve ${domain} for its organisation`)
            else assert.notEqual(res.status, 200, `process ${s} serves ${domain} for an organisation that does not hold it (${JSON.stringify(rows)})`)
          }
        }
        // Ready for the next round: whatever holds the domain lets it go (each round uses its own domain anyway).
        if (rows.length === 1) assert.equal((await admin(rows[0]!.org_id === world.orgId ? 'acme' : 'rival', keyOf(rows[0]!.org_id)).unbind(0)).status, 204)
      }

      // PostgreSQL reads committed rows: a PATCH that read the binding before a removal committed must not then answer
      // 200 (and audit an enabling) for a binding that is gone. The test's own transaction is that removal, held open
      // until the PATCH waits for its row.
      if (dialect === 'postgres') {
        const domain = 'held.example.com'
        const base = `/api/admin/orgs/acme/domains`
        assert.equal((await call(cell, 0, host, world.ownerKey, 'POST', base, { domain })).status, 201)
        let patch: Promise<Answer> | undefined
        await world.handle.db.transaction().execute(async (trx) => {
          await trx.deleteFrom('domain_bindings').where('org_id', '=', world.orgId).where('domain', '=', domain).execute()
          patch = call(cell, 1, host, world.ownerKey, 'PATCH', `${base}/${domain}`, { isEnabled: true })
          for (let poll = 0; poll < 400 && (await lockWaiters(world)) < 1; poll++) await sleep(25)
        })
        const answer = await patch!
        const enabled = await world.handle.db
          .selectFrom('audit_events')
          .select('id')
          .where('org_id', '=', world.orgId)
          .where('action', '=', 'domain.enabled')
          .where('target', '=', domain)
          .execute()
        console.log(`org-concurrency ${dialect}: PATCH of a binding removed while it waited -> ${codeOf(answer)}, domain.enabled audit rows ${enabled.length}`)
        assert.equal(codeOf(answer), '404 NotFound')
        assert.equal(enabled.length, 0)
      }
    })

    it('site server: the last two site owners demoted and removed at once leave exactly one; a PIN change or PATCH of a user removed meanwhile is a 404 that audits nothing; the electrical network replaced while its nodes and edges are edited keeps every edge on its nodes, never a 5xx', async (t) => {
      const cell = await startCell(t, dialect, 'plant', 'site')
      const { world } = cell
      const host = 'plant.localhost'
      const as = (i: number, method: string, path: string, body?: unknown) => call(cell, i, host, world.ownerKey, method, path, body)

      for (let round = 0; round < 3; round++) {
        const owners: string[] = []
        for (const name of ['a', 'b']) {
          const res = await as(0, 'POST', '/api/site/users', { email: `${name}${round}@plant.example`, displayName: name, siteRole: 'owner', pin: '482913' })
          assert.equal(res.status, 201, res.body)
          owners.push((JSON.parse(res.body) as { id: string }).id)
        }
        const answers = await race(
          cell,
          dialect,
          `last site owner, round ${round} (two owners demoted and removed at once)`,
          ['409 Conflict', '404 NotFound'],
          (i) => (i % 4 < 2 ? as(i, 'PATCH', `/api/site/users/${owners[i % 2]}`, { siteRole: 'admin' }) : as(i, 'DELETE', `/api/site/users/${owners[i % 2]}`)),
        )
        const left = await world.handle.db.selectFrom('site_users').select('id').where('org_id', '=', world.orgId).where('site_role', '=', 'owner').execute()
        assert.equal(left.length, 1, 'the site keeps exactly one owner')
        const survivor = left[0]!.id
        const onSurvivor = answers.filter((_, i) => owners[i % 2] === survivor)
        assert.deepEqual([...new Set(onSurvivor.map(codeOf))], ['409 Conflict'], 'every demotion or removal of the survivor is refused')
        // The other one was demoted or removed; later requests on it act on an admin (2xx) or find it gone (404).
        await world.handle.db.deleteFrom('site_users').where('org_id', '=', world.orgId).execute()
      }

      // PostgreSQL reads committed rows: a PIN change or a PATCH that read the user before a removal committed must
      // answer 404 and audit nothing, not 204/200 (or a 500) for a user that is gone. The removal is the test's own
      // transaction, held open until both requests wait for the user's row.
      if (dialect === 'postgres') {
        const created = await as(0, 'POST', '/api/site/users', { email: 'held@plant.example', displayName: 'held', siteRole: 'member', pin: '482913' })
        const userId = (JSON.parse(created.body) as { id: string }).id
        let answers: Promise<Answer[]> | undefined
        await world.handle.db.transaction().execute(async (trx) => {
          await trx.deleteFrom('site_users').where('org_id', '=', world.orgId).where('id', '=', userId).execute()
          answers = Promise.all([
            as(0, 'PUT', `/api/site/users/${userId}/pin`, { pin: '913482' }),
            as(1, 'PATCH', `/api/site/users/${userId}`, { displayName: 'renamed' }),
          ])
          for (let poll = 0; poll < 400 && (await lockWaiters(world)) < 2; poll++) await sleep(25)
        })
        const [pin, rename] = (await answers!) as [Answer, Answer]
        const audited = await world.handle.db
          .selectFrom('audit_events')
          .select('action')
          .where('org_id', '=', world.orgId)
          .where('target', '=', userId)
          .where('action', 'in', ['site_user.pin_set', 'site_user.updated'])
          .execute()
        console.log(
          `org-concurrency ${dialect}: PIN set and PATCH of a user removed while they waited -> ${codeOf(pin)}, ${codeOf(rename)}; audit rows ${audited.length}`,
        )
        assert.deepEqual([codeOf(pin), codeOf(rename)], ['404 NotFound', '404 NotFound'])
        assert.equal(audited.length, 0)
      }

      // The electrical network: the replacement keeps N0..N4 and brings R0..R4; the edits touch both old and new nodes.
      assert.equal((await as(0, 'POST', '/api/sites', { code: 'S1', name: 'Plant' })).status, 201)
      const chain = (ids: string[]) => ids.slice(1).map((id, k) => ({ sourceId: ids[k]!, targetId: id, edgeType: 0 }))
      const oldIds = Array.from({ length: 10 }, (_, k) => `N${k}`)
      const newIds = [...oldIds.slice(0, 5), ...Array.from({ length: 5 }, (_, k) => `R${k}`)]
      const replacement = { nodes: newIds.map((id) => ({ id, name: `new ${id}`, nodeType: 0 })), edges: chain(newIds) }
      for (let round = 0; round < 3; round++) {
        const seed = { nodes: oldIds.map((id) => ({ id, name: `old ${id}`, nodeType: 0 })), edges: chain(oldIds) }
        assert.equal((await as(0, 'PUT', '/api/sites/S1/electrical/network', seed)).status, 200)
        const edits: Array<(i: number) => Promise<Answer>> = [
          (i) => as(i, 'PUT', '/api/sites/S1/electrical/network', replacement),
          (i) => as(i, 'POST', '/api/sites/S1/electrical/nodes', { id: `E${i}`, name: `edit ${i}`, nodeType: 0 }),
          (i) => as(i, 'POST', '/api/sites/S1/electrical/edges', { sourceId: `N${i % 10}`, targetId: `R${i % 5}`, edgeType: 1 + (i % 4) }),
          (i) => as(i, 'POST', '/api/sites/S1/electrical/edges', { sourceId: `N${5 + (i % 5)}`, targetId: `N${i % 5}`, edgeType: 1 + (i % 4) }),
          (i) => as(i, 'PUT', `/api/sites/S1/electrical/nodes/N${i % 10}`, { name: `renamed ${i}` }),
          (i) => as(i, 'DELETE', `/api/sites/S1/electrical/nodes/N${i % 10}?cascade=true`),
          (i) => as(i, 'DELETE', `/api/sites/S1/electrical/edges?source=N${i % 9}&target=N${(i % 9) + 1}&type=0`),
        ]
        await race(
          cell,
          dialect,
          `network replace against node and edge edits, round ${round}`,
          ['409 Conflict', '404 NotFound', '422 UnprocessableEntity'],
          (i) => edits[i % edits.length]!(i),
        )
        const network = await as(0, 'GET', '/api/sites/S1/electrical/network')
        assert.equal(network.status, 200)
        const graph = JSON.parse(network.body) as { nodes: Array<{ id: string }>; edges: Array<{ sourceId: string; targetId: string }> }
        const ids = new Set(graph.nodes.map((n) => n.id))
        for (const e of graph.edges) assert.ok(ids.has(e.sourceId) && ids.has(e.targetId), `edge ${e.sourceId}->${e.targetId} to a missing node`)
        // A replacement committed: the nodes only the old network had are gone (nothing re-creates them).
        for (const k of [5, 6, 7, 8, 9]) assert.ok(!ids.has(`N${k}`), `N${k} of the old network survived its replacement`)
        for (let k = 0; k < 5; k++) assert.ok(ids.has(`R${k}`), `R${k} of the replacement is missing (nothing deletes it)`)
      }
    })

    it('an organisation slug provisioned 50 times at once (two connection pools) makes one organisation; the others are OrgSlugTaken, never another error', async (t) => {
      const world = await processWorld(t, dialect, 'seed')
      const second = dialect === 'postgres' ? await connectDatabase(world.databaseUrl, { poolSize: 8 }) : world.handle
      if (second !== world.handle) t.after(() => second.close())
      const pools = [world.handle, second].map((handle) => createOrgsService({ handle, clock: systemClock }))
      for (let round = 0; round < 3; round++) {
        const slug = `race-${round}`
        const outcomes = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            pools[i % 2]!.provision(slug).then(
              () => 'created',
              (err: Error) => `${err.constructor.name}`,
            ),
          ),
        )
        const figures = outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {})
        console.log(`org-concurrency ${dialect}: slug ${slug} provisioned ${RACERS} times at once -> ${JSON.stringify(figures)}`)
        assert.deepEqual(figures, { created: 1, OrgSlugTaken: RACERS - 1 })
        const rows = await world.handle.db.selectFrom('orgs').select('id').where('slug', '=', slug).execute()
        assert.equal(rows.length, 1)
      }
    })
  })
}
