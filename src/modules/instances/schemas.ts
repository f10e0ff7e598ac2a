import { Type, type Static, type TSchema } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'
import { ID_PATTERN, INSTANCE_LIMITS as L } from './limits.ts'

const Nullable = <T extends TSchema>(s: T, description?: string) => Type.Union([s, Type.Null()], description ? { description } : {})

const InstanceId = Type.String({
  pattern: ID_PATTERN,
  description:
    `Given by the caller: 1 to ${L.idMaxLength} letters, digits, \`.\`, \`_\`, \`:\` and \`-\`, ` +
    `starting with a letter or digit; unique in the site (409 \`Conflict\`).`,
  examples: ['CV-101'],
})
const Name = Type.String({ minLength: 1, maxLength: L.nameMaxLength, description: `1 to ${L.nameMaxLength} characters.` })
const TypeId = Type.String({
  minLength: 1,
  maxLength: L.typeIdMaxLength,
  description: `The equipment type (template), 1 to ${L.typeIdMaxLength} characters.`,
  examples: ['conveyor'],
})
const TypeVersion = Nullable(
  Type.String({ maxLength: L.typeVersionMaxLength }),
  `The type's version, 0 to ${L.typeVersionMaxLength} characters (a field, not an API version); null clears it.`,
)
const AssetNumber = Type.String({ minLength: 1, maxLength: L.assetNumberMaxLength, description: `1 to ${L.assetNumberMaxLength} characters.` })
const ControllerId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'A controller of the same site (`ctl_…`); otherwise 422 `UnprocessableEntity` naming `/controllerId`.',
})
const Area = Nullable(Type.String({ maxLength: L.areaMaxLength }), `Plant area, 0 to ${L.areaMaxLength} characters; null clears it.`)

export const TagMappings = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: L.tagMappingsMaxKeys,
  propertyNames: { minLength: 1, maxLength: L.tagKeyMaxLength },
  additionalProperties: { type: 'string', minLength: 1, maxLength: L.tagValueMaxLength },
  description:
    `Logical tag name → controller tag address (e.g. \`"running": "Program:Main.CV101.Run"\`). ` +
    `Up to ${L.tagMappingsMaxKeys} keys of 1 to ${L.tagKeyMaxLength} characters, ` +
    `values of 1 to ${L.tagValueMaxLength} characters, at most ${L.tagMappingsMaxBytes} bytes as JSON. Replaced as a whole. ` +
    `The keys count toward the controller's poll budget.`,
  examples: [{ running: 'Program:Main.CV101.Run', speed: 'Program:Main.CV101.Speed' }],
})

export const InstanceConfig = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  maxProperties: L.configMaxKeys,
  propertyNames: { minLength: 1, maxLength: L.configKeyMaxLength },
  description:
    `Any JSON values: up to ${L.configMaxKeys} top-level keys of 1 to ${L.configKeyMaxLength} characters, nested at most ${L.configMaxDepth} levels deep, ` +
    `at most ${L.configMaxBytes} bytes as JSON. Replaced as a whole.`,
})

export const CreateInstanceBody = Type.Object(
  {
    id: InstanceId,
    name: Name,
    typeId: TypeId,
    typeVersion: Type.Optional(TypeVersion),
    assetNumber: AssetNumber,
    controllerId: ControllerId,
    area: Type.Optional(Area),
    tagMappings: Type.Optional(TagMappings),
    config: Type.Optional(InstanceConfig),
  },
  { $id: 'CreateInstanceBody', additionalProperties: false, description: 'Spec 2.4.' },
)
export type CreateInstanceInput = Static<typeof CreateInstanceBody>

