import { createReadStream } from 'node:fs'
import { basename } from 'node:path'
import { CLI_ACTOR } from '../identity.ts'
import type { BatchView } from '../modules/historian/service/batch-view.ts'
import type { UploadPart } from '../modules/historian/service/index.ts'
import { JSON_OPTION, UsageError, type Command, type CommandIo } from './command.ts'
import { onSite } from './errors.ts'
import { ORG_OPTION, siteOrg } from './org-option.ts'
import { cancellable, fileSize, Progress } from './progress.ts'
import { withServices } from './runtime.ts'
import { cliSiteServices } from './site-services.ts'
import { record, table } from './table.ts'

type Values = Record<string, string | boolean | undefined>

/** The upload's text parts (POST /api/historian/import-batches) as options: option → part. */
const PART_OF_OPTION: Record<string, string> = {
  site: 'site_id',
  format: 'format',
  timezone: 'timezone',
  separator: 'separator',
  decimal: 'decimal',
  'date-order': 'dateOrder',
  'quality-scale': 'qualityScale',
  sentinels: 'sentinels',
  'max-rejections': 'maxRejections',
}

/** The upload's parts in the order that streams the trend file straight into the database (trend_csv last). */
async function* uploadParts(values: Values, mapping: string, trend: AsyncIterable<Uint8Array>, trendName: string): AsyncGenerator<UploadPart> {
  for (const [option, name] of Object.entries(PART_OF_OPTION)) {
    const value = option === 'format' ? (values.format ?? 'auto') : values[option]
    if (typeof value === 'string') yield { kind: 'field', name, value }
  }
  if (values.force) yield { kind: 'field', name: 'force', value: 'true' }
  if (values['dry-run']) yield { kind: 'field', name: 'dryRun', value: 'true' }
  yield { kind: 'file', name: 'mapping_csv', filename: basename(mapping), stream: createReadStream(mapping) }
  yield { kind: 'file', name: 'trend_csv', filename: trendName, stream: trend }
}

const count = (n: number | null) => (n === null ? '-' : n.toLocaleString('en-US'))

function showBatch(io: CommandIo, batch: BatchView): void {
  const fields: Array<[string, string]> = [
    ['batch', batch.id ?? '(dry run: nothing stored)'],
    ['status', batch.status],
    ['site', batch.siteId],
    ['format', `${batch.format}, separator ${JSON.stringify(batch.separator)}, time zone ${batch.timezone}`],
    ['rows read', count(batch.rowsRead)],
    ['samples stored', `${count(batch.samplesStored)}${batch.isForced ? ` (${count(batch.replaced)} replaced)` : ''}`],
    [
      'rejected',
      `${count(batch.rowsRejected)}${batch.rejections.first[0] ? ` (first: line ${batch.rejections.first[0].line}: ${batch.rejections.first[0].reason})` : ''}`,
    ],
    ['unmapped tags', `${batch.unmappedTags.length}${batch.unmappedTags.length ? ` (e.g. ${batch.unmappedTags[0]!.tag})` : ''}`],
    ['collisions', count(batch.collisions)],
    ['duplicates in file', count(batch.duplicatesInFile)],
    ['sentinel values', count(batch.sentinelValues)],
    ['empty values', count(batch.emptyValues)],
    ['time range', batch.timeRange ? `${batch.timeRange.from} to ${batch.timeRange.to}` : '-'],
  ]
  for (const line of record(fields)) io.out(line)
}

