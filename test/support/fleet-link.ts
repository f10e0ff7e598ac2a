// The fleet link (issue 26) in a seeded tenant, for the hardening suites: in the cloud a site server registered,
// enrolled and at work through the real routes (seed, push with changes that lose, pull, heartbeat, a historian chunk,
// a forwarded alarm action); on a site server the cloud's records of it as a pull brings them (a conflict, a command).
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { rowLevelSecurityInTests, type Credential, type Harness } from '../harness.ts'
import { appRoleUrl, createTestDatabase, ensureAppRole, TEST_APP_ROLE } from '../postgres.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { grantAppRole } from '../../src/db/row-level-security.ts'
import { applyPull } from '../../src/modules/fleet/sync/apply-pull.ts'
import type { Change } from '../../src/modules/fleet/outbox/store.ts'
import { LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from '../../src/modules/fleet/site-servers/protocol.ts'
import { chunkDigest } from '../../src/modules/fleet/historian-chunks/wire.ts'
import { newId } from '../../src/ids.ts'

/** The headers every link request carries besides its credential. */
export const LINK_HEADERS: Readonly<Record<string, string>> = { [PROTOCOL_HEADER]: String(LINK_PROTOCOL), [SCHEMA_HEADER]: SCHEMA_VERSION }

/** A one-time enrolment code and a link credential, as they look (their plaintexts must never be answered twice). */
export const ENROLMENT_CODE = /sle_[0-9A-Za-z]{32}/
export const LINK_CREDENTIAL = /slk_srv_[0-9A-Z]{26}_[0-9A-Za-z]{32}/

export interface CloudLink {
  /** The site the site server was registered for (not the tenant's main site: its alarm actions would be forwarded). */
  site: string
  serverId: string
  /** The link credential (`slk_…`): `Authorization: Bearer` with LINK_HEADERS. */
  credential: string
  epoch: string
  /** The conflict records the push left, unresolved. */
  conflicts: string[]
  /** A pending command: an alarm action on the linked site forwarded to the site server. */
  command: string
  /** The linked site's alarm (raised before the site was linked). */
  alarm: string
  /** A site batch id the site server sent a chunk of. */
  batch: string
}

async function expect(res: LightMyRequestResponse, status: number, what: string): Promise<Record<string, unknown>> {
  if (res.statusCode !== status) throw new Error(`fleet link seeding, ${what}: ${res.statusCode} ${res.body.slice(0, 400)}`)
  return /json/.test(String(res.headers['content-type'] ?? '')) ? (res.json() as Record<string, unknown>) : {}
}

/** A link request of an enrolled site server (its credential, the protocol and schema headers). */
export function linkRequest(h: Harness, credential: Credential, link: { credential: string }) {
  return (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    h.inject(
      { org: credential.org, bearer: link.credential },
      { method, url, headers: { ...LINK_HEADERS, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) },
    )
}

/**
 * Cloud mode: a second site with equipment and an alarm, a site server registered for it and enrolled with its code
 * (POST /api/link/enrol), then at work: the seed, a push of three changes as a site's outbox makes them (an alarm event
 * that applies; a controller and the site edited on the site with no base, which lose to the cloud's rows: two conflict
 * records), a pull, a heartbeat, a historian chunk, and an acknowledge on the linked site's alarm (202, a command).
 */
export async function seedCloudLink(h: Harness, owner: Credential, prefix: string): Promise<CloudLink> {
  const call = (method: string, url: string, payload?: unknown) => h.inject(owner, { method: method as 'GET', url, payload: payload as object })
  const site = `${prefix}-LINK`
  await expect(await call('POST', '/api/sites', { code: site, name: `${prefix} linked plant` }), 201, 'site')
  const plc = await expect(
    await call('POST', `/api/sites/${site}/controllers`, {
      name: `${prefix} linked PLC`,
      platform: 1,
      assetNumber: `${prefix}-L1`,
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.16' },
    }),
    201,
    'controller',
  )
  const instance = `${prefix}-LCV-1`
  await expect(
    await call('POST', `/api/sites/${site}/instances`, {
      id: instance,
      name: 'Linked conveyor',
      typeId: 'conveyor',
      assetNumber: `${prefix}-LI1`,
      controllerId: plc.id,
    }),
    201,
    'instance',
  )
  const raised = await expect(
    await call('POST', `/api/sites/${site}/alarms/events`, {
      events: [
        {
          eventId: `${prefix}-le1`,
          instanceId: instance,
          condition: 'HI_TEMP',
          priority: 'high',
          state: 'active',
          occurredAt: new Date(h.clock.now() - 60_000).toISOString(),
        },
      ],
    }),
    200,
    'alarm event',
  )
  const alarm = String((raised.results as Array<{ alarmId: string }>)[0]!.alarmId)

  const registered = await expect(await call('POST', '/api/admin/site-servers', { name: `${prefix} site server`, sites: [site] }), 201, 'register')
  const enrolled = await expect(
    await h.inject(undefined, {
      method: 'POST',
      url: '/api/link/enrol',
      host: `${owner.org.slug}.localhost`,
      payload: { code: registered.enrolmentCode, orgId: null, protocol: LINK_PROTOCOL, schema: SCHEMA_VERSION },
    }),
    200,
    'enrol',
  )
  const link = { credential: String(enrolled.credential) }
  const as = linkRequest(h, owner, link)
  await expect(await as('GET', `/api/link/seed?site=${encodeURIComponent(site)}`), 200, 'seed')

  // The cloud's own images of the linked site and its controller (its outbox rows), edited on the site as if it had
  // created them (base null): the cloud holds other content under those keys, so both lose.
  const cloudImage = async (table: string) => {
    const row = await h.handle.db
      .selectFrom('link_outbox')
      .select('row')
      .where('org_id', '=', owner.org.id)
      .where('table_name', '=', table)
      .where('site_code', '=', site)
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow()
    return JSON.parse(row.row) as Record<string, unknown>
  }
  const epoch = randomBytes(16).toString('hex')
  const at = h.clock.now()
  const controller: Record<string, unknown> = { ...(await cloudImage('controllers')), name: `${prefix} PLC renamed on site`, updated_at: at }
  const siteRow = { ...(await cloudImage('sites')), name: `${prefix} renamed on site`, updated_at: at }
  const event = linkedAlarmEvent(owner.org.id, site, instance, `${prefix}-site-e1`, at)
  const changes: Change[] = [
    { seq: 1, tx: 0, table: 'alarm_events', site, key: [site, event.event_id], op: 'upsert', row: event as Change['row'], base: null, origin: '', at },
    {
      seq: 2,
      tx: 0,
      table: 'controllers',
      site,
      key: [site, String(controller.id)],
      op: 'upsert',
      row: controller as Change['row'],
      base: null,
      origin: '',
      at,
    },
    { seq: 3, tx: 0, table: 'sites', site, key: [site], op: 'upsert', row: siteRow as Change['row'], base: null, origin: '', at },
  ]
  const pushed = await expect(await as('POST', '/api/link/push', { epoch, after: { tx: 0, seq: 0 }, changes }), 200, 'push')
  if (pushed.conflicts !== 2 || pushed.applied !== 1) throw new Error(`fleet link seeding, push: ${JSON.stringify(pushed)}`)
  const pulled = await expect(await as('GET', '/api/link/pull?tx=0&seq=0&limit=1000'), 200, 'pull')
  await expect(
    await as('PUT', '/api/link/heartbeat', { state: 'online', lastError: null, backlog: { items: 0, bytes: 0, oldestAt: null }, pulledTo: pulled.next }),
    204,
    'heartbeat',
  )
  const batch = `bat_${prefix}_link`
  const samples: Array<[string, string, number, number | null, string | null, number]> = [[instance, 'speed', at - 60_000, 1.25, null, 192]]
  await expect(await as('PUT', `/api/link/historian/${batch}/chunks/0`, { site, samples, sha256: chunkDigest(samples) }), 200, 'historian chunk')
  const forwarded = await expect(await call('POST', `/api/sites/${site}/alarms/${alarm}/acknowledge`, { comment: 'from head office' }), 202, 'forwarded action')
  const listed = await expect(await call('GET', '/api/link/conflicts?unresolved=true'), 200, 'conflicts')
  const conflicts = (listed.items as Array<{ id: string }>).map((c) => c.id)
  return { site, serverId: String(registered.id), credential: link.credential, epoch, conflicts, command: String(forwarded.commandId), alarm, batch }
}

export interface SiteLink {
  conflict: string
  command: string
}

/**
 * Site mode: what the cloud's pull brings a site server of the link's own records, applied as the agent applies a
 * pull (applyPull): a conflict record of a controller edit of this site and a pending command on `alarm`.
 */
export async function seedSiteLink(h: Harness, orgId: string, o: { site: string; controller: string; alarm: string; prefix: string }): Promise<SiteLink> {
  const at = h.clock.now()
  const serverId = newId('srv', at)
  const conflict = newId('lcf', at)
  const command = newId('cmd', at)
  const controller = await h.handle.db
    .selectFrom('controllers')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('site_code', '=', o.site)
    .where('id', '=', o.controller)
    .executeTakeFirstOrThrow()
  const image = JSON.parse(JSON.stringify(controller, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as Record<string, unknown>
  const conflictRow = {
    org_id: orgId,
    id: conflict,
    server_id: serverId,
    table_name: 'controllers',
    site_code: o.site,
    row_key: JSON.stringify([o.site, o.controller]),
    losing_op: 'upsert',
    losing_row: JSON.stringify({ ...image, name: `${o.prefix} PLC renamed on site` }),
    losing_at: at - 2000,
    winning_op: 'upsert',
    winning_row: JSON.stringify(image),
    recorded_at: at - 1000,
    resolved_at: null,
    resolved_by: null,
    resolution: null,
  }
  const commandRow = {
    org_id: orgId,
    id: command,
    site_code: o.site,
    alarm_id: o.alarm,
    action: 'acknowledge',
    body: JSON.stringify({ comment: 'from head office' }),
    actor: JSON.stringify({ kind: 'apiKey', subject: 'key_head_office', role: 'admin' }),
    created_at: at - 500,
    status: 'pending',
    result: null,
    settled_at: null,
  }
  const changes: Change[] = [
    { seq: 1, tx: 0, table: 'link_conflicts', site: o.site, key: [conflict], op: 'upsert', row: conflictRow, base: null, origin: serverId, at: at - 1000 },
    { seq: 2, tx: 0, table: 'link_commands', site: o.site, key: [command], op: 'upsert', row: commandRow, base: null, origin: '', at: at - 500 },
  ]
  const result = await applyPull({ handle: h.handle, clock: h.clock }, { orgId, serverId, sites: [o.site], epoch: randomBytes(16).toString('hex'), changes })
  if (result.applied !== 2) throw new Error(`fleet link seeding, pull: ${JSON.stringify(result)}`)
  return { conflict, command }
}

/**
 * A PostgreSQL database of its own, migrated, for a second server in one test process (a site server beside a cloud
 * cell: `postgresUrl()` is one database per process, which a site server would share with the cell's organisations).
 * The harness settings that point an application at it (and its app role, as every PostgreSQL test runs).
 */
export async function ownPostgresDatabase(): Promise<Record<string, string>> {
  const admin = process.env.TEST_DATABASE_URL
  if (!admin) throw new Error('PostgreSQL tests need TEST_DATABASE_URL')
  const url = await createTestDatabase(admin)
  const handle = await connectDatabase(url, { poolSize: 1 })
  try {
    await migrateToLatest(handle.db)
    if (!rowLevelSecurityInTests()) return { DATABASE_URL: url }
    await ensureAppRole(admin)
    await grantAppRole(handle.db, TEST_APP_ROLE)
    return { DATABASE_URL: url, SITEGRID_DATABASE_APP_URL: appRoleUrl(url) }
  } finally {
    await handle.close()
  }
}

/**
 * Rows per table of the link's and the historian's tables (`link_*`, `historian_*`) for one organisation: what a
 * refused link request must leave as it was. Read from the schema, so a table added later is counted too.
 */
export async function linkTableCounts(db: Harness['handle']['db'], orgId: string): Promise<Record<string, number>> {
  const tables = (await db.introspection.getTables())
    .filter((t) => /^(link_|historian_)/.test(t.name) && t.columns.some((c) => c.name === 'org_id'))
    .map((t) => t.name)
    .sort()
  const out: Record<string, number> = {}
  for (const table of tables) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where org_id = ${orgId}`.execute(db)
    out[table] = Number(rows[0]!.n)
  }
  return out
}

/**
 * PostgreSQL: waits until the organisation's outbox rows are below the cluster-wide xmin, i.e. readable by a pull (a
 * change is read only once no older transaction can still commit before it; other tests' transactions share the
 * server). SQLite: at once. As src/modules/fleet/outbox/outbox.test.ts's `settled`.
 */
export async function outboxSettled(db: Harness['handle']['db'], dialect: 'sqlite' | 'postgres', orgId: string): Promise<void> {
  if (dialect === 'sqlite') return
  for (let i = 0; i < 600; i++) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from link_outbox
      where org_id = ${orgId} and tx >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint`.execute(db)
    if (rows[0]?.n === 0) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('the outbox did not settle in 30 s')
}

/** An alarm event of the linked site as a site server's outbox carries it (every column of alarm_events). */
export function linkedAlarmEvent(orgId: string, site: string, instance: string, eventId: string, at: number) {
  return {
    org_id: orgId,
    site_code: site,
    event_id: eventId,
    alarm_id: null,
    instance_id: instance,
    condition: 'LO',
    priority: 'low',
    is_active: 1,
    occurred_at: at - 1000,
    received_at: at,
    message: 'raised on the site server',
    value: 1.5,
    limit_value: 2,
    effect: 'activated',
  }
}

/** A promise and the function that settles it: holds a transaction open until the test lets it go on. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}
