import { Type, type Static } from 'typebox'
import { ControllerSchema } from '../controllers/schemas.ts'

export const EdgeConfigParams = Type.Object(
  {
    siteId: Type.String({ description: "The site's code." }),
    edgeId: Type.String({
      minLength: 1,
      maxLength: 50,
      description: 'The edge gateway, as controllers are assigned to it (`POST …/controllers/{id}/assign`).',
    }),
  },
  { additionalProperties: false },
)

export const EdgeInstanceSchema = Type.Object(
  {
    id: Type.String(),
    tagMappings: Type.Record(Type.String(), Type.String(), { description: "Tag key → the controller's tag address, to poll." }),
  },
  { additionalProperties: false },
)

const { connection, cipRoute } = ControllerSchema.properties

export const EdgeControllerSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    platform: Type.Integer(),
    platformName: Type.String(),
    edgePlcId: Type.Union([Type.String(), Type.Null()], { description: "The controller's id in the gateway's own configuration." }),
    connection,
    cipRoute,
    instances: Type.Array(EdgeInstanceSchema, { description: 'The instances bound to the controller, by id.' }),
  },
  { additionalProperties: false },
)

export const EdgeConfigSchema = Type.Object(
  {
    siteId: Type.String(),
    edgeId: Type.String(),
    version: Type.Integer({ description: 'Grows with every change to the site\'s controllers and instances; the `ETag` is `"<version>"`.' }),
    controllers: Type.Array(EdgeControllerSchema, { description: 'The controllers assigned to this gateway, by id (at least one).' }),
  },
  { $id: 'EdgeConfig', additionalProperties: false },
)
export type EdgeConfig = Static<typeof EdgeConfigSchema>
export type EdgeController = Static<typeof EdgeControllerSchema>

/** Most controllers one heartbeat may report. */
export const MAX_HEARTBEAT_CONTROLLERS = 1000

export const SiteEdgesParams = Type.Object({ siteId: Type.String({ description: "The site's code." }) }, { additionalProperties: false })

const Communication = Type.Union([Type.Literal('ok'), Type.Literal('failed')], {
  description: '`ok`: the last poll succeeded; `failed`: the gateway cannot poll the controller (no connection, or every read fails).',
})

export const ControllerReportSchema = Type.Object(
  {
    controllerId: Type.String({ minLength: 1, maxLength: 100, description: 'A controller assigned to this gateway.' }),
    communication: Communication,
    lastGoodPollAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The last poll that succeeded; null: none yet.' }),
    errorCount: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Poll errors since the gateway started.' }),
    lastError: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()], { description: 'The last poll error, as the gateway words it.' })),
  },
  { additionalProperties: false },
)

export const EdgeHeartbeatBody = Type.Object(
  {
    gatewayVersion: Type.String({ minLength: 1, maxLength: 100, description: "The gateway software's version.", examples: ['2.4.1'] }),
    faulted: Type.Optional(Type.Boolean({ description: 'The gateway reports a fault of its own (then it is `faulted`). Default false.' })),
    message: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()], { description: 'A note from the gateway, shown with its state.' })),
    controllers: Type.Array(ControllerReportSchema, {
      maxItems: MAX_HEARTBEAT_CONTROLLERS,
      description: `Each controller the gateway polls, at most once (0 to ${MAX_HEARTBEAT_CONTROLLERS}).`,
    }),
  },
  { $id: 'EdgeHeartbeatBody', additionalProperties: false },
)
export type EdgeHeartbeat = Static<typeof EdgeHeartbeatBody>

const State = Type.Union([Type.Literal('online'), Type.Literal('stale'), Type.Literal('faulted')])
const At = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })

export const EdgeControllerStatusSchema = Type.Object(
  {
    controllerId: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    state: Type.Union([Type.Literal('online'), Type.Literal('stale'), Type.Literal('faulted')], {
      description: '`stale`: not reported by this gateway within the stale time; `faulted`: reported `failed`; `online`: reported `ok`.',
    }),
    communication: Type.Union([Communication, Type.Null()], { description: 'As last reported by this gateway; null: never.' }),
    lastGoodPollAt: At('As last reported.'),
    errorCount: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    reportedAt: At('When this gateway last reported the controller (server time).'),
  },
  { additionalProperties: false },
)

export const EdgeStatusSchema = Type.Object(
  {
    siteId: Type.String(),
    edgeId: Type.String(),
    state: State,
    lastHeartbeatAt: At('The last heartbeat (server time); null: none yet.'),
    gatewayVersion: Type.Union([Type.String(), Type.Null()]),
    faulted: Type.Boolean({ description: 'Whether the last heartbeat reported a fault of the gateway itself.' }),
    message: Type.Union([Type.String(), Type.Null()]),
    staleAfterMs: Type.Integer({ description: 'The stale time in force (`SITEGRID_EDGE_STALE_AFTER_MS`).' }),
    controllers: Type.Array(EdgeControllerStatusSchema, { description: 'The controllers assigned to the gateway, by id.' }),
  },
  { additionalProperties: false },
)
export type EdgeStatus = Static<typeof EdgeStatusSchema>

export const EdgeStatusListSchema = Type.Object(
  { items: Type.Array(EdgeStatusSchema, { description: 'Every gateway with a controller assigned, by edge id.' }) },
  { $id: 'EdgeStatusList', additionalProperties: false },
)

export const HeartbeatResultSchema = Type.Object(
  {
    accepted: Type.Integer(),
    refused: Type.Integer(),
    results: Type.Array(
      Type.Object(
        {
          controllerId: Type.String(),
          status: Type.Union([Type.Literal('accepted'), Type.Literal('refused')]),
          code: Type.Optional(Type.String({ description: 'Why a report was refused: `ControllerNotOnEdge`.' })),
          detail: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
      { description: 'One entry per reported controller, in the order sent.' },
    ),
    status: EdgeStatusSchema,
  },
  { $id: 'EdgeHeartbeatResult', additionalProperties: false },
)
export type HeartbeatResult = Static<typeof HeartbeatResultSchema>
