// Issue 24, left open: SQLite stores any value in any column, so a crafted package's text in an integer column was
// stored there and refused by PostgreSQL. Every value is checked against its column's declared type before a row is
// written: the same 422 on both databases, naming the part, the row and the column, and the organisation unchanged.
// Then (session 18) the rules of the table's area, which a value of the right type can still break: a crafted
// `node_type` of 99 or a site status of 42 was stored and read back against the spec's bounds, and a node's study of
// the wrong shape made every read of the site's nodes a 500.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { harness, testDialects } from '../../../test/harness.ts'
import { NO_RATE_LIMIT, seedTenant, snapshotDiff, snapshotOrg } from '../../../test/hardening/support.ts'
import { repack, unpack } from '../../../test/support/tenant-package.ts'

type Case = [
  name: string,
  part:
    | 'sites'
    | 'controllers'
    | 'instances'
    | 'electrical_nodes'
    | 'electrical_edges'
    | 'memberships'
    | 'domain_bindings'
    | 'alarms'
    | 'alarm_events'
    | 'alarm_history'
    | 'historian_tag_marks'
    | 'historian_batches',
  column: string,
  value: unknown,
  rule: 'type' | 'not null' | 'field',
  /** type: what the column holds; field: the API field and its rule (from the part's first row where it names a value of it). */
  expected: string | undefined | ((first: Record<string, unknown>) => string),
]

