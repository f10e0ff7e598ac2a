import type { Dialect } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import type { RuleBreak } from '../../http/validation.ts'
import { alarmEventRowBreak, alarmHistoryRowBreak, alarmRowBreak, alarmShelveRowBreak } from '../alarms/row-rules.ts'
import { controllerRowBreak } from '../controllers/row-rules.ts'
import { edgeRowBreak, nodeRowBreak } from '../electrical/row-rules.ts'
import { batchRowBreak, retentionRowBreak, tagMarkRowBreak } from '../historian/row-rules.ts'
import { sampleValueRule } from '../historian/sample-value.ts'
import { INSTANCE_LIMITS } from '../instances/limits.ts'
import { instanceRowBreak } from '../instances/row-rules.ts'
import { domainBindingRowBreak, membershipRowBreak } from '../orgs/row-rules.ts'
import { siteRowBreak } from '../sites/row-rules.ts'
import type { Row, TableShape } from './introspect.ts'

/**
 * A part whose rows are not one table's rows (the historian's samples are stored as series + points, but packages
 * keep one row a sample): its area reads and writes it; `shape` is the package's row shape.
 */
export interface StoredPart {
  shape: TableShape
  present(db: Db, dialect: Dialect): Promise<boolean>
  stream(db: Db, dialect: Dialect, orgId: string, siteCode: string | null): AsyncGenerator<Row>
  hasAnyRow(db: Db, orgId: string): Promise<boolean>
  findExisting(db: Db, dialect: Dialect, orgId: string, rows: Row[]): Promise<Row[]>
  /** `memo`: one map per import and part, for the part's own use across its batches (e.g. ids it resolved). */
  upsert(db: Db, orgId: string, rows: Row[], memo: Map<string, unknown>): Promise<void>
}

/**
 * The stored parts by part name. The areas that own them plug them in (app.ts and cli/ pass them to
 * createTenantTransferService): the transfer imports no area's service or store, only the areas' row rules
 * (`rules` below, pure functions), which the fleet link reads from this table too.
 */
export type StoredParts = Readonly<Record<string, StoredPart>>

/**
 * What a tenant package holds, in dependency order (a row's foreign keys point only at earlier parts).
 * `tables.test.ts` fails when a table with an `org_id` column is neither here nor in EXCLUDED, so a new area
 * decides explicitly whether its data moves with the organisation.
 */
export interface ExportedTable {
  name: string
  /** `site`: rows carry `site_code`, and a one-site export keeps that site's rows. `org`: organisation-wide exports only. */
  scope: 'site' | 'org'
  /** Columns never written to a package (secrets and verifiers). */
  omit?: readonly string[]
  /** Fills omitted NOT NULL columns on import. */
  restore?: (row: Record<string, unknown>) => Record<string, unknown>
  /** Text columns that hold JSON (the `Database` interface's "JSON" columns): a package's value must parse. */
  json?: readonly string[]
  /**
   * The rules of the area that owns the table, which a row must keep however it arrives (a package, the fleet link):
   * its first broken rule in the API's terms, once every value fits its column. Without them a crafted row was stored
   * with a `nodeType` of 99 or a study a read could not take (a 500).
   */
  rules?: (row: Row, server: RowRulesContext) => RuleBreak | undefined
  /** Set when the part is not stored as the table `name`: its StoredPart is plugged in (StoredParts). */
  isStoredPart?: true
}

/** What the row rules know of this server: its base domain (the tenant transfer's; the fleet link carries no binding). */
export interface RowRulesContext {
  baseDomain?: string
}

/**
 * A series key (a sample's, a tag mark's) as an instance holds it (instances/limits.ts, the fleet link's chunks too):
 * a longer one made PostgreSQL's key index refuse the row, a 500. The historian has no row rules for samples.
 */
function seriesKeyBreak(row: Row): RuleBreak | undefined {
  for (const [column, pointer, max] of [
    ['instance_id', '/instanceId', INSTANCE_LIMITS.idMaxLength],
    ['tag_key', '/tagKey', INSTANCE_LIMITS.tagKeyMaxLength],
  ] as const) {
    const length = String(row[column]).length
    if (length === 0 || length > max) return { pointer, message: `must have 1 to ${max} characters` }
  }
  return undefined
}

/** A sample's value within the historian's range (historian/sample-value.ts); null for a text state. */
function sampleValueBreak(row: Row): RuleBreak | undefined {
  const rule = row.value === null ? undefined : sampleValueRule(Number(row.value))
  return rule === undefined ? undefined : { pointer: '/value', message: `must be ${rule}` }
}

