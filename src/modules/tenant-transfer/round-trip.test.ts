import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, sleep, testDialects, type Harness } from '../../../test/harness.ts'
import { activeKey } from '../alarms/lifecycle.ts'
import { historianStoredParts } from '../historian/transfer.ts'
import type { Org } from '../../identity.ts'
import { EXCLUDED_TABLES, EXPORTED_TABLES } from './tables.ts'

type Cred = { org: Org; apiKey: string }

const T0 = Date.UTC(2025, 2, 1, 8, 30, 0, 123)

/**
 * One organisation holding every kind of record a package carries, written straight to the tables (each area's
 * own routes are tested in its module) except the historian batch, imported through its route so the batch row
 * and samples are what an import really writes. Awkward values on purpose: non-ASCII text, fractions, nulls,
 * negative numbers, JSON text, large epoch milliseconds.
 */
async function buildOrganisation(h: Harness, cred: Cred): Promise<void> {
  const db = h.handle.db
  const org = cred.org.id
  for (const [code, name] of [
    ['RT', 'Wash plant — Süd'],
    ['RT-B', 'Rail loadout'],
  ] as const) {
    const res = await h.inject(cred, { method: 'POST', url: '/api/sites', payload: { code, name, timeZone: 'Australia/Sydney', location: 'NSW', status: 2 } })
    assert.equal(res.statusCode, 201, res.body)
  }
  await db
    .insertInto('controllers')
    .values({
      org_id: org,
      site_code: 'RT',
      id: 'plc-1',
      name: 'PLC «1»',
      platform: 2,
      firmware_version: '33.011',
      asset_number: 'A-1',
      protocol: 'cip',
      ip_address: '10.0.0.1',
      port: 44818,
      cip_path: '1,0',
      poll_interval_ms: 250,
      timeout_ms: 5000,
      retry_delay_ms: 5000,
      max_retries: 3,
      edge_id: null,
      edge_plc_id: null,
      created_at: T0,
      updated_at: T0 + 1,
    })
    .execute()
  for (const [i, id] of ['ins_pump', 'ins_motor'].entries()) {
    await db
      .insertInto('instances')
      .values({
        org_id: org,
        site_code: 'RT',
        id,
        name: `${id} №${i}`,
        type_id: 'generic',
        type_version: i === 0 ? '1.2' : null,
        asset_number: `I-${i}`,
        controller_id: 'plc-1',
        area: i === 0 ? 'Zone A' : null,
        tag_mappings: JSON.stringify({ p: `Pump_${i}.PV` }),
        tag_count: 1,
        config: JSON.stringify({ nested: { x: [1, 2.5, null] } }),
        created_at: T0,
        updated_at: T0,
      })
      .execute()
  }
  for (const [id, type, v, curve] of [
    ['SUP', 0, 11000, null],
    ['TX1', 2, 415.5, null],
    ['CB1', 4, 415, 'IEC_SI'],
    ['M1', 6, null, null],
  ] as const) {
    await db
      .insertInto('electrical_nodes')
      .values({
        org_id: org,
        site_code: 'RT',
        id,
        name: id === 'M1' ? null : `Node ${id}`,
        node_type: type,
        rated_voltage_v: v,
        rated_current_a: id === 'CB1' ? 630 : null,
        rated_power_kw: id === 'TX1' ? 1500.25 : null,
        impedance_ohms: id === 'TX1' ? 0.0125 : null,
        cable_size: id === 'M1' ? '95mm²' : null,
        cable_length_m: id === 'M1' ? 120.5 : null,
        protection_curve: curve,
        protection_pickup_a: curve ? 400 : null,
        protection_tms: curve ? 0.1 : null,
        description: id === 'SUP' ? 'Grid\nincomer' : null,
        tag_bindings: JSON.stringify(id === 'M1' ? { current: 'ins_motor.I' } : {}),
        metadata: JSON.stringify({ id, ok: true }),
        study: JSON.stringify(id === 'TX1' ? { ukPercent: 6 } : {}),
        created_at: T0,
        updated_at: T0 + 5,
      })
      .execute()
  }
  for (const [s, t, e] of [
    ['SUP', 'TX1', 1],
    ['TX1', 'CB1', 0],
    ['CB1', 'M1', 0],
  ] as const) {
    await db.insertInto('electrical_edges').values({ org_id: org, site_code: 'RT', source_id: s, target_id: t, edge_type: e, created_at: T0 }).execute()
  }
  // Alarms: one acknowledged and cleared, one shelved, one still active; their events and history.
  const alarms = [
    {
      id: 'alm_1',
      instance_id: 'ins_pump',
      condition: 'HI',
      state: 'normal',
      is_active: 0,
      is_acknowledged: 1,
      shelved_until: null,
      active_key: null,
      message: 'Pressure high',
      value: 10.75,
    },
    {
      id: 'alm_2',
      instance_id: 'ins_pump',
      condition: 'LO',
      state: 'shelved',
      is_active: 1,
      is_acknowledged: 0,
      shelved_until: T0 + 3_600_000,
      active_key: activeKey('ins_pump', 'LO'),
      message: null,
      value: -3.5,
    },
    {
      id: 'alm_3',
      instance_id: 'ins_motor',
      condition: 'TRIP',
      state: 'active_unacknowledged',
      is_active: 1,
      is_acknowledged: 0,
      shelved_until: null,
      active_key: activeKey('ins_motor', 'TRIP'),
      message: 'Motor trip ⚡',
      value: null,
    },
  ]
  for (const [i, a] of alarms.entries()) {
    await db
      .insertInto('alarms')
      .values({
        org_id: org,
        site_code: 'RT',
        ...a,
        priority: i === 2 ? 'critical' : 'high',
        limit_value: a.value === null ? null : 9.5,
        is_out_of_service: 0,
        activation_count: i + 1,
        raised_at: T0 + i,
        last_event_at: T0 + 10 + i,
        changed_at: T0 + 20 + i,
        created_at: T0 + i,
        version: 3,
      })
      .execute()
    await db
      .insertInto('alarm_events')
      .values({
        org_id: org,
        site_code: 'RT',
        event_id: `evt_${i}`,
        alarm_id: a.id,
        instance_id: a.instance_id,
        condition: a.condition,
        priority: 'high',
        is_active: 1,
        occurred_at: T0 + i,
        received_at: T0 + i + 7,
        message: a.message,
        value: a.value,
        limit_value: 9.5,
        effect: 'activated',
      })
      .execute()
    const history = [
      {
        seq: 1,
        action: 'activated',
        from_state: 'normal',
        to_state: 'active_unacknowledged',
        actor_kind: 'system',
        actor_id: 'ingest',
        comment: null,
        event_id: `evt_${i}`,
      },
      ...(a.id === 'alm_1'
        ? [
            {
              seq: 2,
              action: 'acknowledged',
              from_state: 'active_unacknowledged',
              to_state: 'active_acknowledged',
              actor_kind: 'apiKey',
              actor_id: 'key_x',
              comment: 'seen — ok',
              event_id: null,
            },
          ]
        : []),
      ...(a.id === 'alm_2'
        ? [
            {
              seq: 2,
              action: 'shelved',
              from_state: 'active_unacknowledged',
              to_state: 'shelved',
              actor_kind: 'user',
              actor_id: 'oid-1',
              comment: 'maintenance',
              event_id: null,
            },
          ]
        : []),
    ]
    for (const row of history)
      await db
        .insertInto('alarm_history')
        .values({ org_id: org, site_code: 'RT', alarm_id: a.id, at: T0 + 100 + row.seq, ...row })
        .execute()
  }
  // The shelve in force on alm_2: its window, from the `shelved` transition to the planned expiry.
  await db
    .insertInto('alarm_shelves')
    .values({ org_id: org, site_code: 'RT', alarm_id: 'alm_2', seq: 2, tag_key: activeKey('ins_pump', 'LO'), starts_at: T0 + 102, ends_at: T0 + 3_600_000 })
    .execute()
  await db
    .insertInto('alarm_events')
    .values({
      org_id: org,
      site_code: 'RT-B',
      event_id: 'evt_orphan',
      alarm_id: null,
      instance_id: 'ins_x',
      condition: 'HI',
      priority: 'low',
      is_active: 0,
      occurred_at: T0,
      received_at: T0,
      message: null,
      value: null,
      limit_value: null,
      effect: 'none',
    })
    .execute()
  await db
    .insertInto('memberships')
    .values([
      {
        org_id: org,
        account_id: 'oid-1',
        status: 'active',
        role: 'admin',
        email: 'ana@example.com',
        name: 'Ana Søren',
        requested_at: T0,
        decided_at: T0 + 1,
        decided_by: 'oid-0',
      },
      { org_id: org, account_id: 'oid-2', status: 'pending', role: null, email: null, name: null, requested_at: T0 + 2, decided_at: null, decided_by: null },
    ])
    .execute()
  await db
    .insertInto('domain_bindings')
    .values({ org_id: org, domain: `${cred.org.slug}.plant.example`, is_enabled: 1, created_at: T0, updated_at: T0, created_by: 'cli' })
    .execute()
  await h.mintKey(cred.org, 'member', { name: 'gateway' })

  const boundary = 'roundtripboundary'
  const part = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const file = (name: string, content: string) =>
    `--${boundary}\r\ncontent-disposition: form-data; name="${name}"; filename="${name}.csv"\r\n\r\n${content}\r\n`
  const trend =
    'timestamp,tag,value,quality\n2025-03-01T00:00:00.125Z,A,1.5,Good\n2025-03-01T00:00:01Z,A,Running,Good\n2025-03-01T00:00:02Z,B,-7.25,Bad\n2025-03-01T00:00:03Z,B,1e-7,Uncertain\n'
  const mapping = 'historian_tag,instance_id,tag_key,unit,scale\nA,ins_pump,p,bar,1\nB,ins_motor,i,A,2\n'
  const payload = `${part('site_id', 'RT')}${part('format', 'long')}${file('mapping_csv', mapping)}${file('trend_csv', trend)}--${boundary}--\r\n`
  const imported = await h.inject(cred, {
    method: 'POST',
    url: '/api/historian/import-batches',
    payload,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  })
  assert.equal(imported.statusCode, 201, imported.body)
  const retention = await h.inject(cred, { method: 'PUT', url: '/api/sites/RT/historian/retention', payload: { retentionDays: 400 } })
  assert.equal(retention.statusCode, 200, retention.body)
  const marked = await h.inject(cred, { method: 'PUT', url: '/api/sites/RT/historian/tags/ins_pump/p', payload: { interpolation: 'step' } })
  assert.equal(marked.statusCode, 200, marked.body)
}

