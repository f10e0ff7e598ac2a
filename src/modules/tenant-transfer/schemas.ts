import { Type, type Static } from 'typebox'

export const OrgSlugParams = Type.Object({ slug: Type.String({ maxLength: 63 }) }, { additionalProperties: false })

export const ExportQuery = Type.Object(
  {
    siteId: Type.Optional(
      Type.String({
        maxLength: 50,
        description: 'Export one site (its code) instead of the whole organisation; members, domains and key metadata are organisation-wide and left out.',
      }),
    ),
  },
  { additionalProperties: false },
)

export const ImportQuery = Type.Object(
  {
    force: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Replace existing records that differ. Without it, an import that would overwrite anything changes nothing and answers 409 with the conflicts.',
      }),
    ),
    dryRun: Type.Optional(Type.Boolean({ default: false, description: 'Answer what the import would create, replace and leave alone, without writing.' })),
    uploadId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Apply this upload (the `uploadId` its PUT …/tenant/import/package answered) and no other: 409 `Conflict` (`reason` `replaced by a later upload`) when a later upload replaced it.',
      }),
    ),
  },
  { additionalProperties: false },
)

const Counts = Type.Record(Type.String(), Type.Object({ create: Type.Integer(), replace: Type.Integer(), unchanged: Type.Integer() }))

export const ImportReportSchema = Type.Object(
  {
    dryRun: Type.Boolean(),
    force: Type.Boolean(),
    source: Type.Object({ orgSlug: Type.String(), site: Type.Union([Type.String(), Type.Null()]), sourceMode: Type.String(), exportedAt: Type.String() }),
    parts: Counts,
  },
  { additionalProperties: false },
)
export type ImportReport = Static<typeof ImportReportSchema>

/** The package a PUT …/tenant/import/package streams (the route reads it itself), for the OpenAPI document only. */
export const PackageFile = Type.String({
  format: 'binary',
  contentMediaType: 'application/gzip',
  description: 'A package made by GET …/tenant/export (gzip-compressed JSON lines), sent as it is.',
})

export const StagedSchema = Type.Object(
  {
    uploadId: Type.String({ description: 'This upload; POST …/tenant/import?uploadId= applies it and no later upload.' }),
    bytes: Type.Integer(),
    formatVersion: Type.Integer(),
    sourceMode: Type.String(),
    exportedAt: Type.String(),
    site: Type.Union([Type.String(), Type.Null()]),
    counts: Type.Record(Type.String(), Type.Integer(), { description: 'Records per part.' }),
  },
  { additionalProperties: false },
)