export const EXPORTED_TABLES: readonly ExportedTable[] = [
  { name: 'sites', scope: 'site', rules: siteRowBreak },
  { name: 'controllers', scope: 'site', rules: controllerRowBreak },
  { name: 'instances', scope: 'site', json: ['tag_mappings', 'config'], rules: instanceRowBreak },
  { name: 'electrical_nodes', scope: 'site', json: ['tag_bindings', 'metadata', 'study'], rules: nodeRowBreak },
  { name: 'electrical_edges', scope: 'site', rules: edgeRowBreak },
  { name: 'alarms', scope: 'site', rules: alarmRowBreak },
  { name: 'alarm_events', scope: 'site', rules: alarmEventRowBreak },
  { name: 'alarm_history', scope: 'site', rules: alarmHistoryRowBreak },
  { name: 'alarm_shelves', scope: 'site', rules: alarmShelveRowBreak },
  { name: 'historian_batches', scope: 'site', json: ['tags', 'report', 'options'], rules: batchRowBreak },
  { name: 'historian_samples', scope: 'site', isStoredPart: true, rules: (row) => seriesKeyBreak(row) ?? sampleValueBreak(row) },
  { name: 'historian_retention', scope: 'site', rules: retentionRowBreak },
  { name: 'historian_tag_marks', scope: 'site', rules: (row) => seriesKeyBreak(row) ?? tagMarkRowBreak(row) },
  { name: 'memberships', scope: 'org', rules: membershipRowBreak },
  { name: 'domain_bindings', scope: 'org', rules: domainBindingRowBreak },
  {
    name: 'api_keys',
    scope: 'org',
    omit: ['verifier'],
    // Metadata only: a moved key cannot authenticate on the new server (its verifier is not in the package and
    // this placeholder is never a 64-hex HMAC). Mint new keys after a move.
    restore: (row) => ({ ...row, verifier: `moved:${String(row.id)}` }),
  },
]

/** Tenant tables that stay where they are, and why. */
export const EXCLUDED_TABLES: Readonly<Record<string, string>> = {
  orgs: 'the organisation itself is the package header; the target must exist with the same id',
  audit_events: 'the audit trail of this server; the import writes its own audit row',
  ai_usage: "usage counters of this server's AI limits",
  key_reminders: 'reminder bookkeeping of this server',
  sessions: 'browser sessions are bound to this server',
  pending_logins: 'in-flight browser sign-ins',
  site_users: 'site-PIN users and their PIN hashes are credentials of one site server',
  site_refresh_tokens: 'credentials of one site server',
  site_sign_in_failures: 'lockout state of one site server',
  site_signing_keys: "the site server's own signing keys never leave it",
  historian_staging: 'transient rows of imports in progress',
  historian_live_batches: "gateways' batch ids pushed to this server (their samples move as their batches'); a resend after a move stores anew",
  historian_series: 'carried by the historian_samples part (each sample names its site, instance and tag)',
  historian_points: 'carried by the historian_samples part (one row a sample, as in every package version)',
  electrical_network_staging: 'transient rows of network loads in progress',
  tenant_import_packages: 'the staged package itself',
  tenant_import_chunks: 'the staged package itself',
  link_outbox: "this server's record of changes for the fleet link (its sequence is this server's own)",
  link_base: 'fleet link bookkeeping of this site server',
  link_marks: 'fleet link bookkeeping of this server',
  site_servers: 'the link credentials of site servers registered with this cloud cell',
  link_peer: "this site server's own enrolment and sealed link credential",
  link_conflicts: 'fleet link conflicts recorded on this server',
  link_chunks: 'fleet link transfers in progress',
  link_chunk_spans: 'fleet link transfers in progress',
  link_seed_versions: 'fleet link bookkeeping of this cloud cell (what each site server was seeded with)',
  link_commands: 'alarm actions forwarded over the fleet link',
  idempotency_keys: 'stored answers to retried requests of this server (24 h); a retry after a move executes anew',
  edge_gateways: 'the latest heartbeat of each gateway, as this server heard it (issue 30)',
  edge_controller_status: 'the latest report of each controller by its gateway, as this server heard it, and whether its communication alarm is raised',
  edge_config_versions: "counters of this server's changes to a site's controllers and instances (edge gateways' ETags); the import's own writes bump them",
}
