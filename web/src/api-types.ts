// The API's shapes as the console receives them, taken from the server's own TypeBox schemas (src/**/schemas.ts)
// instead of copied by hand, so that a renamed or retyped field breaks the console's typecheck, not the console.
// Every import here is `import type`: esbuild erases them, and no server code reaches the bundle.
import type { Static } from 'typebox'
import type { SessionTokenSchema } from '../../src/auth/sessions/schemas.ts'
import type { SiteSessionSchema } from '../../src/auth/site-pin/schemas.ts'
import type { ProblemSchema } from '../../src/http/problem.ts'
import type { AlarmCommandSchema, AlarmLoadSchema, AlarmSchema, AlarmWithHistorySchema } from '../../src/modules/alarms/schemas.ts'
import type { ApiKeySchema, MintedApiKeySchema } from '../../src/modules/api-keys/schemas.ts'
import type { AuditEventSchema } from '../../src/modules/audit/schemas.ts'
import type { ControllerSchema } from '../../src/modules/controllers/schemas.ts'
import type {
  CoordinationSchema,
  EdgeSchema,
  IslandsSchema,
  LoopsSchema,
  NetworkSchema,
  NodeSchema,
  ProtectionCurvesSchema,
  LoadFlowSchema,
  ShortCircuitSchema,
  SupplyPathsSchema,
  TripTimeSchema,
} from '../../src/modules/electrical/schemas.ts'
import type { EdgeStatusListSchema } from '../../src/modules/edges/schemas.ts'
import type { BatchSchema, BatchSummarySchema, RejectionReportSchema, SeriesSchema } from '../../src/modules/historian/schemas.ts'
import type { BulkReportSchema, InstanceSchema } from '../../src/modules/instances/schemas.ts'
import type { LastChangesSchema } from '../../src/modules/fleet/last-change.ts'
import type { SiteServerSchema, SiteServerWithCodeSchema } from '../../src/modules/fleet/site-servers/schemas.ts'
import type { LinkStatusSchema } from '../../src/modules/fleet/status.ts'
import type { ConflictSchema } from '../../src/modules/fleet/sync/schemas.ts'
import type { MeSchema } from '../../src/modules/me/schemas.ts'
import type { DomainBindingSchema } from '../../src/modules/orgs/domains-schemas.ts'
import type { MemberSchema } from '../../src/modules/orgs/members-schemas.ts'
import type { SiteUserSchema } from '../../src/modules/site-users/schemas.ts'
import type { SiteSchema } from '../../src/modules/sites/schemas.ts'

export type Problem = Static<typeof ProblemSchema>
export type SessionToken = Static<typeof SessionTokenSchema>
export type SiteSession = Static<typeof SiteSessionSchema>
export type Me = Static<typeof MeSchema>

export type Site = Static<typeof SiteSchema>
export type Controller = Static<typeof ControllerSchema>
export type Instance = Static<typeof InstanceSchema>
export type ElectricalNode = Static<typeof NodeSchema>
export type ElectricalEdge = Static<typeof EdgeSchema>
export type Network = Static<typeof NetworkSchema>
export type Islands = Static<typeof IslandsSchema>
export type Loops = Static<typeof LoopsSchema>
export type SupplyPaths = Static<typeof SupplyPathsSchema>
export type TripTime = Static<typeof TripTimeSchema>
export type Coordination = Static<typeof CoordinationSchema>
export type ProtectionCurves = Static<typeof ProtectionCurvesSchema>
export type ShortCircuit = Static<typeof ShortCircuitSchema>
export type LoadFlow = Static<typeof LoadFlowSchema>
/** An edge as the topology answers name it (with its index in the network's edge order). */
export type EdgeRef = Loops['loops'][number]['closingEdge']

export type EdgeStatus = Static<typeof EdgeStatusListSchema>['items'][number]

export type Alarm = Static<typeof AlarmSchema>
export type AlarmLoad = Static<typeof AlarmLoadSchema>
export type AlarmWithHistory = Static<typeof AlarmWithHistorySchema>
/** An alarm action forwarded to a linked site's server (the cloud's 202 answer to an action). */
export type AlarmCommand = Static<typeof AlarmCommandSchema>

export type SiteServer = Static<typeof SiteServerSchema>
export type SiteServerWithCode = Static<typeof SiteServerWithCodeSchema>
export type LinkStatus = Static<typeof LinkStatusSchema>
export type LinkConflict = Static<typeof ConflictSchema>
export type LastChanges = Static<typeof LastChangesSchema>
export type LastChange = NonNullable<LastChanges['items'][number]['change']>

export type Batch = Static<typeof BatchSchema>
export type BatchSummary = Static<typeof BatchSummarySchema>
export type RejectionReport = Static<typeof RejectionReportSchema>
export type Series = Static<typeof SeriesSchema>

export type ApiKey = Static<typeof ApiKeySchema>
export type MintedApiKey = Static<typeof MintedApiKeySchema>
export type AuditEvent = Static<typeof AuditEventSchema>
export type DomainBinding = Static<typeof DomainBindingSchema>
export type Member = Static<typeof MemberSchema>
export type SiteUser = Static<typeof SiteUserSchema>
/** The answer of POST …/instances/bulk (with dryRun: what would happen, line by line). */
export type InstanceBulkReport = Static<typeof BulkReportSchema>
