// Citus readiness (issue 25, docs/citus.md), part two: every statement that names a distributed (tenant) table
// carries an explicit org_id, so that Citus routes it to one shard. Row-level security alone hides other tenants'
// rows but routes nothing: a query without org_id would run on every shard. PostgreSQL only: every statement the
// process sends is recorded while the API of every module, the sign-ins and the jobs run, then each is checked.
// Part one, the schema, is src/db/citus-readiness.test.ts.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { postgresUrl, harness, testDialects, type Harness } from '../harness.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { REFERENCE_TABLES } from '../../src/db/distribution.ts'
import { tenantTables } from '../../src/db/row-level-security.ts'
import { createIdentityServices } from '../../src/app.ts'
import { creatorDirectory } from '../../src/jobs/creator-directory.ts'
import { createReminderService } from '../../src/modules/reminders/service.ts'
import { RADIAL } from '../../src/modules/electrical/test-support.ts'
import { fixture, plant, standardParts, upload } from '../../src/modules/historian/test-setup.ts'
import { setUpAi } from '../../src/modules/ai/route-test-setup.ts'
import { postSession, signIn } from '../oidc/browser-flow.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../oidc/identity-harness.ts'
import { CHEAP_PINS, login, newUserBody, refresh, signedIn } from '../site/support.ts'

/**
 * Statements that span organisations by design: background work of the whole cell, which Citus runs on every shard
 * (rarely, and never on a request's path). Each names what runs it and why it has no organisation.
 */
const GLOBAL_BY_DESIGN: ReadonlyArray<{ name: string; reason: string; statement: RegExp }> = [
  {
    name: 'historian recovery at start-up (historian/store.ts listRunningBatches)',
    reason: 'a starting process looks for the running imports of every organisation whose process died',
    statement: /^select "org_id", "id" from "historian_batches" where "status" = \$1$/,
  },
  {
    name: 'electrical staging sweep (electrical/staging-store.ts deleteStale, system scope)',
    reason: 'staged network loads left by a process that is gone, whichever organisation they belong to',
    statement: /^delete from "electrical_network_staging" where "staged_at" < \$1$/,
  },
  {
    name: 'key expiry reminders (reminders/store.ts findDueKeys)',
    reason:
      "the control plane's job finds the keys of every organisation due a reminder (their reminder rows on every shard); each claim then names its org_id",
    statement: /^select "k"\."org_id", .* from "api_keys" as "k" inner join "orgs" as "o" on "o"\."id" = "k"\."org_id" where "k"\."revoked_at" is null /,
  },
]

/** Every SQL text the process sends to PostgreSQL while `recording`. */
const recorded = new Map<string, number>()
let recording = false
const clientQuery = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (recording) {
    const config = args[0] as string | { text?: string } | undefined
    const text = typeof config === 'string' ? config : config?.text
    if (text) {
      const normalised = text.replace(/\s+/g, ' ').trim()
      recorded.set(normalised, (recorded.get(normalised) ?? 0) + 1)
    }
  }
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args)
} as typeof pg.Client.prototype.query

const TABLE_REFERENCE = /\b(?:from|join|into|update|copy)\s+"?([a-z_]+)"?/gi
const ORG_ID_IS_VALUE = /\borg_id"?\s*=\s*(?:\$\d+|'[^']*')/gi
const ORG_ID_IS_COLUMN = /\borg_id"?\s*=\s*(?:"?\w+"?\.)?"?org_id\b/gi
const TARGET_COLUMNS = /^(?:insert into|copy)\s+"?\w+"?\s*\(([^)]*)\)/i

/** Why `statement` would not reach one shard, or undefined when it names its organisation (or no tenant table). */
function missingOrgId(statement: string, distributed: ReadonlySet<string>): string | undefined {
  const tables = [...statement.matchAll(TABLE_REFERENCE)].map((m) => m[1]!.toLowerCase()).filter((t) => distributed.has(t))
  if (tables.length === 0) return undefined
  const target = TARGET_COLUMNS.exec(statement)
  if (target && !/\borg_id\b/.test(target[1]!)) return `writes ${tables[0]} without its org_id`
  if (target && tables.length === 1) return undefined // values, COPY, or a select from no tenant table: routed by its org_id
  const values = [...statement.matchAll(ORG_ID_IS_VALUE)].length
  const columns = [...statement.matchAll(ORG_ID_IS_COLUMN)].length
  if (values === 0) return `no org_id = <value> among ${tables.join(', ')}`
  if (values + columns < tables.length - (target ? 1 : 0)) return `a table among ${tables.join(', ')} is not joined on org_id`
  return undefined
}

