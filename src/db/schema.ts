import type { ColumnType, Kysely } from 'kysely'

// Timestamps are epoch milliseconds in a BIGINT/INTEGER column on both dialects: the same comparisons,
// the same bucketing arithmetic, and no driver-dependent date parsing. JSON is stored as text.

export interface OrgsTable {
  id: string
  slug: string
  name: string
  created_at: number
  /** Set while an operator has the organisation suspended (`sitegrid org suspend`): its hosts serve nothing. */
  suspended_at: ColumnType<number | null, number | null | undefined, number | null>
}

export interface ApiKeysTable {
  org_id: string
  id: string
  prefix: string
  /** HMAC-SHA256(secret, plaintext), hex. Never leaves the store. */
  verifier: string
  role: string
  name: string
  created_by_kind: string
  created_by_user_id: string
  /** The creator's membership key (OIDC `oid`) when a signed-in user minted the key; null otherwise. */
  created_by_account: string | null
  created_at: number
  expires_at: number
  last_used_at: number | null
  revoked_at: number | null
  revoke_reason: string | null
  revoked_by: string | null
  /** The one site the key reaches (issue 30); null: every site. Optional on insert (keys minted before 2410). */
  site_code: ColumnType<string | null, string | null | undefined, string | null>
  /** The client networks the key is accepted from, CIDR blocks joined by commas; null: any address. */
  networks: ColumnType<string | null, string | null | undefined, string | null>
}

export interface AuditEventsTable {
  org_id: string
  id: string
  at: number
  actor_kind: string
  actor_id: string
  action: string
  target: string
  detail: string | null
}

export interface SitesTable {
  org_id: string
  code: string
  name: string
  description: string | null
  location: string | null
  time_zone: string
  status: number
  created_at: number
  updated_at: number
}

export interface DomainBindingsTable {
  org_id: string
  /** Lower-case host name; unique across organisations. */
  domain: string
  is_enabled: number
  created_at: number
  updated_at: number
  created_by: string
}

export interface MembershipsTable {
  org_id: string
  /** The OIDC `oid`: the stable membership key (spec 5 rule 5). */
  account_id: string
  /** pending | active | revoked */
  status: string
  role: string | null
  email: string | null
  name: string | null
  requested_at: number
  decided_at: number | null
  decided_by: string | null
}

export interface PlatformAdminsTable {
  account_id: string
  note: string | null
  added_at: number
}

/** Audit records of platform-level changes (no organisation): migration 1500. */
export interface PlatformAuditTable {
  id: string
  at: number
  actor_kind: string
  actor_id: string
  action: string
  target: string
  /** JSON */
  detail: string
}

export interface SessionsTable {
  org_id: string
  /** SHA-256 of the cookie value: a database read does not yield a usable cookie. */
  id: string
  account_id: string
  sub: string
  /** Sealed (AES-256-GCM) provider tokens. */
  access_token: string
  access_expires_at: number
  refresh_token: string | null
  created_at: number
  expires_at: number
}

export interface PendingLoginsTable {
  org_id: string
  id: string
  state: string
  nonce: string
  verifier: string
  redirect_uri: string
  return_to: string
  expires_at: number
}

export interface SiteUsersTable {
  org_id: string
  id: string
  /** Lower-case; unique per organisation. */
  email: string
  display_name: string
  site_role: string
  /** `scrypt$N$r$p$salt$hash`; never leaves the store except to the PIN check. */
  pin_hash: string
  /** Bumped when the PIN changes: older access and refresh tokens stop working. */
  token_version: number
  created_at: number
  updated_at: number
  pin_changed_at: number
}

export interface SiteSigningKeysTable {
  org_id: string
  kid: string
  alg: string
  public_jwk: string
  /** AES-256-GCM under a key derived from the verifier secret; never logged, never served. */
  sealed_private_jwk: string
  created_at: number
  retired_at: number | null
}

export interface SiteRefreshTokensTable {
  org_id: string
  id: string
  family_id: string
  user_id: string
  /** SHA-256 of the token, hex. */
  token_hash: string
  token_version: number
  created_at: number
  expires_at: number
  family_expires_at: number
  used_at: number | null
  revoked_at: number | null
}

