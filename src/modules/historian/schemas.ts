import { Type, type Static, type TSchema } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'
import { FORMAT_NAMES } from './parse/index.ts'

const Iso = Type.String({ format: 'date-time' })
const Choice = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  )
const NullableIso = Type.Union([Iso, Type.Null()])

const RejectionSchema = Type.Object(
  {
    line: Type.Integer({ description: '1-based line of trend_csv where the row starts.' }),
    reason: Type.String(),
    column: Type.Optional(Type.String({ description: 'The column (tag) of a wide layout whose cell was rejected.' })),
  },
  { additionalProperties: false },
)

const TagCoverageSchema = Type.Object(
  {
    historianTag: Type.String(),
    instanceId: Type.String(),
    tagKey: Type.String(),
    unit: Type.Union([Type.String(), Type.Null()]),
    scale: Type.Number({ description: 'Applied to numeric values.' }),
    samples: Type.Integer({ description: 'Samples read for the tag (collisions included).' }),
    firstTs: NullableIso,
    lastTs: NullableIso,
  },
  { additionalProperties: false },
)

const CollisionValueSchema = Type.Object(
  {
    batchId: Type.String({ description: 'The batch the value comes from.' }),
    value: Type.Union([Type.Number(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    quality: Type.String({ description: 'good, uncertain or bad' }),
  },
  { additionalProperties: false },
)

const UnmappedTagsSchema = Type.Array(Type.Object({ tag: Type.String(), rows: Type.Integer() }, { additionalProperties: false }), {
  description:
    'Historian tags of the file that mapping_csv does not name, with their rejected rows: ' +
    'the first 1 000 such tags in file order. Rows of further unmapped tags are rejected and counted in `rowsRejected` and ' +
    'the rejections report like the others, but not listed here.',
})

export const CollisionSchema = Type.Object(
  {
    instanceId: Type.String(),
    tagKey: Type.String(),
    ts: Iso,
    resolution: Type.Union([Type.Literal('keptStored'), Type.Literal('replacedStored')], {
      description:
        "`keptStored`: without force, the value another batch stored was kept and this batch's discarded. `replacedStored`: " +
        "with force, this batch's value replaced the stored one (latest value wins).",
    }),
    kept: CollisionValueSchema,
    discarded: CollisionValueSchema,
  },
  { additionalProperties: false },
)

/** What a batch and its summary share (batch-view.ts batchFields). */
const BatchFields = {
  id: Type.Union([Type.String({ description: '`bat_…`' }), Type.Null()], { description: 'Null for a dry run (nothing stored).' }),
  siteId: Type.String(),
  format: Type.String({ description: 'The layout used: the one sent, or the one `auto` chose.' }),
  status: Type.String({
    description:
      '`running` (invisible to reads), `complete`, `failed` (nothing kept: `samplesStored` 0), `dryRun`, or `open` (a sitegrid extension, ' +
      "format `live` only: a gateway's batch of the current 10-minute window, read at once and still growing with each push; " +
      '`completedAt` null until the first push after the window, or the close job a minute at most after it, makes it `complete`).',
    'x-sitegrid-extension-values': ['open'],
  }),
  isDryRun: Type.Boolean(),
  isForced: Type.Boolean({ description: 'Imported with force=true: its samples replaced stored ones at the same tag and timestamp.' }),
  forcedOver: Type.Union([Type.String(), Type.Null()], { description: 'The earlier batch of the same two files, when forced over one.' }),
  rowsRead: Type.Integer({ description: 'Data rows of trend_csv (header, blank, `*` comment and `@` directive lines are not data rows).' }),
  samplesStored: Type.Integer({
    description:
      'Samples of the batch, counted in the database when it completes (with force, ' +
      'the ones that replaced a stored value included). A failed batch keeps nothing: 0. A dry run: ' +
      'what it would store (collisions with stored samples are not looked for).',
  }),
  rowsRejected: Type.Integer({
    description:
      'Rejected values, each with its reason in `rejections`: rows (in wide layouts single cells, ' +
      'or a row refused whole counted once), unmapped tags included.',
  }),
  collisions: Type.Integer({ description: 'Without force: samples not stored because another batch holds a value at that tag and timestamp.' }),
  replaced: Type.Integer({ description: 'With force: stored values this batch replaced (part of `samplesStored`).' }),
  valuesRead: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'What the accounting counts: one a data row in the one-sample-a-row layouts (equal to `rowsRead`); ' +
      'in `wide` and `citect-pa`, one a tag column of the header for each data row (a cell missing at the end of a short row ' +
      'is an empty value), or one for a row refused whole (its time or Milliseconds, too many fields). ' +
      'Each value has exactly one outcome: valuesRead = samplesStored + collisions + rowsRejected + duplicatesInFile + ' +
      'sentinelValues + emptyValues (`replaced` is part of samplesStored). Null (as are the three below) while the batch runs, ' +
      'for a failed batch, and for batches imported before it was counted.',
  }),
  duplicatesInFile: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'Samples not stored because a later row of the same file has the same series (instance and tag key) and timestamp; ' +
      "the later row's value is kept. A dry run finds those within the same 50 000 samples only.",
  }),
  sentinelValues: Type.Union([Type.Integer(), Type.Null()], { description: 'Values equal to one of `sentinels`: no sample, no rejection.' }),
  emptyValues: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Values that hold nothing (a blank cell, `NA`, `GATED`, SQL `NULL`, a cell missing at the end of a wide row): no sample, no rejection.',
  }),
  timeRange: Type.Union([Type.Object({ from: Iso, to: Iso }, { additionalProperties: false }), Type.Null()]),
  contentHash: Type.Object(
    { trendCsv: Type.String(), mappingCsv: Type.String() },
    { additionalProperties: false, description: '`sha256:` + hex of each file as sent; empty while running.' },
  ),
  trendFileName: Type.Union([Type.String(), Type.Null()]),
  separator: Type.Union([Type.String(), Type.Null()]),
  timezone: Type.String({ description: "IANA zone used for local timestamps (the `timezone` part, or the site's)." }),
  progress: Type.Object(
    {
      bytesRead: Type.Integer(),
      bytesTotal: Type.Union([Type.Integer(), Type.Null()], { description: "The request's Content-Length, when sent." }),
      rowsRead: Type.Integer(),
      samplesWritten: Type.Integer(),
    },
    { additionalProperties: false, description: 'Updated after every write transaction while running.' },
  ),
  error: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.String(),
  createdAt: Iso,
  updatedAt: Iso,
  completedAt: NullableIso,
}