/** Every exported table's rows of the organisation, columns sorted, rows in a canonical order; `drop` removes rows. */
async function tablesOf(h: Harness, orgId: string, drop: (table: string, row: Record<string, unknown>) => boolean = () => false) {
  const out: Record<string, string[]> = {}
  for (const table of EXPORTED_TABLES) {
    const rows = table.isStoredPart
      ? await collect(historianStoredParts[table.name]!.stream(h.handle.db, h.handle.dialect, orgId, null))
      : ((await h.handle.db
          .selectFrom(table.name as 'sites')
          .selectAll()
          .where('org_id', '=', orgId)
          .execute()) as Array<Record<string, unknown>>)
    out[table.name] = rows
      .filter((r) => !drop(table.name, r))
      .map((r) => {
        const kept = Object.keys(r)
          .sort()
          .filter((c) => !table.omit?.includes(c))
          .map((c) => [c, normalise(r[c])])
        return JSON.stringify(kept)
      })
      .sort()
  }
  return out
}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const row of rows) out.push(row)
  return out
}

/** bigint columns arrive as numbers on both drivers here; anything else that is numeric text would show as a difference. */
const normalise = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v)

async function exportOf(h: Harness, cred: Cred): Promise<Buffer> {
  const res = await h.inject(cred, { method: 'GET', url: `/api/admin/orgs/${cred.org.slug}/tenant/export` })
  assert.equal(res.statusCode, 200, res.body)
  return res.rawPayload
}