export interface SiteSignInFailuresTable {
  org_id: string
  /** `email:<address>` or `addr:<client address>`. */
  subject: string
  failures: number
  last_failure_at: number
  locked_until: number
}

export interface AiUsageTable {
  org_id: string
  id: string
  at: number
  /** UTC calendar day of `at`, `YYYY-MM-DD`: the tokens-per-day window and the grouping of the usage read. */
  day: string
  tier: string
  provider: string
  model: string
  actor_kind: string
  actor_id: string
  /** `pending` while the provider works, then `ok`, `failed` or `cancelled` (the client left). */
  status: string
  is_stream: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  /** 1 when the provider reported no usage and the tokens are estimated from the text length. */
  is_estimated: number
  redactions: number
  site_code: string | null
  error_code: string | null
  finished_at: number | null
}

export interface ControllersTable {
  org_id: string
  site_code: string
  id: string
  name: string | null
  platform: number
  firmware_version: string | null
  asset_number: string
  protocol: string
  ip_address: string
  /** Null: not given and the protocol has no well-known port. */
  port: number | null
  cip_path: string | null
  poll_interval_ms: number
  timeout_ms: number
  retry_delay_ms: number
  max_retries: number
  edge_id: string | null
  edge_plc_id: string | null
  created_at: number
  updated_at: number
}

export interface InstancesTable {
  org_id: string
  site_code: string
  id: string
  name: string
  type_id: string
  type_version: string | null
  asset_number: string
  controller_id: string
  area: string | null
  /** JSON object of strings. */
  tag_mappings: string
  /** Number of keys of tag_mappings, so the poll budget is one SUM. */
  tag_count: number
  /** JSON object. */
  config: string
  created_at: number
  updated_at: number
}

/** Issue 30: changes to a site's controllers and instances, counted by triggers (migration 2410); the edge gateways' config ETag. */
export interface EdgeConfigVersionsTable {
  org_id: string
  site_code: string
  version: number
}

/** The latest heartbeat of an edge gateway (migration 2420). */
export interface EdgeGatewaysTable {
  org_id: string
  site_code: string
  edge_id: string
  gateway_version: string
  is_faulted: number
  message: string | null
  heartbeat_at: number
}

/** The latest report of a controller by the gateway polling it (migration 2420). */
export interface EdgeControllerStatusTable {
  org_id: string
  site_code: string
  controller_id: string
  edge_id: string
  /** ok | failed */
  communication: string
  last_good_poll_at: number | null
  error_count: number
  last_error: string | null
  reported_at: number
  /** 1 while a communication alarm raised for the controller is not cleared. */
  is_alarmed: number
}

export interface AlarmsTable {
  org_id: string
  site_code: string
  id: string
  instance_id: string
  condition: string
  priority: string
  message: string | null
  value: number | null
  limit_value: number | null
  /** The effective ISA-18.2 state, materialised for filtering (see modules/alarms/lifecycle.ts). */
  state: string
  is_active: number
  is_acknowledged: number
  is_out_of_service: number
  shelved_until: number | null
  /** `activeKey(instance_id, condition)` while the alarm is open, NULL once closed: the unique index allows one open alarm per tag. */
  active_key: string | null
  activation_count: number
  raised_at: number
  last_event_at: number
  changed_at: number
  created_at: number
  /** Bumped by every write (optimistic concurrency); at least the seq of the latest history row. */
  version: number
}

export interface AlarmEventsTable {
  org_id: string
  site_code: string
  event_id: string
  alarm_id: string | null
  instance_id: string
  condition: string
  priority: string
  is_active: number
  occurred_at: number
  received_at: number
  message: string | null
  value: number | null
  limit_value: number | null
  /** activated | suppressed | returned | none */
  effect: string
}

/** One shelve of an alarm (issue 8): [starts_at, ends_at) in event time; ends_at is the planned expiry until it ends early. */
export interface AlarmShelvesTable {
  org_id: string
  site_code: string
  alarm_id: string
  /** The history seq of the `shelved` transition. */
  seq: number
  /** `activeKey(instance_id, condition)` of the alarm. */
  tag_key: string
  starts_at: number
  ends_at: number
}