const INT4 = 'an integer from -2147483648 to 2147483647'
const CASES: Case[] = [
  ['text in an integer column', 'controllers', 'port', 'forty-four', 'type', INT4],
  ['digits as text in an integer column', 'controllers', 'port', '44818', 'type', INT4],
  ['a number in a text column', 'controllers', 'ip_address', 1234, 'type', 'a string'],
  ['a float in an integer column', 'controllers', 'poll_interval_ms', 1.5, 'type', INT4],
  ['an object in a text column', 'controllers', 'name', { a: 1 }, 'type', 'a string'],
  ['an array in a text column', 'controllers', 'name', ['a'], 'type', 'a string'],
  ['a boolean in an integer column', 'controllers', 'platform', true, 'type', INT4],
  ['null in a NOT NULL column', 'controllers', 'ip_address', null, 'not null', undefined],
  ['an integer past the integer column', 'controllers', 'timeout_ms', 2 ** 40, 'type', INT4],
  [
    'an integer past 2^53 in a bigint column',
    'controllers',
    'created_at',
    2 ** 63,
    'type',
    `an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
  ],
  ['text that is not JSON in a JSON column', 'instances', 'config', '{not json', 'type', 'JSON text'],
  ["text that is not JSON in a node's study parameters", 'electrical_nodes', 'study', '{not json', 'type', 'JSON text'],
  [
    'a node type past the codes',
    'electrical_nodes',
    'node_type',
    99,
    'field',
    'nodeType must be one of 0 (UtilitySupply), 1 (Generator), 2 (PowerTransformer), 3 (Switchboard), 4 (MotorControlCentre), 5 (CircuitBreaker), 6 (FuseSwitch), 7 (Disconnector), 8 (Motor), 9 (VariableSpeedDrive), 10 (FeederLoad), 11 (CapacitorBank), 12 (EarthingPoint), 13 (UpsBattery)',
  ],
  ["a node's study that is not an object", 'electrical_nodes', 'study', '[1,2]', 'field', 'study must be object'],
  [
    "a node's study of a parameter its type has not",
    'electrical_nodes',
    'study',
    '{"cableLengthM":"x"}',
    'field',
    'study/cableLengthM is not a known property',
  ],
  ["a node's metadata that is not an object", 'electrical_nodes', 'metadata', '"text"', 'field', 'metadata must be object'],
  ['a negative rated voltage', 'electrical_nodes', 'rated_voltage_v', -1, 'field', 'ratedVoltageV must be >= 0'],
  [
    'an edge type past the codes',
    'electrical_edges',
    'edge_type',
    9,
    'field',
    'edgeType must be one of 0 (Cable), 1 (OverheadLine), 2 (BusbarLink), 3 (TransformerWinding), 4 (BusTie)',
  ],
  [
    'a controller platform past the codes',
    'controllers',
    'platform',
    77,
    'field',
    'platform must be one of 0 (Generic), 1 (RockwellLogix), 2 (RockwellPlc5Slc), 3 (SiemensS7), 4 (ModbusTcp), 5 (OpcUa), 6 (SchneiderModicon)',
  ],
  ['a port past 65535', 'controllers', 'port', 70_000, 'field', 'connection/port must be <= 65535'],
  [
    'an address that is no address',
    'controllers',
    'ip_address',
    'not an address!',
    'field',
    'connection/ipAddress must be an IPv4 or IPv6 address or a host name',
  ],
  ['a poll interval of 0', 'controllers', 'poll_interval_ms', 0, 'field', 'connection/pollIntervalMs must be >= 100'],
  ["an instance's config that is not an object", 'instances', 'config', '[1]', 'field', 'config must be object'],
  ['a tag mapped to a number', 'instances', 'tag_mappings', '{"T1":5}', 'field', 'tagMappings/T1 must be string'],
  ['a tag count that is not the mappings', 'instances', 'tag_count', 7, 'field', 'tagCount must be the number of tagMappings (1)'],
  [
    'a site status past the codes',
    'sites',
    'status',
    42,
    'field',
    'status must be one of 0 (Planned), 1 (Commissioning), 2 (Operational), 3 (Maintenance), 4 (Standby), 5 (Decommissioned)',
  ],
  ['a time zone that is none', 'sites', 'time_zone', 'Mars/Olympus', 'field', 'timeZone must be an IANA time zone such as Europe/Paris or UTC'],
  ['a member role that is none', 'memberships', 'role', 'god', 'field', 'role must be one of owner, admin, member'],
  ['a membership status that is none', 'memberships', 'status', 'weird', 'field', 'status must be one of pending, active, revoked'],
  // The harness's base domain is `localhost`: a binding may not take the box's own name, an address or the base domain.
  ['a domain of one label', 'domain_bindings', 'domain', 'localhost', 'field', 'domain must have at least two labels (example.com)'],
  ['an IP address as a domain', 'domain_bindings', 'domain', '127.0.0.1', 'field', 'domain must be a host name, not an IP address'],
  ['a domain under the base domain', 'domain_bindings', 'domain', 'plant.localhost', 'field', 'domain must not be the base domain localhost or under it'],
  ['a binding neither enabled nor disabled', 'domain_bindings', 'is_enabled', 2, 'field', 'isEnabled must be 0 or 1'],
  // The alarm tables have no create body: their rules are the ingestion's and the operators' (alarms/row-rules.ts).
  ['an alarm priority that is none', 'alarms', 'priority', 'urgent', 'field', 'priority must be one of critical, high, medium, low'],
  ['an alarm flag of 2', 'alarms', 'is_active', 2, 'field', 'isActive must be 0 or 1'],
  ['an alarm state its flags do not give', 'alarms', 'state', 'normal', 'field', 'state must be active_unacknowledged, the state its flags give'],
  [
    "an open alarm without its tag's key (a second open alarm for the tag)",
    'alarms',
    'active_key',
    null,
    'field',
    (first) => `activeKey must be ${String(first.active_key)}: an open alarm holds its tag's key`,
  ],
  ['an alarm message past 500 characters', 'alarms', 'message', 'm'.repeat(501), 'field', 'message must be 0 to 500 characters, or null'],
  ['an event effect that is none', 'alarm_events', 'effect', 'boom', 'field', 'effect must be one of activated, suppressed, returned, none'],
  ['an event priority that is none', 'alarm_events', 'priority', 'urgent', 'field', 'priority must be one of critical, high, medium, low'],
  [
    'a history action that is none',
    'alarm_history',
    'action',
    'exploded',
    'field',
    'action must be one of activated, returned, acknowledged, shelved, unshelved, shelve_expired, removed_from_service, returned_to_service',
  ],
  [
    'a history state that is none',
    'alarm_history',
    'to_state',
    'bogus',
    'field',
    'toState must be one of active_unacknowledged, active_acknowledged, returned_unacknowledged, normal, shelved, out_of_service',
  ],
  ['a tag mark that is no interpolation', 'historian_tag_marks', 'interpolation', 'cubic', 'field', 'interpolation must be one of "linear", "step"'],
  ['a batch status that is none', 'historian_batches', 'status', 'weird', 'field', 'status must be one of running, complete, failed, open'],
  ['an open batch of an import', 'historian_batches', 'status', 'open', 'field', 'status may be open for a batch of format live only'],
  ['a negative count of stored samples', 'historian_batches', 'samples_stored', -1, 'field', 'samplesStored must be >= 0'],
  ['a history actor that is none', 'alarm_history', 'actor_kind', 'root', 'field', 'actorKind must be one of apiKey, user, sitePin, link, cli, system'],
]