/** Creates the organisation (same id) on `target`, stages and applies `pkg`; answers the operator's credential. */
async function importInto(target: Harness, org: Org, pkg: Buffer): Promise<Cred> {
  await target.handle.db.insertInto('orgs').values({ id: org.id, slug: org.slug, name: org.name, created_at: target.clock.now() }).execute()
  const operator = await target.mintKey(org, 'owner', { name: 'operator of the target' })
  const cred = { org, apiKey: operator.plaintext }
  const staged = await target.inject(cred, {
    method: 'PUT',
    url: `/api/admin/orgs/${org.slug}/tenant/import/package`,
    headers: { 'content-type': 'application/gzip' },
    payload: pkg,
  })
  assert.equal(
    staged.statusCode,
    200,
    `${staged.body} ${target
      .logs()
      .filter((l) => Number(l.level) >= 50)
      .map((l) => JSON.stringify(l.err ?? l.msg))
      .join('\n')}`,
  )
  const applied = await target.inject(cred, { method: 'POST', url: `/api/admin/orgs/${org.slug}/tenant/import` })
  assert.equal(
    applied.statusCode,
    200,
    `${applied.body} ${target
      .logs()
      .filter((l) => Number(l.level) >= 50)
      .map((l) => JSON.stringify(l.err ?? l.msg))
      .join('\n')}`,
  )
  return cred
}