export interface AlarmHistoryTable {
  org_id: string
  site_code: string
  alarm_id: string
  seq: number
  at: number
  action: string
  from_state: string
  to_state: string
  actor_kind: string
  actor_id: string
  comment: string | null
  event_id: string | null
}

export interface HistorianBatchesTable {
  org_id: string
  site_code: string
  id: string
  format: string
  /** running | complete | failed */
  status: string
  rows_read: number
  samples_stored: number
  rejected_count: number
  collision_count: number
  replaced_count: number
  bytes_read: number
  bytes_total: number | null
  first_ts: number | null
  last_ts: number | null
  /** JSON: [{ instanceId, tagKey, historianTag, samples }] */
  tags: string
  /** JSON: the first rejections, unmapped tags, collisions (see historian/service/batch-record.ts) */
  report: string
  /** JSON: the parse options used */
  options: string
  trend_sha256: string
  mapping_sha256: string
  trend_name: string | null
  is_forced: number
  error: string | null
  created_by: string
  created_at: number
  updated_at: number
  completed_at: number | null
}

/** One time series of a site: an instance's tag. `id` keys its samples (historian_points). */
export interface HistorianSeriesTable {
  id: number
  org_id: string
  site_code: string
  instance_id: string
  tag_key: string
}

export interface HistorianPointsTable {
  org_id: string
  series_id: number
  ts: number
  value: number | null
  text: string | null
  /** OPC-style: 192 good, 64 uncertain, 0 bad */
  quality: number
  batch_id: string
}

export interface HistorianStagingTable {
  org_id: string
  batch_id: string
  series_id: number
  ts: number
  value: number | null
  text: string | null
  quality: number
}

/** A gateway's batch id (POST …/historian/samples): the historian batch it made and the answer it got (migration 2430). */
export interface HistorianLiveBatchesTable {
  org_id: string
  site_code: string
  batch_key: string
  batch_id: string
  /** JSON: the answer of the push (service/live.ts LiveAnswer) */
  answer: string
  created_at: number
}

/** A site's retention policy and the progress of the job applying it (migration 2430). */
export interface HistorianRetentionTable {
  org_id: string
  site_code: string
  retention_days: number | null
  last_run_at: number | null
  last_deleted: number
  oldest_kept_ts: number | null
  updated_at: number
}

/** A tag's stored interpolation, `step` for a discrete tag (migration 2470). */
export interface HistorianTagMarksTable {
  org_id: string
  site_code: string
  instance_id: string
  tag_key: string
  /** `step` or `linear` (packages and the fleet link held to it too, historian/row-rules.ts; anything else reads linear). */
  interpolation: string
  updated_at: number
}

export interface IdempotencyKeysTable {
  org_id: string
  key: string
  request_method: string
  /** The path with its query string: a key reused on another operation is refused (422). */
  request_path: string
  /** SHA-256 of the canonical JSON body. */
  fingerprint: string
  /** Who made the request (`kind:subject` of its principal), the only caller its answer is replayed to; null before 2650. */
  caller: string | null
  /** running (claimed, executing) → done (answer stored). */
  state: string
  status: number | null
  /** JSON object of the stored response headers (content-type, location). */
  headers: string | null
  /** The response body, sealed (AES-256-GCM under a key derived from the verifier secret). */
  body: string | null
  created_at: number
  locked_at: number
  completed_at: number | null
}

export interface KeyRemindersTable {
  org_id: string
  key_id: string
  expires_at: number
  /** claimed → sent | failed | skipped (no address); failed is retried on the next poll. */
  status: string
  recipient: string | null
  attempts: number
  claimed_by: string
  claimed_at: number
  sent_at: number | null
  last_error: string | null
}