export const historianCommands: Command[] = [
  {
    path: ['historian', 'import'],
    usage: 'FILE --site CODE --mapping FILE [--format LAYOUT] [--timezone ZONE] [--separator S] [--decimal D] [--date-order O] [--dry-run] [--force] …',
    positionals: ['FILE'],
    summary:
      'Imports a historian trend export (FILE) into a site, as POST /api/historian/import-batches does: all or nothing, streamed from the file in transactions of 50 000 samples. Prints the batch (--json: as the API answers it). Ctrl-C cancels: nothing of the import is kept, exit 130.',
    options: {
      site: { type: 'string', value: 'CODE', description: "the site's code (required)" },
      mapping: {
        type: 'string',
        value: 'FILE',
        description: 'mapping CSV (required): historian_tag,instance_id,tag_key[,unit][,scale]; every instance must exist in the site',
      },
      format: {
        type: 'string',
        value: 'LAYOUT',
        description: 'auto (default), long, wide, ignition-tall, aveva-history, proficy, citect-pa or piconfig',
      },
      timezone: { type: 'string', value: 'ZONE', description: "IANA zone of times without an offset, e.g. Europe/Paris (default: the site's)" },
      separator: { type: 'string', value: 'S', description: "field separator: ',', ';' or tab (default: detected)" },
      decimal: { type: 'string', value: 'D', description: "decimal mark: '.' or ',' (default '.')" },
      'date-order': { type: 'string', value: 'ORDER', description: 'order of numeric dates: dmy, mdy or ymd (e.g. dmy for 01/03/2020 = 1 March)' },
      'quality-scale': { type: 'string', value: 'SCALE', description: 'numeric quality: percent (100 good, 0 bad) or opc (192 good)' },
      sentinels: {
        type: 'string',
        value: 'LIST',
        description: 'values that mean "no value", comma-separated (counted, not stored); a list starting with - takes =: --sentinels=-9999,NaN',
      },
      'max-rejections': { type: 'string', value: 'N', description: 'rejected rows listed with their reasons, 0 to 10000 (default 100; all are counted)' },
      'dry-run': { type: 'boolean', description: 'read and check the whole file and report; nothing is stored' },
      force: {
        type: 'boolean',
        description: 'import the same two files again, and replace stored samples at the same instance, tag and time (otherwise counted as collisions)',
      },
      ...ORG_OPTION,
      ...JSON_OPTION,
    },
    run: async ({ values, positionals }, io) => {
      if (typeof values.site !== 'string') throw new UsageError('--site CODE is required')
      const site = values.site
      if (typeof values.mapping !== 'string') throw new UsageError('--mapping FILE is required')
      const file = positionals[0]!
      const mapping = values.mapping
      fileSize(mapping, '--mapping')
      const totalBytes = fileSize(file, 'FILE')
      const batch = await withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
        const org = await siteOrg(orgs, config, values.org)
        const { historian } = await cliSiteServices(config, handle)
        return cancellable(process.stderr, async (signal) => {
          const label = `historian import ${basename(file)}`
          const progress = new Progress({ label, totalBytes, isCountingRows: true, sink: process.stderr, signal })
          const trend = progress.track(createReadStream(file, { highWaterMark: 256 * 1024 }))
          const imported = await onSite(org, site, () =>
            historian.importBatch(org.id, CLI_ACTOR, uploadParts(values, mapping, trend, basename(file)), { bytesTotal: totalBytes }),
          )
          progress.finish(imported.isDryRun ? 'checked' : 'imported')
          return imported
        })
      })
      if (values.json) io.out(JSON.stringify(batch))
      else showBatch(io, batch)
    },
  },
  {
    path: ['historian', 'batches'],
    usage: '--site CODE [--org SLUG] [--json]',
    positionals: [],
    summary:
      "Lists a site's import batches, newest first: id, status, format, rows read, samples stored, rejected, collisions, file, created (a table, or JSON lines as GET /api/historian/import-batches lists them).",
    options: { site: { type: 'string', value: 'CODE', description: "the site's code (required)" }, ...ORG_OPTION, ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
        if (typeof values.site !== 'string') throw new UsageError('--site CODE is required')
        const site = values.site
        const org = await siteOrg(orgs, config, values.org)
        const { historian } = await cliSiteServices(config, handle)
        const batches: Awaited<ReturnType<typeof historian.list>>['items'] = []
        let cursor: string | undefined
        do {
          const page = await onSite(org, site, () => historian.list(org.id, { siteId: site, limit: 200, cursor }))
          batches.push(...page.items)
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
        if (values.json) {
          for (const b of batches) io.out(JSON.stringify(b))
          return
        }
        if (batches.length === 0) {
          io.err(`no import batches in site ${values.site}`)
          return
        }
        const rows = batches.map((b) => [
          b.id ?? '-',
          b.status,
          b.format,
          count(b.rowsRead),
          count(b.samplesStored),
          count(b.rowsRejected),
          count(b.collisions),
          b.trendFileName ?? '-',
          b.createdAt,
        ])
        for (const line of table([['BATCH', 'STATUS', 'FORMAT', 'ROWS', 'SAMPLES', 'REJECTED', 'COLLISIONS', 'FILE', 'CREATED'], ...rows])) io.out(line)
      }),
  },
]
