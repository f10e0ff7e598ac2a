import type { Kysely } from 'kysely'

// Timestamps are epoch milliseconds in a BIGINT/INTEGER column on both dialects: the same comparisons,
// the same bucketing arithmetic, and no driver-dependent date parsing. JSON is stored as text.

export interface OrgsTable {
  id: string
  slug: string
  name: string
  created_at: number
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
  created_at: number
  expires_at: number
  last_used_at: number | null
  revoked_at: number | null
  revoke_reason: string | null
  revoked_by: string | null
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

export interface Database {
  sites: SitesTable
  orgs: OrgsTable
  api_keys: ApiKeysTable
  audit_events: AuditEventsTable
}

/** A Kysely instance or a transaction: store functions run inside or outside one. */
export type Db = Kysely<Database>