export interface ElectricalNodesTable {
  org_id: string
  site_code: string
  id: string
  name: string | null
  node_type: number
  rated_voltage_v: number | null
  rated_current_a: number | null
  rated_power_kw: number | null
  impedance_ohms: number | null
  cable_size: string | null
  cable_length_m: number | null
  protection_curve: string | null
  protection_pickup_a: number | null
  protection_tms: number | null
  description: string | null
  /** JSON object of strings. */
  tag_bindings: string
  /** JSON object. */
  metadata: string
  /** JSON object: the study parameters (modules/electrical/study.ts); `{}` when none. */
  study: string
  created_at: number
  updated_at: number
}

export interface ElectricalEdgesTable {
  org_id: string
  site_code: string
  source_id: string
  target_id: string
  edge_type: number
  created_at: number
}

/** A node (kind 0) or edge (kind 1) of a streamed bulk load in progress (migration 1700). */
export interface ElectricalNetworkStagingTable {
  org_id: string
  load_id: string
  kind: number
  position: number
  site_code: string
  staged_at: number
  node_id: string | null
  name: string | null
  node_type: number | null
  rated_voltage_v: number | null
  rated_current_a: number | null
  rated_power_kw: number | null
  impedance_ohms: number | null
  cable_size: string | null
  cable_length_m: number | null
  protection_curve: string | null
  protection_pickup_a: number | null
  protection_tms: number | null
  description: string | null
  tag_bindings: string | null
  metadata: string | null
  study: string | null
  /** The createdAt a kept node keeps (set in the replacing transaction). */
  created_at: number | null
  source_id: string | null
  target_id: string | null
  edge_type: number | null
}

/** Issue 26, the fleet link (migration 2300; ARCHITECTURE.md § Fleet link). */
export interface LinkOutboxTable {
  org_id: string
  /** Order of changes on this server (an identity on PostgreSQL, AUTOINCREMENT on SQLite). */
  seq: number
  /** PostgreSQL: the writing transaction's id (readers page by (tx, seq)); SQLite: 0. */
  tx: number
  table_name: string
  site_code: string
  /** JSON array of the primary-key values after org_id, in key order. */
  row_key: string
  /** upsert | delete */
  op: string
  /** JSON object: the row after the change, or before a delete. */
  row: string
  /** Site: the cloud seq of the version the edited row was based on (link_base); null where none. */
  base: number | null
  /** '' when made on this server; else the peer it came from ('cloud' on a site, a site server id in the cloud). */
  origin: string
  at: number
}

export interface LinkBaseTable {
  org_id: string
  table_name: string
  row_key: string
  version: number
}

export interface LinkMarksTable {
  org_id: string
  /** The peer whose changes are applied here: a site server id (cloud) or 'cloud' (site). */
  peer: string
  epoch: string
  tx: number
  seq: number
  /** SHA-256 of the last applied change (cloud): a site whose change at that seq differs was restored from a backup. */
  digest: string | null
  updated_at: number
}

export interface SiteServersTable {
  org_id: string
  id: string
  name: string
  /** JSON array of site codes. */
  sites: string
  /** SHA-256 of the one-time enrolment code, hex; null once used. */
  code_hash: string | null
  code_expires_at: number | null
  /** HMAC of the link credential under the verifier secret; null until enrolled. */
  credential_verifier: string | null
  epoch: string | null
  created_at: number
  created_by: string
  enrolled_at: number | null
  revoked_at: number | null
  revoked_by: string | null
  last_contact_at: number | null
  last_error: string | null
  /** JSON: the site server's protocol and schema versions at its last contact. */
  peer_versions: string | null
  /** JSON: what the site server reported waiting at its last contact. */
  backlog: string | null
}

export interface LinkPeerTable {
  org_id: string
  server_id: string
  cloud_url: string
  /** AES-256-GCM under a key derived from the verifier secret; null once the cloud revoked it. */
  sealed_credential: string | null
  epoch: string
  /** JSON array of site codes. */
  sites: string
  enrolled_at: number
  /** The cloud's acknowledged mark of this server's outbox, a cursor (acked_tx, acked_seq): the push continues after it. */
  acked_tx: number
  acked_seq: number
  last_contact_at: number | null
  last_error: string | null
  peer_versions: string | null
}

