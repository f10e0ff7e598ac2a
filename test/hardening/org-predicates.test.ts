// Citus readiness (issue 25, docs/citus.md), part two: every statement that names a distributed (tenant) table
// carries an explicit org_id, so that Citus routes it to one shard. Row-level security alone hides other tenants'
// rows but routes nothing: a query without org_id would run on every shard. PostgreSQL only: every statement the
// process sends is recorded while the API of every module, the sign-ins and the jobs run, then each is checked.
// Part one, the schema, is src/db/citus-readiness.test.ts.
import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import pg from 'pg'
import { postgresUrl, harness, testDialects, type Harness } from '../harness.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { batchedStatements } from '../../src/db/pg-pool.ts'
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
import { linkRequest, ownPostgresDatabase, seedCloudLink } from '../support/fleet-link.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { cloudCell, register } from '../../src/modules/fleet/enrolment/test-link.ts'
import { createEnrolment } from '../../src/modules/fleet/enrolment/service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { createSitesService } from '../../src/modules/sites/service.ts'
import { createTenantTransferService } from '../../src/modules/tenant-transfer/service.ts'
import { historianStoredParts } from '../../src/modules/historian/transfer.ts'
import { closeEndedLiveBatches, LIVE_WINDOW_MS } from '../../src/modules/historian/service/open-batch.ts'
import { sweepHistorianRetention } from '../../src/modules/historian/service/retention.ts'
import { withOrgScope } from '../../src/db/tenant-scope.ts'
import { applyPull } from '../../src/modules/fleet/sync/apply-pull.ts'
import { readChanges, type Change } from '../../src/modules/fleet/outbox/store.ts'
import { PUSHED_TABLES } from '../../src/db/link-triggers.ts'
import type { PullAnswer } from '../../src/modules/fleet/sync/schemas.ts'

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
  {
    name: 'fleet link agent, the enrolments of a site server (fleet/agent/agent.ts scan)',
    reason:
      "a site server's link agent looks, every peerCheckMs, for the enrolments of the organisations it holds (link_peer, one row per organisation); each enrolment's loops then name their org_id",
    statement: /^select "org_id" from "link_peer"$/,
  },
  {
    name: 'historian retention job, the sites with a policy (historian/store/retention-store.ts listRetainedSites, system scope)',
    reason: "the cell's job finds every organisation's sites with a retention policy; each site's deletes and progress then name its org_id",
    statement: /^select "org_id", "site_code", "retention_days" from "historian_retention" where "retention_days" is not null order by/,
  },
  {
    name: 'historian live close job, the open batches whose window ended (historian/store/live-store.ts listOpenBatchesBefore, system scope)',
    reason: "the cell's job finds every organisation's open live batches past their window; each close then names its org_id",
    statement: /^select "org_id", "site_code", "id", "created_by" from "historian_batches" where "status" = \$1 and "created_at" < \$2$/,
  },
]