describe('the org_id predicate check', () => {
  const distributed = new Set(['sites', 'alarms', 'alarm_history', 'api_keys', 'key_reminders'])
  it('names the statements that would run on every shard', () => {
    for (const ok of [
      'select * from "sites" where "org_id" = $1 and "code" = $2',
      'insert into "sites" ("org_id", "code") values ($1, $2)',
      'update "api_keys" set "last_used_at" = $1 where "org_id" = $2 and "id" = $3',
      'select "a"."id" from "alarms" as "a" inner join "alarm_history" as "h" on "h"."org_id" = "a"."org_id" and "h"."alarm_id" = "a"."id" where "a"."org_id" = $1',
      'select * from "orgs" where "slug" = $1',
      'copy sites (org_id, code) from stdin',
      'insert into sites (org_id, code) select $1, c.code from copied c',
    ])
      assert.equal(missingOrgId(ok, distributed), undefined, ok)
    for (const refused of [
      'select * from "sites" where "code" = $1',
      'insert into "sites" ("code") values ($1)',
      'delete from "api_keys" where "id" = $1',
      'select "a"."id" from "alarms" as "a" inner join "alarm_history" as "h" on "h"."alarm_id" = "a"."id" where "a"."org_id" = $1',
      'insert into key_reminders (org_id, key_id) select org_id, id from api_keys',
    ])
      assert.ok(missingOrgId(refused, distributed), refused)
  })
})

