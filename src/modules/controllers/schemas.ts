import { Type, type Static, type TSchema } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'
import { describeCodes } from '../../http/code-tables.ts'
import { KNOWN_PROTOCOLS_TEXT, PLATFORM_CODES, PLATFORMS } from './codes.ts'
import { NEAR_CAPACITY, ROUND_TRIP_MS, ROUTED_HOP_MS, SLOW_DETECTION_MS } from './poll-budget.ts'

export const CONTROLLER_DEFAULTS = { pollIntervalMs: 1000, timeoutMs: 3000, retryDelayMs: 5000, maxRetries: 3 } as const

export const Platform = Type.Integer({
  enum: PLATFORM_CODES,
  description: `PLC family (spec 2.3: one of 0 to 6): ${describeCodes(PLATFORMS)}.`,
  'x-enum-varnames': PLATFORMS.map((p) => p.name),
})

const ControllerName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Required on create, 1 to 200 characters (a controller without a name cannot be told apart in lists).',
})
const NullableName = Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'Spec 2.3: nullable, 0 to 200 characters; null clears it.' })
const FirmwareVersion = Type.Union([Type.String({ maxLength: 50 }), Type.Null()], {
  description: 'Nullable, 0 to 50 characters; null clears it.',
  examples: ['33.011'],
})
const AssetNumber = Type.String({
  minLength: 1,
  maxLength: 100,
  description: "The plant's asset number, 1 to 100 characters, unique in the site (409 `Conflict` otherwise).",
  examples: ['PLC-CHPP-001'],
})

const connectionFields = {
  protocol: Type.String({ minLength: 1, maxLength: 50, description: `Wire protocol, 1 to 50 characters. ${KNOWN_PROTOCOLS_TEXT}.`, examples: ['EtherNet/IP'] }),
  ipAddress: Type.String({
    minLength: 1,
    maxLength: 253,
    description: 'IPv4 or IPv6 address, or a DNS host name (up to 253 characters).',
    examples: ['10.20.1.15'],
  }),
  port: Type.Integer({
    minimum: 1,
    maximum: 65535,
    description: "TCP port 1 to 65535; when absent on create, the protocol's well-known port (or null if it has none).",
  }),
  cipPath: Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
    description:
      'CIP route, comma-separated port,link pairs (e.g. `1,0` = backplane slot 0; `2,10.0.0.5,1,0` = out Ethernet port 2 to 10.0.0.5, then slot 0). ' +
      'Checked for CIP protocols: port 1 = backplane with a slot 0 to 16; other ports take an IPv4 address or a node number 0 to 255; at most 16 hops; ' +
      'a malformed route is a 400 naming the hop. Empty = direct connection. Nullable; null clears it.',
    examples: ['1,0'],
  }),
  pollIntervalMs: Type.Integer({ minimum: 100, maximum: 60000, description: `100 to 60000 (default ${CONTROLLER_DEFAULTS.pollIntervalMs}).` }),
  timeoutMs: Type.Integer({ minimum: 1000, maximum: 30000, description: `1000 to 30000 (default ${CONTROLLER_DEFAULTS.timeoutMs}).` }),
  retryDelayMs: Type.Integer({ minimum: 1000, maximum: 60000, description: `1000 to 60000 (default ${CONTROLLER_DEFAULTS.retryDelayMs}).` }),
  maxRetries: Type.Integer({ minimum: 1, maximum: 10, description: `1 to 10 (default ${CONTROLLER_DEFAULTS.maxRetries}).` }),
}

export const CreateConnection = Type.Object(
  {
    protocol: connectionFields.protocol,
    ipAddress: connectionFields.ipAddress,
    port: Type.Optional(connectionFields.port),
    cipPath: Type.Optional(connectionFields.cipPath),
    pollIntervalMs: Type.Optional(connectionFields.pollIntervalMs),
    timeoutMs: Type.Optional(connectionFields.timeoutMs),
    retryDelayMs: Type.Optional(connectionFields.retryDelayMs),
    maxRetries: Type.Optional(connectionFields.maxRetries),
  },
  { additionalProperties: false, description: 'How the edge gateway reaches the controller (spec 2.3).' },
)

export const UpdateConnection = Type.Object(
  {
    protocol: Type.Optional(connectionFields.protocol),
    ipAddress: Type.Optional(connectionFields.ipAddress),
    port: Type.Optional(connectionFields.port),
    cipPath: Type.Optional(connectionFields.cipPath),
    pollIntervalMs: Type.Optional(connectionFields.pollIntervalMs),
    timeoutMs: Type.Optional(connectionFields.timeoutMs),
    retryDelayMs: Type.Optional(connectionFields.retryDelayMs),
    maxRetries: Type.Optional(connectionFields.maxRetries),
  },
  {
    additionalProperties: false,
    description: 'Merged field by field into the stored connection: an absent field is left as it is; only `cipPath` is nullable.',
  },
)

export const CreateControllerBody = Type.Object(
  {
    name: ControllerName,
    platform: Platform,
    firmwareVersion: Type.Optional(FirmwareVersion),
    connection: CreateConnection,
    assetNumber: AssetNumber,
  },
  { $id: 'CreateControllerBody', additionalProperties: false },
)
export type CreateControllerInput = Static<typeof CreateControllerBody>