/** Every SQL text the process sends to PostgreSQL while `recording`. */
const recorded = new Map<string, number>()
let recording = false
const clientQuery = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (recording) {
    const config = args[0] as string | { text?: string } | undefined
    // A batch of the pool's reusable reads sends several statements in one query (db/pg-pool.ts).
    for (const text of batchedStatements(config) ?? [typeof config === 'string' ? config : config?.text]) {
      if (!text) continue
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
/** A data-modifying WITH of two inserts, the second reading the first's rows (audit/store.ts insertWithAuditEvent). */
const INSERT_WITH_INSERT = /^with \w+ as \((insert into .*)\) (insert into .*)$/i

/** Why `statement` would not reach one shard, or undefined when it names its organisation (or no tenant table). */
function missingOrgId(statement: string, distributed: ReadonlySet<string>): string | undefined {
  const both = INSERT_WITH_INSERT.exec(statement)
  if (both) return missingOrgId(both[1]!, distributed) ?? missingOrgId(both[2]!, distributed)
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
      'with written as (insert into "sites" ("org_id", "code") values ($1, $2) returning "code") insert into alarms (org_id, id) select $1, $3 from written',
    ])
      assert.equal(missingOrgId(ok, distributed), undefined, ok)
    for (const refused of [
      'select * from "sites" where "code" = $1',
      'insert into "sites" ("code") values ($1)',
      'delete from "api_keys" where "id" = $1',
      'select "a"."id" from "alarms" as "a" inner join "alarm_history" as "h" on "h"."alarm_id" = "a"."id" where "a"."org_id" = $1',
      'insert into key_reminders (org_id, key_id) select org_id, id from api_keys',
      'with written as (insert into "sites" ("code") values ($1) returning "code") insert into alarms (org_id, id) select $1, $2 from written',
      'with written as (insert into "sites" ("org_id", "code") values ($1, $2) returning "code") insert into alarms (id) select $3 from written',
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
      ok(await as('POST', `/api/sites/S1/controllers/${cid}/assign`, { edgeId: 'GW-1' }), 'edge assignment')
      ok(await as('GET', '/api/sites/S1/edges/GW-1/config'), 'edge config') // issue 30: the version row the triggers keep
      const beat = { gatewayVersion: '1.0', controllers: [{ controllerId: cid, communication: 'failed', lastGoodPollAt: null, errorCount: 1 }] }
      ok(await as('PUT', '/api/sites/S1/edges/GW-1/status', beat), 'edge heartbeat') // issue 30: raises COMM_LOSS too
      ok(await as('GET', '/api/sites/S1/edges'), 'edge gateways')

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
        'nodes/M1/protection-curves',
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
      // Live samples (a push and its resend) and retention (the policy, the job).
      await h.handle.db.updateTable('instances').set({ tag_mappings: '{"p":"N7:0"}', tag_count: 1 }).where('org_id', '=', p.owner.org.id).execute()
      const live = {
        method: 'POST' as const,
        url: `/api/sites/${p.siteCode}/historian/samples?batchKey=gw-1`,
        payload: { samples: [{ instanceId: 'ins_pump', tagKey: 'p', ts: h.clock.now(), value: 1 }] },
      }
      ok(await h.inject(p.member, live), 'live push')
      ok(await h.inject(p.member, live), 'live resend')
      ok(await h.inject(p.owner, { method: 'PUT', url: `/api/sites/${p.siteCode}/historian/retention`, payload: { retentionDays: 30 } }), 'retention set')
      ok(await h.inject(p.member, { url: `/api/sites/${p.siteCode}/historian/retention` }), 'retention')
      await sweepHistorianRetention(h.appHandle, h.clock)
      // The live push's open batch, closed by the job once its window ended.
      const now = h.clock.now()
      h.clock.set(now + LIVE_WINDOW_MS)
      assert.equal((await closeEndedLiveBatches(h.appHandle, h.clock)).closed, 1)
      h.clock.set(now)
    })

    it('cloud: AI completion and usage', async (t) => {
      const { h, box, ask, org, ownerKey } = await setUpAi(t, dialect)
      box.enqueue({ kind: 'ok', text: 'a', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
      await ask({ prompt: 'x' })
      ok(await h.inject({ org, apiKey: ownerKey }, { url: '/api/ai/usage' }), 'usage')
    })

    it('cloud: the fleet link (site servers, enrolment, seed, push with changes that lose, pull, heartbeat, historian chunks and the batch after them, conflicts read, re-applied and dismissed, forwarded alarm actions, a new code, revocation)', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_MODE: 'cloud' })
      const { org, key } = await h.orgWithKey('owner')
      const owner = { org, apiKey: key }
      const as = (method: string, url: string, payload?: unknown) =>
        h.inject(owner, { method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) })
      // Registration, enrolment, the seed, a push (one change applied, two lost: conflict records), a pull, a
      // heartbeat, a historian chunk, an acknowledge on the linked site's alarm (202, a command): seedCloudLink's steps.
      const link = await seedCloudLink(h, owner, 'FL')
      const site = linkRequest(h, owner, link)
      ok(await as('GET', '/api/admin/site-servers'), 'site servers')
      ok(await as('GET', `/api/admin/site-servers/${link.serverId}`), 'site server')
      ok(await site('GET', `/api/link/historian/${link.batch}/chunks`), 'chunks')
      // The batch row after its chunk: the cloud stores the chunk's samples under it.
      const at = h.clock.now()
      const samples = 1
      const batchRow = {
        org_id: org.id,
        site_code: link.site,
        id: link.batch,
        format: 'long',
        status: 'complete',
        rows_read: samples,
        samples_stored: samples,
        rejected_count: 0,
        collision_count: 0,
        replaced_count: 0,
        bytes_read: 0,
        bytes_total: null,
        first_ts: at - 60_000,
        last_ts: at - 60_000,
        tags: JSON.stringify([
          { historianTag: 'FL-LCV-1.speed', instanceId: 'FL-LCV-1', tagKey: 'speed', unit: null, scale: 1, samples, firstTs: at - 60_000, lastTs: at - 60_000 },
        ]),
        report: '{}',
        options: '{}',
        trend_sha256: link.batch,
        mapping_sha256: link.batch,
        trend_name: null,
        is_forced: 0,
        error: null,
        created_by: 'site',
        created_at: at,
        updated_at: at,
        completed_at: at,
      }
      const batchChange = {
        seq: 4,
        tx: 0,
        table: 'historian_batches',
        site: link.site,
        key: [link.batch],
        op: 'upsert',
        row: batchRow,
        base: null,
        origin: '',
        at,
      }
      ok(await site('POST', '/api/link/push', { epoch: link.epoch, after: { tx: 0, seq: 3 }, changes: [batchChange] }), 'push of the batch')
      ok(await site('POST', '/api/link/push', { epoch: link.epoch, after: { tx: 0, seq: 3 }, changes: [batchChange] }), 'the same push again (skipped)')
      ok(await site('GET', '/api/link/pull?tx=0&seq=0&limit=1000'), 'pull')
      ok(
        await site('PUT', '/api/link/heartbeat', {
          state: 'online',
          lastError: null,
          backlog: { items: 1, bytes: 10, oldestAt: at },
          pulledTo: { tx: 0, seq: 0 },
        }),
        'heartbeat',
      )
      // Conflicts: listed, read, one re-applied (the site's version wins after all), one dismissed.
      ok(await as('GET', '/api/link/conflicts?unresolved=true&limit=10'), 'conflicts')
      ok(await as('GET', `/api/link/conflicts/${link.conflicts[0]}`), 'conflict')
      ok(await as('POST', `/api/link/conflicts/${link.conflicts[0]}/reapply`), 'reapply')
      ok(await as('POST', `/api/link/conflicts/${link.conflicts[1]}/dismiss`), 'dismiss')
      // Forwarded commands: the organisation's, the alarm's; the alarm counts its pending ones; a bulk acknowledge.
      ok(await as('GET', '/api/link/commands'), 'commands')
      ok(await as('GET', `/api/link/commands?status=pending&siteId=${link.site}`), 'pending commands of the site')
      ok(await as('GET', `/api/sites/${link.site}/alarms/${link.alarm}/commands`), 'alarm commands')
      ok(await as('GET', `/api/sites/${link.site}/alarms/${link.alarm}`), 'linked alarm')
      ok(await as('POST', `/api/sites/${link.site}/alarms/acknowledge`, { alarmIds: [link.alarm], comment: 'all' }), 'bulk acknowledge forwarded')
      // A new code for the server, then its revocation (its credential is refused from then on).
      ok(await as('POST', `/api/admin/site-servers/${link.serverId}/enrolment-code`), 'new code')
      ok(await as('POST', `/api/admin/site-servers/${link.serverId}/revoke`), 'revoke')
      const refused = await site('GET', '/api/link/pull?tx=0&seq=0')
      if (refused.statusCode !== 401) failures.push(`a revoked credential: ${refused.statusCode}`)
    })

    /** A site server on its own PostgreSQL database (app role), with its enrolment service as `sitegrid link enrol` builds it. */
    async function siteOnPostgres(t: TestContext, env: Record<string, string>) {
      // Its database is created and migrated outside the recording, as the process database is (`before`).
      recording = false
      const database = await ownPostgresDatabase().finally(() => {
        recording = true
      })
      const site = await harness(t, dialect, { ...database, SITEGRID_MODE: 'site', ...env })
      const orgs = createOrgsService({ handle: site.handle, clock: site.clock })
      const sites = createSitesService({ handle: site.handle, clock: site.clock, dependents: [] })
      const transfer = createTenantTransferService({
        handle: site.handle,
        clock: site.clock,
        mode: 'site',
        baseDomain: site.config.baseDomain,
        sites,
        storedParts: historianStoredParts,
        maxPackageBytes: site.config.tenantPackageMaxBytes,
        maxInflatedBytes: site.config.tenantPackageMaxInflatedBytes,
      })
      const enrolment = createEnrolment({
        handle: site.handle,
        clock: site.clock,
        keySecret: site.config.keySecret!,
        siteOrgSlug: site.config.siteOrgSlug,
        orgs,
        sites,
        transfer,
      })
      return { site, orgs, enrolment }
    }

    /** Bounded: the PostgreSQL outbox reader waits for every older transaction of the server, other tests' included. */
    const until = async (what: string, done: () => Promise<boolean>, tries = 600) => {
      for (let i = 0; i < tries; i++) {
        if (await done()) return true
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      failures.push(`site: ${what} never happened`)
      return false
    }

    it("site: enrolment against a cloud cell (the site's organisation, seed, peer, bases, mark), a pull of the cloud's change applied and a push of the site's, as the agent makes them", async (t) => {
      const cell = await cloudCell(t, dialect)
      const registered = await register(cell.cloud, cell.owner, ['S1'])
      // The agent's scan waits a minute between two looks at the enrolments: it cannot race the pull and push below.
      const { site, orgs, enrolment } = await siteOnPostgres(t, { SITEGRID_LINK_PUSH_IDLE_MS: '60000' })
      await site.app.ready()
      const enrolled = await enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR })
      assert.equal(enrolled.serverId, registered.id)
      const local = (await orgs.findBySlug(cell.org.slug))!
      const siteKey = await site.mintKey(local, 'owner')
      const onSite = { org: local, apiKey: siteKey.plaintext }
      ok(await site.inject(onSite, { method: 'GET', url: '/api/link' }), 'link status')
      ok(await site.inject(onSite, { method: 'GET', url: '/api/link/conflicts' }), 'conflicts on the site')
      ok(await site.inject(onSite, { method: 'GET', url: '/api/link/commands' }), 'commands on the site')
      const credential = (await enrolment.credential(local.id))!
      const cloudLink = linkRequest(cell.cloud, cell.owner, { credential })
      const inSite = <T>(fn: () => Promise<T>) => withOrgScope(local.id, fn)
      const peer = await inSite(() => site.appHandle.db.selectFrom('link_peer').selectAll().where('org_id', '=', local.id).executeTakeFirstOrThrow())

      // The cloud renames a controller of S1: the pull brings it and the site applies it (applyPull, the app role).
      const controllers = (await cell.as('GET', '/api/sites/S1/controllers')).json().items as Array<{ id: string }>
      const cid = controllers[0]!.id
      ok(
        await cell.cloud.inject(cell.owner, { method: 'PUT', url: `/api/sites/S1/controllers/${cid}`, payload: { name: 'renamed in the cloud' } }),
        'cloud edit',
      )
      const mark = await inSite(() =>
        site.appHandle.db.selectFrom('link_marks').selectAll().where('org_id', '=', local.id).where('peer', '=', 'cloud').executeTakeFirstOrThrow(),
      )
      let answer: PullAnswer | undefined
      await until('a pull answer with the cloud edit', async () => {
        const res = await cloudLink('GET', `/api/link/pull?tx=${mark.tx}&seq=${mark.seq}&limit=1000`)
        ok(res, 'pull')
        answer = res.statusCode === 200 ? (res.json() as PullAnswer) : undefined
        return answer?.changes.some((c) => c.table === 'controllers') ?? false
      })
      if (answer) {
        await inSite(() =>
          applyPull(
            { handle: site.appHandle, clock: site.clock },
            {
              orgId: local.id,
              serverId: peer.server_id,
              sites: JSON.parse(peer.sites) as string[],
              epoch: peer.epoch,
              changes: answer!.changes,
              next: answer!.next,
            },
          ),
        )
        const row = await site.handle.db.selectFrom('controllers').select('name').where('org_id', '=', local.id).where('id', '=', cid).executeTakeFirst()
        assert.equal(row?.name, 'renamed in the cloud')
      }

      // An alarm raised on the site goes up: its outbox read (the app role) and pushed as the agent does.
      ok(
        await site.inject(onSite, {
          method: 'POST',
          url: '/api/sites/S1/alarms/events',
          payload: {
            events: [
              {
                eventId: 'site-e1',
                instanceId: 'CV-1',
                condition: 'HI',
                priority: 'high',
                state: 'active',
                occurredAt: new Date(site.clock.now() - 1000).toISOString(),
              },
            ],
          },
        }),
        'site alarm event',
      )
      let changes: Change[] = []
      await until('the site alarm readable in the outbox', async () => {
        changes = await inSite(() =>
          readChanges(
            site.appHandle.db,
            dialect,
            local.id,
            { tx: Number(peer.acked_tx), seq: Number(peer.acked_seq) },
            { limit: 500, tables: PUSHED_TABLES, origin: { not: 'cloud' } },
          ),
        )
        return changes.some((c) => c.table === 'alarm_events')
      })
      ok(await cloudLink('POST', '/api/link/push', { epoch: peer.epoch, after: { tx: Number(peer.acked_tx), seq: Number(peer.acked_seq) }, changes }), 'push')
      const upThere = await cell.cloud.handle.db
        .selectFrom('alarm_events')
        .select('event_id')
        .where('org_id', '=', cell.org.id)
        .where('event_id', '=', 'site-e1')
        .executeTakeFirst()
      assert.ok(upThere, 'the site alarm reached the cloud')
    })

    // The agent's scan of the enrolments runs in the system scope and each enrolment's loops in its organisation's:
    // under row-level security (a PostgreSQL site server with SITEGRID_DATABASE_APP_URL) it still finds and runs them.
    it("site on PostgreSQL with the app role: the running agent finds its enrolment and pulls the cloud's change", async (t) => {
      const cell = await cloudCell(t, dialect)
      const registered = await register(cell.cloud, cell.owner, ['S1'])
      const { site, orgs, enrolment } = await siteOnPostgres(t, { SITEGRID_LINK_PUSH_IDLE_MS: '50', SITEGRID_LINK_PULL_WAIT_MS: '500' })
      await site.app.ready()
      await enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR })
      const local = (await orgs.findBySlug(cell.org.slug))!
      const cid = ((await cell.as('GET', '/api/sites/S1/controllers')).json().items as Array<{ id: string }>)[0]!.id
      await cell.cloud.inject(cell.owner, { method: 'PUT', url: `/api/sites/S1/controllers/${cid}`, payload: { name: 'pulled by the agent' } })
      let pulled = false
      for (let i = 0; i < 200 && !pulled; i++) {
        const row = await site.handle.db.selectFrom('controllers').select('name').where('org_id', '=', local.id).where('id', '=', cid).executeTakeFirst()
        pulled = row?.name === 'pulled by the agent'
        if (!pulled) await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.ok(pulled, 'the agent pulled the cloud edit within 10 s')
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