export interface LinkConflictsTable {
  org_id: string
  id: string
  server_id: string
  table_name: string
  site_code: string
  row_key: string
  losing_op: string
  /** JSON */
  losing_row: string
  losing_at: number
  winning_op: string | null
  /** JSON */
  winning_row: string | null
  recorded_at: number
  resolved_at: number | null
  resolved_by: string | null
  /** reapplied | dismissed */
  resolution: string | null
}

export interface LinkChunksTable {
  org_id: string
  server_id: string
  batch_id: string
  chunk: number
  samples: number
  received_at: number
  /** Lower-case hex SHA-256 of the chunk's canonical samples; null for a chunk stored before migration 2320. */
  sha256: string | null
  /** The chunk's last sample's key, `[instanceId, tagKey, ts]` as JSON; null for a chunk stored before migration 2520. */
  last_key: string | null
}

/** Cloud (migration 2530): the version a site server's seed carried of a row changed after the seed's cursor. */
export interface LinkSeedVersionsTable {
  org_id: string
  server_id: string
  site_code: string
  table_name: string
  row_key: string
  version: number
}

/** Cloud (migration 2520): where a server's replacing upload of a batch the cloud shows may hold its samples. */
export interface LinkChunkSpansTable {
  org_id: string
  server_id: string
  batch_id: string
  series_id: number
  instance_id: string
  tag_key: string
  from_ts: number
  to_ts: number
}

export interface LinkCommandsTable {
  org_id: string
  id: string
  site_code: string
  alarm_id: string
  /** acknowledge | shelve | unshelve | … (the alarm action's route name) */
  action: string
  /** JSON: the action's body */
  body: string
  /** JSON: the Actor who took it in the cloud */
  actor: string
  created_at: number
  /** pending | applied | refused */
  status: string
  /** JSON: the alarm after the action, or the problem that refused it */
  result: string | null
  settled_at: number | null
}

export interface Database {
  link_outbox: LinkOutboxTable
  link_base: LinkBaseTable
  link_marks: LinkMarksTable
  site_servers: SiteServersTable
  link_peer: LinkPeerTable
  link_conflicts: LinkConflictsTable
  link_chunks: LinkChunksTable
  link_chunk_spans: LinkChunkSpansTable
  link_seed_versions: LinkSeedVersionsTable
  link_commands: LinkCommandsTable
  electrical_nodes: ElectricalNodesTable
  electrical_edges: ElectricalEdgesTable
  electrical_network_staging: ElectricalNetworkStagingTable
  key_reminders: KeyRemindersTable
  idempotency_keys: IdempotencyKeysTable
  historian_batches: HistorianBatchesTable
  historian_series: HistorianSeriesTable
  historian_points: HistorianPointsTable
  historian_staging: HistorianStagingTable
  historian_live_batches: HistorianLiveBatchesTable
  historian_retention: HistorianRetentionTable
  historian_tag_marks: HistorianTagMarksTable
  ai_usage: AiUsageTable
  domain_bindings: DomainBindingsTable
  sites: SitesTable
  alarms: AlarmsTable
  alarm_events: AlarmEventsTable
  alarm_history: AlarmHistoryTable
  alarm_shelves: AlarmShelvesTable
  controllers: ControllersTable
  instances: InstancesTable
  orgs: OrgsTable
  api_keys: ApiKeysTable
  edge_config_versions: EdgeConfigVersionsTable
  edge_gateways: EdgeGatewaysTable
  edge_controller_status: EdgeControllerStatusTable
  audit_events: AuditEventsTable
  site_users: SiteUsersTable
  site_signing_keys: SiteSigningKeysTable
  site_refresh_tokens: SiteRefreshTokensTable
  site_sign_in_failures: SiteSignInFailuresTable
  memberships: MembershipsTable
  platform_admins: PlatformAdminsTable
  platform_audit: PlatformAuditTable
  sessions: SessionsTable
  pending_logins: PendingLoginsTable
}

/** A Kysely instance or a transaction: store functions run inside or outside one. */
export type Db = Kysely<Database>