export const UpdateControllerBody = Type.Object(
  {
    name: Type.Optional(NullableName),
    platform: Type.Optional(Platform),
    firmwareVersion: Type.Optional(FirmwareVersion),
    connection: Type.Optional(UpdateConnection),
  },
  {
    $id: 'UpdateControllerBody',
    additionalProperties: false,
    description: 'Spec 2.3 update fields, all optional: an absent field is left as it is, a null clears a nullable one. `assetNumber` is fixed at create.',
  },
)
export type UpdateControllerInput = Static<typeof UpdateControllerBody>

export const AssignControllerBody = Type.Object(
  {
    edgeId: Type.String({
      maxLength: 50,
      description:
        'Required, 0 to 50 characters (spec 4.2): the edge gateway that polls the controller. An empty string removes the assignment, like `POST …/unassign`.',
    }),
    edgePlcId: Type.Optional(
      Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
        description: "Nullable, 0 to 100 characters: the controller's id in the gateway's own configuration. Absent or null: none.",
      }),
    ),
  },
  { $id: 'AssignControllerBody', additionalProperties: false },
)
export type AssignControllerInput = Static<typeof AssignControllerBody>

const Nullable = <T extends TSchema>(s: T, description?: string) => Type.Union([s, Type.Null()], description ? { description } : {})

export const CipHopSchema = Type.Object(
  {
    port: Type.Integer(),
    link: Type.String(),
    meaning: Type.String({ description: 'The hop in words.' }),
  },
  { additionalProperties: false },
)

export const PollBudgetSchema = Type.Object(
  {
    instances: Type.Integer({ description: 'Instances bound to this controller.' }),
    mappedTags: Type.Integer({ description: 'Tags mapped by those instances (keys of their `tagMappings`).' }),
    tagsPerRequest: Type.Integer({ description: 'Tags per request assumed for the protocol: CIP 20, PCCC 10, S7 18, Modbus 8, OPC UA 500, other 10.' }),
    requestsPerPoll: Type.Integer(),
    estimatedPollMs: Type.Integer({
      description: `requestsPerPoll × (~${ROUND_TRIP_MS} ms round trip + ${ROUTED_HOP_MS} ms per routed CIP hop beyond the first).`,
    }),
    utilisation: Type.Number({ description: 'estimatedPollMs / pollIntervalMs; above 1 the gateway falls behind.' }),
    failureDetectionMs: Type.Integer({
      description: 'How long an unanswered controller takes to be declared down: timeoutMs × (maxRetries + 1) + retryDelayMs × maxRetries.',
    }),
    warnings: Type.Array(
      Type.Object(
        {
          code: Type.String({
            description:
              `\`PollOverrun\` (estimate above the poll interval), \`PollNearCapacity\` (above ${NEAR_CAPACITY * 100}%), ` +
              `\`SlowFailureDetection\` (failureDetectionMs above ${SLOW_DETECTION_MS / 1000} s with tags mapped).`,
          }),
          message: Type.String(),
        },
        { additionalProperties: false },
      ),
      { description: 'Warnings, never refusals: the save went through.' },
    ),
  },
  { additionalProperties: false, description: 'A planning estimate of whether the gateway can read every mapped tag within the poll interval.' },
)

export const ControllerSchema = Type.Object(
  {
    id: Type.String({ description: '`ctl_` + 26 characters, assigned by the server.' }),
    siteId: Type.String({ description: "The site's code." }),
    name: Nullable(Type.String()),
    platform: Type.Integer(),
    platformName: Type.String({ description: 'The name of `platform`.' }),
    firmwareVersion: Nullable(Type.String()),
    assetNumber: Type.String(),
    connection: Type.Object(
      {
        protocol: Type.String(),
        ipAddress: Type.String(),
        port: Nullable(Type.Integer(), 'Null: not given and the protocol has no well-known port.'),
        cipPath: Nullable(Type.String()),
        pollIntervalMs: Type.Integer(),
        timeoutMs: Type.Integer(),
        retryDelayMs: Type.Integer(),
        maxRetries: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    cipRoute: Type.Union(
      [
        Type.Object(
          {
            hops: Type.Array(CipHopSchema),
            explanation: Type.String({ description: 'The whole route in words.' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The checked `cipPath` explained; null for a non-CIP protocol or no cipPath.' },
    ),
    edgeId: Nullable(Type.String(), 'The edge gateway polling this controller; null when unassigned.'),
    edgePlcId: Nullable(Type.String()),
    pollBudget: PollBudgetSchema,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Controller', additionalProperties: false },
)
export type Controller = Static<typeof ControllerSchema>

export const ControllerPage = Page(ControllerSchema, 'Controllers ordered by id (ids are time-ordered: creation order to the millisecond).')

export const ListControllersQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 50, maxLimit: 500 }),
    edgeId: Type.Optional(Type.String({ maxLength: 50, description: 'Only controllers assigned to this edge gateway.' })),
  },
  { additionalProperties: false },
)
export type ListControllersQueryInput = Static<typeof ListControllersQuery>

export const ControllerWriteQuery = Type.Object(
  {
    dryRun: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: check the body exactly as a save would and answer 200 with the controller as it would be (its `cipRoute` and `pollBudget`), writing nothing. ' +
          'A body the save would refuse gets the same problem.',
      }),
    ),
  },
  { additionalProperties: false },
)

// Path values are not pattern-checked: an impossible code or id is simply not found (the uniform 404).
const SiteId = Type.String({ maxLength: 200, description: "The site's code." })
export const SiteScopedParams = Type.Object({ siteId: SiteId }, { additionalProperties: false })
export const ControllerParams = Type.Object({ siteId: SiteId, controllerId: Type.String({ maxLength: 200 }) }, { additionalProperties: false })
