import { Type, type Static } from 'typebox'
import { MAX_INSTANCE_ID_LENGTH, MAX_TAG_KEY_LENGTH, MAX_TEXT_LENGTH, MAX_TIMESTAMP_LENGTH } from './service/live-samples.ts'

/** POST …/historian/samples and GET/PUT …/historian/retention (issue 30). */

export const LiveSamplesQuery = Type.Object(
  {
    batchKey: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9._:-]+$',
      description: 'Chosen by the gateway, unique per push within the site: a resend with the same batchKey stores nothing again and answers the first answer.',
    }),
  },
  { additionalProperties: false },
)

const Quality = Type.Union([Type.Literal('good'), Type.Literal('uncertain'), Type.Literal('bad'), Type.Integer({ minimum: 0, maximum: 255 })], {
  description: '`good`, `uncertain`, `bad` or an OPC DA quality code 0–255 (192 and above good, 64 and above uncertain); default good.',
})

const LiveSampleSchema = Type.Object(
  {
    instanceId: Type.String({ minLength: 1, maxLength: MAX_INSTANCE_ID_LENGTH }),
    tagKey: Type.String({ minLength: 1, maxLength: MAX_TAG_KEY_LENGTH, description: "One of the instance's `tagMappings` keys." }),
    ts: Type.Union([Type.String({ minLength: 1, maxLength: MAX_TIMESTAMP_LENGTH }), Type.Integer()], {
      description: 'ISO 8601 with `Z` or an offset, or integer milliseconds since the Unix epoch.',
    }),
    value: Type.Optional(
      Type.Number({
        description:
          'A numeric value from -1e100 to 1e100, 0 or at least 1e-100 in magnitude (else the sample is refused, with its reason); exactly one of `value` and `text`.',
      }),
    ),
    text: Type.Optional(Type.String({ maxLength: MAX_TEXT_LENGTH, description: 'A text state; exactly one of `value` and `text`.' })),
    quality: Type.Optional(Quality),
  },
  { additionalProperties: false },
)

export const LiveSamplesBody = Type.Object({ samples: Type.Array(LiveSampleSchema) }, { additionalProperties: false })
export type LiveSamplesBody = Static<typeof LiveSamplesBody>

export const LiveAnswerSchema = Type.Object(
  {
    batchKey: Type.String({ description: "The gateway's batch key." }),
    historianBatchId: Type.String({ description: 'The historian batch (format `live`) that holds the samples: GET /api/historian/import-batches/{id}.' }),
    received: Type.Integer({ description: 'Samples in the push: stored + duplicates + refused.' }),
    stored: Type.Integer(),
    duplicates: Type.Integer({ description: 'Samples at a series and timestamp already stored (the stored value kept), or repeated later in the push.' }),
    refused: Type.Integer(),
    refusals: Type.Array(Type.Object({ index: Type.Integer(), reason: Type.String() }, { additionalProperties: false }), {
      description: "Every refused sample: its index (the JSON array's, or the line's from 0) and why.",
    }),
    replayed: Type.Boolean({ description: "True when this batchKey was pushed before: nothing was stored now, the counts are the first push's." }),
  },
  { additionalProperties: false },
)

export const RetentionBody = Type.Object(
  {
    retentionDays: Type.Union([Type.Integer({ minimum: 1, maximum: 36_500 }), Type.Null()], {
      description: 'Samples older than this many days are deleted by the retention job; null keeps every sample.',
    }),
  },
  { additionalProperties: false },
)

const nullableIso = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })

export const RetentionSchema = Type.Object(
  {
    siteId: Type.String(),
    retentionDays: Type.Union([Type.Integer(), Type.Null()]),
    lastRunAt: nullableIso("The retention job's last run over this site; null before the first."),
    samplesDeleted: Type.Integer({ description: 'Samples the last run deleted.' }),
    oldestKept: nullableIso('The oldest sample left after the last run; null when none is left or before the first run.'),
  },
  { additionalProperties: false },
)