for (const dialect of testDialects()) {
  describe(`${dialect}: a tenant package's values are checked against their columns' types (issue 24)`, () => {
    it('a wrong-type, out-of-range or null value in a crafted row answers 422 PackageInvalid naming the part, row and column on both databases, and nothing is written', async (t) => {
      const h = await harness(t, dialect, NO_RATE_LIMIT)
      const tenant = await seedTenant(h, 'CV')
      const base = `/api/admin/orgs/${tenant.ids.slug}/tenant`
      const exported = await h.inject(tenant.owner, { method: 'GET', url: `${base}/export` })
      assert.equal(exported.statusCode, 200)
      const { header, parts } = unpack(exported.rawPayload)
      const count = async (table: string) =>
        Number(
          (await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where org_id = ${tenant.org.id}`.execute(h.handle.db)).rows[0]!.n,
        )
      const before = await snapshotOrg(h, tenant.org.id)
      const counts = { controllers: await count('controllers'), instances: await count('instances'), alarms: await count('alarms') }
      for (const [name, part, column, value, rule, expected] of CASES) {
        const changed = new Map([...parts].map(([k, rows]) => [k, structuredClone(rows)]))
        const rows = changed.get(part)!
        const first = rows[0]!
        // A new record (its own key and asset number), so that a stored one would show in the count; a part keyed
        // otherwise (sites, edges) has its first record changed, which the organisation's snapshot would show.
        const line =
          'id' in first
            ? rows.push({ ...first, id: `${part}-crafted`, ...('asset_number' in first ? { asset_number: 'CV-crafted' } : {}), [column]: value })
            : 1
        if (line === 1) rows[0] = { ...first, [column]: value }
        const staged = await h.inject(tenant.owner, {
          method: 'PUT',
          url: `${base}/import/package`,
          payload: await repack(header, changed),
          headers: { 'content-type': 'application/gzip' },
        })
        assert.equal(staged.statusCode, 200, `${name}: ${staged.body}`)
        const res = await h.inject(tenant.owner, { method: 'POST', url: `${base}/import?force=true` })
        const body = res.json()
        const broken =
          rule === 'field'
            ? `breaks a rule of its field: ${typeof expected === 'function' ? expected(first) : expected}`
            : `breaks a ${rule} rule of this server's table${expected ? ` (it holds ${expected})` : ''}`
        assert.deepEqual(
          [res.statusCode, body.code, body.reason, body.part, body.row, body.column, body.rule],
          [422, 'PackageInvalid', `row ${line} of part ${part}: ${column} ${broken}`, part, line, column, rule],
          `${name}: ${res.body}`,
        )
        assert.deepEqual(
          { controllers: await count('controllers'), instances: await count('instances'), alarms: await count('alarms') },
          counts,
          `${name}: nothing written`,
        )
      }
      // The last crafted package stays staged (a refused import leaves it there to be replaced); nothing else moved.
      assert.deepEqual(
        snapshotDiff(before, await snapshotOrg(h, tenant.org.id)).filter((d) => !d.startsWith('tenant_import_')),
        [],
      )
      const untouched = await repack(header, parts)
      assert.equal(
        (await h.inject(tenant.owner, { method: 'PUT', url: `${base}/import/package`, payload: untouched, headers: { 'content-type': 'application/gzip' } }))
          .statusCode,
        200,
      )
      assert.equal((await h.inject(tenant.owner, { method: 'POST', url: `${base}/import?force=true` })).statusCode, 200, 'the package as exported imports')
    })
  })
}