const RejectionsCount = Type.Integer()
const RejectionsUrl = Type.Union([Type.String(), Type.Null()], { description: 'The downloadable report (JSON, or CSV with ?as=csv).' })
const CollisionsCount = Type.Integer({ description: 'Every collision: `collisions` without force, `replaced` with force.' })
const CollisionsListed = Type.Integer({
  description: 'How many the report lists (the first 1 000, in file order without force; by instance, tag and time with force).',
})
const CollisionsUrl = Type.Union([Type.String(), Type.Null()], { description: 'Every listed collision, paged.' })

export const BatchSchema = Type.Object(
  {
    ...BatchFields,
    rejections: Type.Object(
      {
        count: RejectionsCount,
        first: Type.Array(RejectionSchema, { description: 'The first rejections (maxRejections, default 100), in file order.' }),
        reportUrl: RejectionsUrl,
      },
      { additionalProperties: false },
    ),
    collisionReport: Type.Object(
      {
        count: CollisionsCount,
        listed: CollisionsListed,
        first: Type.Array(CollisionSchema, { description: 'The first 20 listed.' }),
        reportUrl: CollisionsUrl,
      },
      { additionalProperties: false },
    ),
    unmappedTags: UnmappedTagsSchema,
    tags: Type.Array(TagCoverageSchema),
  },
  { $id: 'HistorianBatch', additionalProperties: false },
)
export type Batch = Static<typeof BatchSchema>

export const BatchSummarySchema = Type.Object(
  {
    ...BatchFields,
    rejections: Type.Object({ count: RejectionsCount, reportUrl: RejectionsUrl }, { additionalProperties: false }),
    collisionReport: Type.Object({ count: CollisionsCount, listed: CollisionsListed, reportUrl: CollisionsUrl }, { additionalProperties: false }),
    unmappedTagCount: Type.Integer({ description: 'How many unmapped tags the batch lists (at most 1 000).' }),
    tagCount: Type.Integer({ description: 'How many historian tags the batch covers (its `tags`).' }),
  },
  {
    $id: 'HistorianBatchSummary',
    additionalProperties: false,
    description:
      'A batch as listed: the lists that grow with the file (`tags`, `unmappedTags`, the first rejections and collisions) ' +
      'are counted here; read the batch for them.',
  },
)

export const BatchPage = Page(BatchSummarySchema, 'Batches of the site, newest first, as summaries.')

export const ListBatchesQuery = Type.Object(
  {
    siteId: Type.String({ minLength: 1, maxLength: 50, description: "The site's code." }),
    ...PageQuery({ defaultLimit: 50, maxLimit: 200 }),
  },
  { additionalProperties: false },
)

export const BatchParams = Type.Object({ batchId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false })

export const RejectionsQuery = Type.Object(
  {
    as: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { default: 'json', description: '`csv` downloads `line,column,reason`.' })),
  },
  { additionalProperties: false },
)