/** Requests that did not succeed (the exercise goes on, so that one failure shows all the others). */
const failures: string[] = []
const ok = (res: { statusCode: number; body: string }, what: string) => {
  if (res.statusCode >= 300) failures.push(`${what}: ${res.statusCode} ${res.body.slice(0, 300)}`)
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`${dialect}: every statement on a tenant table names its org_id (Citus routes it to one shard)`, () => {
    let distributed: Set<string>
    let shared: SharedProvider
    before(async () => {
      const handle = await connectDatabase(await postgresUrl(), { poolSize: 1 }) // migrated before recording starts
      distributed = new Set((await tenantTables(handle.db)).filter((t) => !(t in REFERENCE_TABLES)))
      await handle.close()
      shared = await startSharedProvider()
      recording = true
    })
    after(() => shared.stop())

    it('cloud: equipment, electrical, alarms, historian, keys, domains, members, audit, transfer, sessions, jobs', async (t) => {
      const h = await identityHarness(t, dialect, shared)
      const { org } = h
      const { plaintext: key } = await h.mintKey(org, 'owner')
      const as = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
        h.inject({ org, apiKey: key }, { method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })

      // API keys, /api/me.
      const minted = await as('POST', '/api/admin/api-keys', {
        role: 'member',
        name: 'citus',
        expiresAt: new Date(h.clock.now() + 40 * 86_400_000).toISOString(),
      })
      ok(minted, 'mint')
      ok(await as('GET', '/api/admin/api-keys'), 'list keys')
      ok(await as('GET', '/api/me'), 'me')
      ok(await h.inject({ org, apiKey: minted.json().key ?? minted.json().plaintext }, { method: 'GET', url: '/api/me' }), 'the new key')

      // Sites, controllers (an Idempotency-Key and its replay), instances.
      ok(await as('POST', '/api/sites', { code: 'S1', name: 'Plant' }), 'site')
      ok(await as('GET', '/api/sites'), 'sites')
      ok(await as('PUT', '/api/sites/S1', { name: 'Plant one' }), 'site update')
      const controllerBody = { name: 'PLC', platform: 1, assetNumber: 'A-1', connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' } }
      const controller = await as('POST', '/api/sites/S1/controllers', controllerBody, { 'idempotency-key': 'citus-controller-1' })
      ok(controller, 'controller')
      ok(await as('POST', '/api/sites/S1/controllers', controllerBody, { 'idempotency-key': 'citus-controller-1' }), 'controller replayed')
      const cid = controller.json().id as string
      ok(await as('GET', '/api/sites/S1/controllers'), 'controllers')
      ok(await as('GET', `/api/sites/S1/controllers/${cid}`), 'controller read')
      ok(await as('PUT', `/api/sites/S1/controllers/${cid}`, { name: 'PLC 1', connection: { ipAddress: '10.20.1.16' } }), 'controller update')
      const instance = (id: string) => ({ id, name: id, typeId: 'conveyor', assetNumber: `I-${id}`, controllerId: cid })
      ok(await as('POST', '/api/sites/S1/instances', instance('P1')), 'instance')
      ok(await as('POST', '/api/sites/S1/instances/bulk', [instance('P2'), instance('P3')]), 'bulk')
      ok(await as('GET', '/api/sites/S1/instances'), 'instances')
      ok(await as('GET', '/api/sites/S1/instances/P1'), 'instance read')
      ok(await as('PUT', '/api/sites/S1/instances/P1', { name: 'Conveyor' }), 'instance update')
      ok(await as('DELETE', '/api/sites/S1/instances/P3'), 'instance delete')

      // Electrical network.
      const E = '/api/sites/S1/electrical'
      ok(await as('PUT', `${E}/network`, RADIAL), 'network load')
      ok(await as('GET', `${E}/network`), 'network')
      ok(await as('POST', `${E}/nodes`, { id: 'X1', name: 'Spare', nodeType: 10 }), 'node')
      ok(await as('GET', `${E}/nodes`), 'nodes')
      ok(await as('GET', `${E}/nodes/X1`), 'node read')
      ok(await as('PUT', `${E}/nodes/X1`, { name: 'Spare 1', nodeType: 10 }), 'node update')
      ok(await as('POST', `${E}/edges`, { sourceId: 'MSB', targetId: 'X1', edgeType: 0 }), 'edge')
      ok(await as('GET', `${E}/edges`), 'edges')
      ok(await as('DELETE', `${E}/edges?source=MSB&target=X1&type=0`), 'edge delete')
      ok(await as('DELETE', `${E}/nodes/X1`), 'node delete')
      for (const path of [
        'nodes/M1/supply-paths',
        'nodes/CB2/trip-time?currentA=1000',
        'nodes/CB2/coordination',
        'topology/islands',
        'topology/isolated',
        'topology/loops',
        'export/pandapower',
      ]) {
        await as('GET', `${E}/${path}`) // answers vary by node; the statements are what is checked
      }

      // Alarms.
      const at = new Date(h.clock.now() - 60_000).toISOString()
      const events = await as('POST', '/api/sites/S1/alarms/events', {
        events: [
          { eventId: 'e1', instanceId: 'P1', condition: 'HI', priority: 'high', state: 'active', occurredAt: at },
          { eventId: 'e2', instanceId: 'P2', condition: 'HI', priority: 'low', state: 'active', occurredAt: at },
        ],
      })
      ok(events, 'alarm events')
      const [a1, a2] = (events.json().results as Array<{ alarmId: string }>).map((r) => r.alarmId)
      ok(await as('GET', '/api/sites/S1/alarms'), 'alarms')
      ok(await as('GET', `/api/sites/S1/alarms/${a1}`), 'alarm read')
      ok(
        await as('GET', `/api/sites/S1/alarms/load?from=${new Date(h.clock.now() - 3_600_000).toISOString()}&to=${new Date(h.clock.now()).toISOString()}`),
        'alarm load',
      )
      ok(await as('POST', `/api/sites/S1/alarms/${a1}/acknowledge`, { comment: 'seen' }), 'acknowledge')
      ok(await as('POST', `/api/sites/S1/alarms/${a2}/shelve`, { comment: 'c', until: new Date(h.clock.now() + 600_000).toISOString() }), 'shelve')
      ok(await as('POST', `/api/sites/S1/alarms/${a2}/unshelve`, { comment: 'c' }), 'unshelve')
      ok(await as('POST', `/api/sites/S1/alarms/${a2}/out-of-service`, { comment: 'c' }), 'out of service')
      ok(await as('POST', `/api/sites/S1/alarms/${a2}/return-to-service`, { comment: 'c' }), 'return to service')
      ok(await as('POST', '/api/sites/S1/alarms/acknowledge', { alarmIds: [a2], comment: 'all' }), 'bulk acknowledge')

      // Custom domains (and a request at one), members, audit.
      const domains = `/api/admin/orgs/${org.slug}/domains`
      const domain = `${org.slug}.citus.example`
      ok(await as('POST', domains, { domain }), 'bind')
      ok(await as('PATCH', `${domains}/${domain}`, { isEnabled: true }), 'enable')
      ok(await as('GET', domains), 'domains')
      ok(await h.inject({ org, apiKey: key }, { url: '/api/admin/api-keys', host: domain }), 'at the custom host')
      ok(await as('DELETE', `${domains}/${domain}`), 'unbind')
      const { session } = await signIn(h, 'ada')
      const members = `/api/admin/orgs/${org.slug}/members`
      ok(await as('GET', members), 'members')
      ok(await as('POST', `${members}/${h.oidOf('ada')}/approve`, { role: 'admin' }), 'approve')
      const token = await postSession(h, '/auth/token', session)
      ok(token, 'session token')
      ok(await h.bearer(token.json().accessToken, { method: 'GET', url: '/api/admin/api-keys' }), 'bearer')
      ok(await postSession(h, '/auth/logout', session), 'logout')
      ok(await as('DELETE', `${members}/${h.oidOf('ada')}`), 'member removal')
      ok(await as('GET', `/api/admin/orgs/${org.slug}/audit`), 'audit')

      // Tenant export, then the same package staged and applied (forced) to the organisation.
      const exported = await as('GET', `/api/admin/orgs/${org.slug}/tenant/export`)
      ok(exported, 'export')
      ok(
        await h.inject(
          { org, apiKey: key },
          {
            method: 'PUT',
            url: `/api/admin/orgs/${org.slug}/tenant/import/package`,
            headers: { 'content-type': 'application/gzip' },
            payload: exported.rawPayload,
          },
        ),
        'stage',
      )
      ok(await as('POST', `/api/admin/orgs/${org.slug}/tenant/import?force=true`), 'import')

      // Deletions last: key revocation, the controller, the site and what hangs from it.
      ok(await as('DELETE', `/api/admin/api-keys/${minted.json().id ?? minted.json().keyId}`), 'revoke')
      ok(await as('DELETE', '/api/sites/S1/instances/P2'), 'instance delete')
      ok(await as('DELETE', '/api/sites/S1/instances/P1'), 'instance delete')
      await as('DELETE', `/api/sites/S1/controllers/${cid}`)
      ok(await as('DELETE', '/api/sites/S1?confirm=S1'), 'site delete')

      // Jobs: the key expiry reminders of the cell, and the last-used flush (every 50 ms in tests).
      const soon = await h.mintKey(org, 'admin', { lifetimeMs: 25 * 86_400_000, name: 'expiring' })
      ok(await h.inject({ org, apiKey: soon.plaintext }, { url: '/api/me' }), 'used key')
      const reminders = createReminderService({
        handle: h.handle,
        clock: h.clock,
        send: async () => {},
        operatorEmail: 'ops@cell.example',
        directory: creatorDirectory(createIdentityServices({ config: h.config, handle: h.handle, clock: h.clock })),
      })
      await reminders.runOnce()
      await new Promise((resolve) => setTimeout(resolve, 200))
    })

    it('cloud: historian imports (collisions kept and forced), series, batches', async (t) => {
      const h = await harness(t, dialect)
      const p = await plant(h)
      const imported = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', fixture('long.csv'), 'historian_tag,instance_id,tag_key\n"Boiler,1.Temp",ins_boiler1,temp\n', {
          timezone: 'Europe/Paris',
        }),
      )
      ok(imported, 'import')
      const batch = imported.json().id as string
      ok(await h.inject(p.member, { url: `/api/historian/import-batches?siteId=${p.siteCode}` }), 'batches')
      ok(await h.inject(p.member, { url: `/api/historian/import-batches/${batch}` }), 'batch')
      ok(await h.inject(p.member, { url: `/api/historian/import-batches/${batch}/rejections` }), 'rejections')
      ok(await h.inject(p.member, { url: `/api/historian/import-batches/${batch}/collisions` }), 'collisions')
      ok(await h.inject(p.member, { url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_boiler1&tag=temp` }), 'series')
      // Overlapping imports: their collisions kept (without force) and replaced (with force).
      const mapping = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'
      const first = 'timestamp,tag,value,quality\n2024-05-01T00:00:00Z,A,1,Good\n2024-05-01T00:01:00Z,A,2,Good\n'
      const second = 'timestamp,tag,value,quality\n2024-05-01T00:01:00Z,A,20,Bad\n2024-05-01T00:02:00Z,A,40,Good\n'
      ok(await upload(h, p.owner, standardParts(p.siteCode, 'long', first, mapping)), 'first')
      ok(await upload(h, p.owner, standardParts(p.siteCode, 'long', second, mapping)), 'overlapping')
      ok(await upload(h, p.owner, standardParts(p.siteCode, 'long', second.replace('40', '41'), mapping, { force: 'true' })), 'forced')
      ok(await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${batch}` }), 'batch delete')
    })

    it('cloud: AI completion and usage', async (t) => {
      const { h, box, ask, org, ownerKey } = await setUpAi(t, dialect)
      box.enqueue({ kind: 'ok', text: 'a', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
      await ask({ prompt: 'x' })
      ok(await h.inject({ org, apiKey: ownerKey }, { url: '/api/ai/usage' }), 'usage')
    })

    it('site: site users, PIN sign-in, refresh, sign-out', async (t) => {
      const h: Harness = await harness(t, dialect, { SITEGRID_MODE: 'site', ...CHEAP_PINS })
      const org = await h.createOrg()
      const owner = await signedIn(h, org, 'owner')
      const as = (method: string, url: string, payload?: unknown) =>
        h.inject({ org, bearer: owner.accessToken }, { method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) })
      const body = newUserBody('member')
      const created = await as('POST', '/api/site/users', body)
      ok(created, 'site user')
      const id = created.json().id as string
      ok(await as('GET', '/api/site/users'), 'site users')
      ok(await as('PATCH', `/api/site/users/${id}`, { displayName: 'Operator' }), 'rename')
      ok(await as('PUT', `/api/site/users/${id}/pin`, { pin: '86420000' }), 'pin')
      assert.equal((await login(h, org, body.email, '11111111')).statusCode, 401)
      const signedInAgain = await login(h, org, body.email, '86420000')
      ok(signedInAgain, 'sign-in')
      const refreshed = await refresh(h, org, signedInAgain.json().refreshToken)
      ok(refreshed, 'refresh')
      ok(
        await h.app.inject({
          method: 'POST',
          url: '/auth/site/logout',
          headers: { host: `${org.slug}.localhost` },
          payload: { refreshToken: refreshed.json().refreshToken },
        }),
        'sign-out',
      )
      ok(await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { host: `${org.slug}.localhost` } }), 'key set')
      ok(await as('DELETE', `/api/site/users/${id}`), 'site user removal')
    })

    it('no statement on a distributed table lacks its org_id, but those global by design', () => {
      recording = false
      assert.deepEqual(failures, [], 'requests of the exercise that failed')
      const statements = [...recorded.keys()]
      const used = new Set(GLOBAL_BY_DESIGN.filter((g) => statements.some((s) => g.statement.test(s))).map((g) => g.name))
      const refused = statements.flatMap((s) => {
        if (GLOBAL_BY_DESIGN.some((g) => g.statement.test(s))) return []
        const why = missingOrgId(s, distributed)
        return why ? [`${why}: ${s.slice(0, 300)}`] : []
      })
      assert.deepEqual(refused, [], 'statements a Citus cell would run on every shard')
      assert.deepEqual(
        GLOBAL_BY_DESIGN.filter((g) => !used.has(g.name)).map((g) => g.name),
        [],
        'named exceptions no statement needed',
      )
      // The exercise reached every distributed table (a table no statement named was not checked).
      const named = new Set(statements.flatMap((s) => [...s.matchAll(TABLE_REFERENCE)].map((m) => m[1]!.toLowerCase())))
      assert.deepEqual([...distributed].filter((table) => !named.has(table)).sort(), [], 'distributed tables the exercise never reached')
    })
  })
}