export const UpdateInstanceBody = Type.Object(
  {
    name: Type.Optional(Name),
    typeId: Type.Optional(TypeId),
    typeVersion: Type.Optional(TypeVersion),
    assetNumber: Type.Optional(AssetNumber),
    controllerId: Type.Optional(ControllerId),
    area: Type.Optional(Area),
    tagMappings: Type.Optional(TagMappings),
    config: Type.Optional(InstanceConfig),
  },
  {
    $id: 'UpdateInstanceBody',
    additionalProperties: false,
    description:
      'The fields of spec 2.4 but `id`, all optional: an absent field is left as it is, ' +
      'a null clears `typeVersion` or `area`; `tagMappings` and `config` are replaced as a whole.',
  },
)
export type UpdateInstanceInput = Static<typeof UpdateInstanceBody>

export const InstanceSchema = Type.Object(
  {
    id: Type.String(),
    siteId: Type.String({ description: "The site's code." }),
    name: Type.String(),
    typeId: Type.String(),
    typeVersion: Nullable(Type.String()),
    assetNumber: Type.String(),
    controllerId: Type.String(),
    area: Nullable(Type.String()),
    tagMappings: Type.Record(Type.String(), Type.String()),
    config: Type.Record(Type.String(), Type.Unknown()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Instance', additionalProperties: false },
)
export type Instance = Static<typeof InstanceSchema>

export const InstancePage = Page(InstanceSchema, 'Instances ordered by id.')

export const ListInstancesQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }),
    controllerId: Type.Optional(Type.String({ maxLength: 100, description: 'Only instances bound to this controller.' })),
    area: Type.Optional(Type.String({ maxLength: L.areaMaxLength, description: 'Only instances of this area (exact match).' })),
    typeId: Type.Optional(Type.String({ maxLength: L.typeIdMaxLength, description: 'Only instances of this type (exact match).' })),
  },
  { additionalProperties: false },
)
export type ListInstancesQueryInput = Static<typeof ListInstancesQuery>

const SiteId = Type.String({ maxLength: 200, description: "The site's code." })
export const SiteScopedParams = Type.Object({ siteId: SiteId }, { additionalProperties: false })
export const InstanceParams = Type.Object({ siteId: SiteId, instanceId: Type.String({ maxLength: 200 }) }, { additionalProperties: false })

export const BulkQuery = Type.Object(
  {
    dryRun: Type.Optional(Type.Boolean({ default: false, description: 'true: report what would happen and write nothing.' })),
  },
  { additionalProperties: false },
)

export const BulkLineSchema = Type.Object(
  {
    line: Type.Integer({ description: 'JSON: the 1-based position in the array. CSV: the line number in the file (the header is line 1).' }),
    id: Nullable(Type.String(), 'The instance id on that line, when it has one.'),
    outcome: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('unchanged'), Type.Literal('refused')]),
    errors: Type.Optional(
      Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() }, { additionalProperties: false }), {
        description: "Why the line is refused; pointers are inside the line's instance.",
      }),
    ),
  },
  { additionalProperties: false },
)

export const BulkReportSchema = Type.Object(
  {
    dryRun: Type.Boolean(),
    created: Type.Integer(),
    updated: Type.Integer(),
    unchanged: Type.Integer(),
    refused: Type.Integer(),
    lines: Type.Array(BulkLineSchema, { description: 'One entry per line, in order.' }),
  },
  { $id: 'InstanceBulkReport', additionalProperties: false },
)
export type BulkReport = Static<typeof BulkReportSchema>

export const BulkJsonBody = Type.Array(CreateInstanceBody, {
  maxItems: L.bulkMaxItems,
  description:
    `Up to ${L.bulkMaxItems} instance bodies (spec 2.4). Each is checked on its own: a bad one is reported by line, ` + `not a 400 for the whole request.`,
})
export const BulkCsvBody = Type.String({
  description:
    'CSV (RFC 4180, comma, header row). Columns: `id`, `name`, `typeId`, `assetNumber`, `controllerId` required; `typeVersion`, `area`, ' +
    '`config` (a JSON object), `tagMappings` (a JSON object) optional; each `tag:NAME` column adds the mapping NAME → cell. An empty cell is an absent field.',
  examples: ['id,name,typeId,assetNumber,controllerId,area,tag:running\nCV-101,Conveyor 101,conveyor,A-101,ctl_01J…,Stockpile,Program:Main.CV101.Run'],
})