export const RejectionReportSchema = Type.Object(
  {
    batchId: Type.String(),
    count: Type.Integer({ description: 'Every rejection; `rejections` holds the first ones.' }),
    rejections: Type.Array(RejectionSchema),
    unmappedTags: UnmappedTagsSchema,
  },
  { additionalProperties: false },
)

export const CollisionsQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }),
  },
  { additionalProperties: false },
)

export const CollisionReportSchema = Type.Object(
  {
    batchId: Type.String(),
    count: Type.Integer({ description: 'Every collision of the batch; the pages hold the first `listed`.' }),
    listed: Type.Integer(),
    items: Type.Array(CollisionSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { additionalProperties: false },
)

export const SeriesParams = Type.Object({ siteId: Type.String({ minLength: 1, maxLength: 50 }) }, { additionalProperties: false })

const Mode = (description: string) =>
  Type.Union([Type.Literal('raw'), Type.Literal('aggregate'), Type.Literal('interpolated'), Type.Literal('at'), Type.Literal('plot')], { description })
export type SeriesMode = Static<ReturnType<typeof Mode>>

/** The options of a read shared by the one-tag query and the multi-tag body. */
const ReadOptions = {
  mode: Type.Optional(
    Mode(
      '`raw` (default without `bucket`): the samples. `aggregate` (default with `bucket`): per bucket. `interpolated`: the signal every ' +
        '`interval` from `from`. `at`: the signal at `at`. `plot`: at most 4 samples per pixel column of `width`.',
    ),
  ),
  from: Type.Optional(Type.String({ description: 'RFC 3339, inclusive. Required by `interpolated` and `plot`.' })),
  to: Type.Optional(Type.String({ description: 'RFC 3339, exclusive. Required by `interpolated` and `plot`.' })),
  bucket: Type.Optional(Type.String({ description: 'Width of time buckets: 500ms, 10s, 15m, 1h, 1d (starts: multiples of it since 1970-01-01T00:00Z).' })),
  interval: Type.Optional(
    Type.String({ description: '`interpolated`: the step between values from `from`, same form as `bucket`; `d` steps are local days in `timezone`.' }),
  ),
  at: Type.Optional(Type.String({ description: '`at`: the RFC 3339 time to read the signal at.' })),
  width: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: '`plot`: pixel columns across [from, to).' })),
  interpolation: Type.Optional(
    Type.Union([Type.Literal('linear'), Type.Literal('step')], {
      description:
        "How the tag's samples join: `linear` or `step` (a discrete tag: each value holds until the next); default the tag's stored mark (`…/historian/tags`), else linear.",
    }),
  ),
  includeBad: Type.Optional(Type.Boolean({ description: 'Use samples of bad quality (under 64) too in every mode but `raw`. Default false.' })),
  timezone: Type.Optional(Type.String({ description: "IANA zone of `d` widths (local days); default the site's." })),
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      description: '`csv`: every row of the query from `cursor` on, streamed as text/csv. Default json.',
    }),
  ),
}

export const SeriesQuerySchema = Type.Object(
  {
    instanceId: Type.String({ minLength: 1, maxLength: 200 }),
    tag: Type.String({ minLength: 1, maxLength: 200, description: "The instance's tag key (mapping `tag_key`)." }),
    ...ReadOptions,
    ...PageQuery({ defaultLimit: 1000, maxLimit: 10_000 }),
  },
  { additionalProperties: false },
)
export type SeriesQuery = Static<typeof SeriesQuerySchema>