const notOperator = (name: string) => (table: string, row: Record<string, unknown>) => table === 'api_keys' && row.name === name

if (testDialects().length === 2) {
  describe('round trip of every kind of record: SQLite site server → PostgreSQL cloud → SQLite', () => {
    it("every exported table's rows of the organisation arrive field by field, both ways", { timeout: 300_000 }, async (t) => {
      const site = await harness(t, 'sqlite', { SITEGRID_MODE: 'site' })
      const { org, key } = await site.orgWithKey('owner')
      await buildOrganisation(site, { org, apiKey: key })
      const pkg = await exportOf(site, { org, apiKey: key })
      await sleep(200) // the owner key's lastUsedAt is written off the request path
      const original = await tablesOf(site, org.id)
      // Every exported table holds rows, so the comparison covers every kind of record.
      for (const [table, rows] of Object.entries(original)) assert.ok(rows.length > 0, `${table} has rows in the source`)
      assert.ok(Object.keys(EXCLUDED_TABLES).every((t) => !(t in original)))

      const cloud = await harness(t, 'postgres', { SITEGRID_MODE: 'cloud' })
      const cloudCred = await importInto(cloud, org, pkg)
      const inCloud = await tablesOf(cloud, org.id, notOperator('operator of the target'))
      for (const table of Object.keys(original)) assert.deepEqual(inCloud[table], original[table], `${table}: SQLite → PostgreSQL`)

      const back = await harness(t, 'sqlite', { SITEGRID_MODE: 'site' })
      await importInto(back, org, await exportOf(cloud, cloudCred))
      const home = await tablesOf(back, org.id, notOperator('operator of the target'))
      for (const table of Object.keys(original)) assert.deepEqual(home[table], original[table], `${table}: PostgreSQL → SQLite`)

      // The moved data answers through the routes on the target, too.
      const series = await cloud.inject(cloudCred, { url: '/api/sites/RT/historian/series?instanceId=ins_motor&tag=i' })
      assert.deepEqual(
        series.json().samples.map((s: { value: number }) => s.value),
        [-14.5, 2e-7],
      )
      const marks = await cloud.inject(cloudCred, { url: '/api/sites/RT/historian/tags' })
      assert.deepEqual(
        marks.json().items.map((m: { instanceId: string; tag: string; interpolation: string }) => [m.instanceId, m.tag, m.interpolation]),
        [['ins_pump', 'p', 'step']],
      )
    })
  })
}
