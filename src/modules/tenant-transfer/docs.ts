const FORMAT =
  'The package is gzip of newline-delimited JSON records: a header (format `sitegrid-tenant-package`, `formatVersion` 1, source mode, export time, ' +
  'organisation, site, parts), then per part (table) its rows and a `partEnd` record with the count and SHA-256 of its lines, then an `end` record with ' +
  'all counts and the SHA-256 of everything before it. Rows are keyed by column name, without `org_id`. API keys travel as metadata only (no verifier): ' +
  'moved keys do not authenticate; mint new ones.'

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  exportOrganisation: `${FORMAT} \`{slug}\` must be the host's organisation, else the uniform 404 (platform admins excepted).`,
  stagePackage:
    'Body: the package (`application/gzip` or `application/octet-stream`), streamed. It is checked whole (format version, every count and checksum, ' +
    'organisation id) before anything else happens; an invalid one (truncated, corrupt gzip, a line over 16 MiB, a count or checksum off, a row with NUL or ' +
    'a lone surrogate or JSON text nested deeper than 64 levels) is discarded with 422 `PackageInvalid`. It is inflated in constant memory: ' +
    'past `SITEGRID_TENANT_PACKAGE_MAX_BYTES` gzip bytes, or `SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES` inflated, 413 `PayloadTooLarge` naming the limit, ' +
    'nothing kept. No body, another content type (`application/json` included) or a `Content-Encoding` other than `identity`: ' +
    '415 `UnsupportedMediaType` listing `acceptedTypes`. Staging replaces an earlier staged package, or an upload of the organisation still arriving: ' +
    'that upload answers 409 `Conflict` (`reason` `replaced by a later upload`) and nothing of it is kept, so the staged package is always one upload ' +
    'whole. An upload that begins while an import applies waits for the import to end (PostgreSQL: at most the statement timeout, then 503 ' +
    '`ServiceUnavailable`, nothing kept). The answer names the upload (`uploadId`). ' +
    "`{slug}` must be the host's organisation, else the uniform 404 (platform admins excepted).",
  applyStagedPackage:
    'No body (spec 4.5): applies the package staged with PUT …/tenant/import/package, in one transaction, which also drops it (not on a dry run); ' +
    "none staged, or an upload still arriving: 409 `Conflict`. `uploadId` (the staging answer's) applies that upload and no other: 409 `Conflict` " +
    '(`reason` `replaced by a later upload`), nothing written, when a later upload replaced it. Records identical to existing ones are left alone; ' +
    'without `force`, records that would overwrite different ones make it change nothing and answer 409 `Conflict` listing them (`conflicts`, first 100, and ' +
    '`conflictCount`); with `force` they are replaced. `force` replaces only records with the same key: ' +
    "a record whose unique value (a controller's asset number in its site, an open alarm's instance and condition, a bound domain, …) another record holds " +
    '— one of this organisation under another key, another record of the package, or any record of another organisation — makes the import (forced, unforced ' +
    'or a dry run) change nothing and answer 409 `Conflict` with `uniqueConflicts` (first 100: ' +
    "`part`, `values` of the unique rule, the package's `record` key, `heldBy` the holder's key, null for another organisation's, and `heldIn`) and " +
    '`uniqueConflictCount`; a value held by another organisation is found when the import writes, so a dry run does not report it. ' +
    "A row this server's table refuses (a missing value, a record it refers to that is neither in the package nor here, a value of the wrong type) is a " +
    'crafted package: 422 `PackageInvalid` naming the part and the rule, nothing written. Every value is checked against its column before a row is ' +
    "written, the same on both databases (`part`, `row`, `column`, `rule`: `not null` or `type`: an integer in its column's range, a finite number, a " +
    'string, JSON text where the column holds JSON), then each site, controller, instance, electrical node and edge, membership and domain binding ' +
    "against the rules of its endpoints (`rule` `field`: a code in its table, a bound, a node's study parameters of its type, an instance's tag count, a sample's instance id (1 to 100 characters) and tag key (1 to 200), " +
    'a role, a domain as `POST …/domains` takes it; the `reason` names the ' +
    'API field and its rule), since a record can only be stored the way the API would have stored it. `dryRun=true` answers the counts without writing. ' +
    "`{slug}` must be the host's organisation, else the uniform 404 (platform admins excepted).",
}
