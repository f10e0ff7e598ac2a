import type { Migration } from 'kysely'
import * as historian from './0900-historian.ts'
import * as foundation from './0001-foundation.ts'
import * as ai from './0500-ai.ts'
import * as siteUsers from './0200-site-users.ts'
import * as identity from './0300-identity.ts'
import * as domains from './0400-domains.ts'
import * as sites from './0100-sites.ts'
import * as alarms from './0700-alarms.ts'
import * as controllersInstances from './0600-controllers-instances.ts'
import * as reminders from './1000-reminders.ts'
import * as electrical from './0800-electrical.ts'
import * as tenantTransfer from './1100-tenant-transfer.ts'
import * as rowLevelSecurity from './1200-row-level-security.ts'
import * as idempotency from './1300-idempotency.ts'
import * as keyCreatorAccount from './1400-key-creator-account.ts'
import * as platformAudit from './1500-platform-audit.ts'
import * as electricalNetworkStaging from './1700-electrical-network-staging.ts'
import * as historianSeries from './1600-historian-series.ts'
import * as alarmShelves from './1800-alarm-shelves.ts'
import * as historianPointsNarrow from './1900-historian-points-narrow.ts'
import * as tenantPolicyPerStatement from './2000-tenant-policy-per-statement.ts'
import * as tenantImportChunksBinary from './2100-tenant-import-chunks-binary.ts'
import * as tenantUniqueKeys from './2200-tenant-unique-keys.ts'
import * as fleetLink from './2300-fleet-link.ts'
import * as linkTriggers from './2310-link-triggers.ts'
import * as linkChunkDigests from './2320-link-chunk-digests.ts'
import * as linkPushCursor from './2340-link-push-cursor.ts'
import * as deferrableReferences from './2350-deferrable-references.ts'
import * as electricalStudyParameters from './2400-electrical-study-parameters.ts'
import * as edgeGateways from './2410-edge-gateways.ts'
import * as edgeStatus from './2420-edge-status.ts'
import * as historianLiveRetention from './2430-historian-live-retention.ts'
import * as historianTagMarks from './2470-historian-tag-marks.ts'
import * as linkStatementTriggers from './2480-link-statement-triggers.ts'
import * as linkChunkReplacing from './2520-link-chunk-replacing.ts'
import * as linkSeedVersions from './2530-link-seed-versions.ts'
import * as historianLivePoints from './2550-historian-live-points.ts'
import * as historianOpenBatches from './2560-historian-open-batches.ts'
import * as tenantUploadId from './2570-tenant-upload-id.ts'
import * as orgSuspension from './2610-org-suspension.ts'
import * as apiKeysListOrder from './2630-api-keys-list-order.ts'
import * as historianValuesInRange from './2640-historian-values-in-range.ts'
import * as idempotencyCaller from './2650-idempotency-caller.ts'

/**
 * The one list of migrations, applied in key order on SQLite and PostgreSQL alike. Append only: a shipped
 * migration never changes. Each area adds its own file and one line here.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0500-ai': ai,
  '0200-site-users': siteUsers,
  '0300-identity': identity,
  '0400-domains': domains,
  '0100-sites': sites,
  '0700-alarms': alarms,
  '0600-controllers-instances': controllersInstances,
  '0900-historian': historian,
  '1000-reminders': reminders,
  '0800-electrical': electrical,
  '1100-tenant-transfer': tenantTransfer,
  '1200-row-level-security': rowLevelSecurity,
  '1300-idempotency': idempotency,
  '1400-key-creator-account': keyCreatorAccount,
  '1500-platform-audit': platformAudit,
  '1700-electrical-network-staging': electricalNetworkStaging,
  '1600-historian-series': historianSeries,
  '1800-alarm-shelves': alarmShelves,
  '1900-historian-points-narrow': historianPointsNarrow,
  '2000-tenant-policy-per-statement': tenantPolicyPerStatement,
  '2100-tenant-import-chunks-binary': tenantImportChunksBinary,
  '2200-tenant-unique-keys': tenantUniqueKeys,
  '2300-fleet-link': fleetLink,
  '2310-link-triggers': linkTriggers,
  '2320-link-chunk-digests': linkChunkDigests,
  '2340-link-push-cursor': linkPushCursor,
  '2350-deferrable-references': deferrableReferences,
  '2400-electrical-study-parameters': electricalStudyParameters,
  '2410-edge-gateways': edgeGateways,
  '2420-edge-status': edgeStatus,
  '2430-historian-live-retention': historianLiveRetention,
  '2470-historian-tag-marks': historianTagMarks,
  '2480-link-statement-triggers': linkStatementTriggers,
  '2520-link-chunk-replacing': linkChunkReplacing,
  '2530-link-seed-versions': linkSeedVersions,
  '2550-historian-live-points': historianLivePoints,
  '2560-historian-open-batches': historianOpenBatches,
  '2570-tenant-upload-id': tenantUploadId,
  '2610-org-suspension': orgSuspension,
  '2630-api-keys-list-order': apiKeysListOrder,
  '2640-historian-values-in-range': historianValuesInRange,
  '2650-idempotency-caller': idempotencyCaller,
}
