/**
 * The Citus distribution plan (docs/citus.md), kept beside the schema so that a test holds the two together
 * (db/citus-readiness.test.ts): every table is either distributed by `org_id` or named below with its reason.
 *
 * - Distributed: every table with an `org_id` column not named below. Distribution column `org_id`, one co-location
 *   group (the same column type and shard count co-locate them by default; `colocate_with => 'sites'` says so).
 *   Their primary keys, unique constraints and indexes include `org_id`; a foreign key between two of them carries
 *   `org_id` on both sides; a foreign key to a reference table is allowed.
 * - Reference tables: replicated to every node, for the lookups that run before the tenant is known and for the
 *   platform's own data. A reference table may not refer to a distributed table.
 * - Coordinator tables: stay local on the coordinator (the migrator's bookkeeping).
 */
export const DISTRIBUTION_COLUMN = 'org_id'

export const REFERENCE_TABLES: Readonly<Record<string, string>> = {
  orgs: 'one row per tenant, found by slug from the Host header before the tenant is known; every distributed table refers to it',
  domain_bindings:
    'a custom domain names its organisation before the tenant is known, and a domain serves one organisation ' +
    'across all of them (its unique index); few rows, rarely written',
  api_keys:
    "a key's verifier is unique across organisations (a plaintext key belongs to one organisation; a moved key's " +
    'placeholder cannot be taken twice), which Citus enforces only on a reference table; small, written at mint, ' +
    "revoke and the batched last-used flush; looked up with the host's org_id",
  platform_admins: 'the platform operators, across every organisation (read at each OIDC sign-in)',
  platform_audit: 'what platform admins did across organisations (no tenant of its own); few rows',
}

export const COORDINATOR_TABLES: Readonly<Record<string, string>> = {
  kysely_migration: "the migrator's record of applied migrations (DDL runs through the coordinator)",
  kysely_migration_lock: "the migrator's lock row",
}
