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