export const MultiSeriesBody = Type.Object(
  {
    series: Type.Array(
      Type.Object(
        {
          instanceId: Type.String({ minLength: 1, maxLength: 200 }),
          tag: Type.String({ minLength: 1, maxLength: 200 }),
          interpolation: ReadOptions.interpolation,
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100, description: 'The instance/tag pairs, 1 to 100; `interpolation` here overrides the one below for that tag.' },
    ),
    ...ReadOptions,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1000, description: 'Rows per tag (default 1 000).' })),
  },
  { additionalProperties: false },
)
export type MultiSeriesQuery = Static<typeof MultiSeriesBody>

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const SeriesSchema = Type.Object(
  {
    instanceId: Type.String(),
    tag: Type.String(),
    mode: Mode('The mode read.'),
    bucket: Nullable(Type.String()),
    samples: Nullable(
      Type.Array(
        Type.Object(
          {
            ts: Iso,
            value: Nullable(Type.Number()),
            text: Nullable(Type.String()),
            quality: Type.String({ description: 'good, uncertain or bad' }),
            batchId: Type.String(),
          },
          { additionalProperties: false },
        ),
        { description: '`raw`: the samples (text states and every quality included), oldest first.' },
      ),
    ),
    buckets: Nullable(
      Type.Array(
        Type.Object(
          {
            start: Type.String({
              format: 'date-time',
              description: 'A multiple of the width since 1970-01-01T00:00Z; 0000-01-01T00:00:00.000Z for a bucket that begins before it.',
            }),
            min: Type.Number(),
            max: Type.Number(),
            mean: Type.Number({ description: 'Of the samples, each counted once.' }),
            timeWeightedAverage: Nullable(Type.Number({ description: 'Of the signal over the bucket (within [from, to)), see the description.' })),
            stdDev: Nullable(Type.Number({ description: 'Sample standard deviation (n − 1) of the samples; null for one sample.' })),
            first: Type.Number(),
            last: Type.Number(),
            count: Type.Integer(),
          },
          { additionalProperties: false },
        ),
        { description: '`aggregate`: buckets of numeric samples (text states are left out), oldest first; empty buckets are absent.' },
      ),
    ),
    points: Nullable(
      Type.Array(Type.Object({ ts: Iso, value: Nullable(Type.Number({ description: 'Null before the first sample.' })) }, { additionalProperties: false }), {
        description: '`interpolated`, `at` and `plot`: values of the signal, oldest first.',
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { $id: 'HistorianSeries', additionalProperties: false },
)
export type Series = Static<typeof SeriesSchema>

export const MultiSeriesSchema = Type.Object(
  { items: Type.Array(SeriesSchema, { description: 'One a pair, in the order asked; each pages on with GET …/series and its `nextCursor`.' }) },
  { additionalProperties: false },
)

const CsvFile = (description: string) => Type.String({ format: 'binary', contentMediaType: 'text/csv', description })

/**
 * The parts of the multipart upload (spec 4.3), for the OpenAPI document only: the route reads them itself
 * (service/form.ts checks each, a missing or bad one is a 400 naming the part; http/openapi.test.ts holds the two lists equal).
 */
export const UploadForm = Type.Object(
  {
    site_id: Type.String({ description: "The site's code." }),
    format: Choice(['auto', ...FORMAT_NAMES], 'The layout of `trend_csv`; `auto` detects it.'),
    trend_csv: CsvFile('The historian export. Send it last to have it streamed straight into the database.'),
    mapping_csv: CsvFile('`historian_tag,instance_id,tag_key[,unit][,scale]`: which instance and tag each historian tag is.'),
    // No `default`: generators (openapi-typescript) would make a part with one required.
    force: Type.Optional(Type.Boolean({ description: 'Import the same two files for the site again (latest value wins). Default false.' })),
    dryRun: Type.Optional(Type.Boolean({ description: 'Answer 200 with the report and store nothing. Default false.' })),
    timezone: Type.Optional(Type.String({ description: "IANA time zone of local times in the file; default the site's." })),
    separator: Type.Optional(Choice([',', ';', 'tab'], 'Column separator; detected when absent.')),
    decimal: Type.Optional(Choice(['.', ','], 'Decimal mark; a decimal comma needs another separator.')),
    dateOrder: Type.Optional(Choice(['dmy', 'mdy', 'ymd'], 'Order of day, month and year in numeric dates.')),
    qualityScale: Type.Optional(Choice(['percent', 'opc'], 'How quality values are read.')),
    sentinels: Type.Optional(Type.String({ description: 'Comma-separated values meaning "no value" (`-9999,NaN,I/O Timeout`).' })),
    maxRejections: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000, description: 'How many rejected rows the report keeps with their reason (default 100); all are counted.' }),
    ),
  },
  { $id: 'HistorianUploadForm', additionalProperties: false },
)

const Interpolation = (description: string) => Type.Union([Type.Literal('linear'), Type.Literal('step')], { description })

export const TagMarkParams = Type.Object(
  {
    siteId: Type.String({ minLength: 1, maxLength: 50 }),
    instanceId: Type.String({ minLength: 1, maxLength: 200 }),
    tag: Type.String({ minLength: 1, maxLength: 200, description: "A tag key of the instance's `tagMappings`." }),
  },
  { additionalProperties: false },
)

export const TagMarkBody = Type.Object(
  { interpolation: Interpolation('`step`: a discrete tag, each value held until the next; `linear`: joined linearly (the default of an unmarked tag).') },
  { additionalProperties: false },
)

export const TagMarkSchema = Type.Object(
  {
    instanceId: Type.String(),
    tag: Type.String(),
    interpolation: Interpolation("How the series reads join the tag's samples when the query names no `interpolation`."),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'HistorianTagMark', additionalProperties: false },
)

export const TagMarkPage = Page(TagMarkSchema, 'The marked tags of the site, by instance id then tag key.')

export const ListTagMarksQuery = Type.Object({ ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }) }, { additionalProperties: false })
