import type { Actor } from '../../../identity.ts'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import { NotFound, invalidField } from '../../../errors/domain-error.ts'
import type { TransferMeter } from '../../../http/transfer-meter.ts'
import { decodeCursor, encodeCursor, toPage } from '../../../http/paging.ts'
import type { OrgId } from '../../../ids.ts'
import { recordAudit } from '../../audit/service.ts'
import type { SiteDependent } from '../../sites/service.ts'
import { BatchStillRunning } from '../errors.ts'
import { failIfAbandoned } from '../store/batch-end.ts'
import {
  type BatchCoverage,
  countBatchesOfSite,
  countSamplesOfSite,
  deleteBatchRow,
  deleteSamplesOfBatch,
  findBatch,
  listBatchesOfSite,
  listRunningBatches,
} from '../store/queries.ts'
import { listedCollisions, readReport, toBatch, toBatchSummary, toCollision, type BatchView } from './batch-view.ts'
import { FormFields, storableFileName, type UploadPart } from './form.ts'
import { ImportRun, type TrendSource } from './import-run.ts'
import { readMapping, type InstanceDirectory } from './mapping.ts'
import { lockOpenBatch } from './open-batch.ts'
import type { MultiSeriesQuery, SeriesQuery } from '../schemas.ts'
import { checkJsonPoints, checkPairs, planSeries, readCursor, readSeriesPage, seriesCsv, targetsOf } from './series.ts'
import { readSmallFile, spoolToDisk, streamingSource, unknownFilePart } from './upload.ts'

export type { UploadPart } from './form.ts'
export type { InstanceDirectory } from './mapping.ts'

export interface HistorianDeps {
  handle: DatabaseHandle
  clock: Clock
  sites: { require(orgId: OrgId, code: string): Promise<{ code: string; timeZone: string }> }
  instances: InstanceDirectory
  maxFileBytes: number
  /** Counts the imports, their rows and bytes (the metrics); absent: nothing counts them. */
  meter?: TransferMeter
}

/** The mapping is a small file: one line per historian tag. */
const MAX_MAPPING_BYTES = 16 * 1024 * 1024

/** Deletion preview of a site: its batches and samples. */
export const historianSiteDependents: SiteDependent[] = [
  { name: 'historianBatches', count: countBatchesOfSite },
  { name: 'historianSamples', count: countSamplesOfSite },
]

export function createHistorianService(deps: HistorianDeps) {
  const { handle, clock, sites, instances, maxFileBytes } = deps
  const db = handle.db

  /** Cleans a running batch whose import is gone (store/batch-end.ts failIfAbandoned). */
  const recoverIfAbandoned = (orgId: OrgId, batchId: string) =>
    failIfAbandoned(handle, orgId, batchId, { error: 'The server stopped during the import; nothing of it was kept.', now: () => clock.now() })

  /**
   * PostgreSQL: running batches a read meets are cleaned when their import is gone. The start-up recovery misses an
   * import whose dead process's connection (and lock) the database had not yet dropped when this process started;
   * left alone, that batch would stay `running`. SQLite runs one server process per file: a running batch there is
   * this process's own, live. Answers whether any was cleaned.
   */
  async function recoverRead(orgId: OrgId, rows: ReadonlyArray<{ id: string; status: string }>): Promise<boolean> {
    if (handle.dialect !== 'postgres') return false
    let isAny = false
    for (const r of rows) if (r.status === 'running' && (await recoverIfAbandoned(orgId, r.id))) isAny = true
    return isAny
  }

  return {
    /**
     * Imports one upload (spec 4.3): all or nothing. Throws ValidationFailed (a part missing, unknown or bad),
     * NotFound (site), HistorianMappingInvalid, HistorianHeaderInvalid/FormatUndetected/CsvInvalid (trend file),
     * Conflict (the same two files already imported without force), PayloadTooLarge.
     */
    async importBatch(orgId: OrgId, actor: Actor, parts: AsyncIterable<UploadPart>, meta: { bytesTotal: number | null }): Promise<BatchView> {
      const fields = new FormFields()
      let mapping: { bytes: Buffer; sha256: string } | undefined
      let spool: Awaited<ReturnType<typeof spoolToDisk>> | undefined
      let trendName: string | null = null
      let run: ImportRun | undefined
      const plan = async () => {
        const f = fields.read()
        if (mapping === undefined) throw invalidField('/mapping_csv', 'is required: historian_tag,instance_id,tag_key[,unit][,scale]', 'part')
        const site = await sites.require(orgId, f.siteCode)
        const tags = await readMapping(instances, orgId, site.code, mapping.bytes)
        return {
          orgId,
          actor,
          siteCode: site.code,
          options: { ...f.parse, format: f.format, timezone: f.timezone ?? site.timeZone },
          mapping: tags,
          mappingSha256: mapping.sha256,
          trendName,
          isForced: f.isForced,
          isDryRun: f.isDryRun,
          bytesTotal: meta.bytesTotal,
        }
      }
      const ingest = async (source: TrendSource) => {
        const started = new ImportRun({ handle, clock, meter: deps.meter }, await plan())
        await started.ingest(source)
        return started
      }
      try {
        for await (const part of parts) {
          if (part.kind === 'field') {
            if (run !== undefined) throw invalidField(`/${part.name}`, 'arrived after trend_csv; send every other part before trend_csv', 'part')
            fields.add(part.name, part.value)
            continue
          }
          if (part.name === 'mapping_csv') {
            if (mapping !== undefined || run !== undefined)
              throw invalidField('/mapping_csv', run ? 'arrived after trend_csv; send it before' : 'is sent twice', 'part')
            mapping = await readSmallFile(part, Math.min(MAX_MAPPING_BYTES, maxFileBytes))
            continue
          }
          if (part.name !== 'trend_csv') throw unknownFilePart(part.name)
          if (run !== undefined || spool !== undefined) throw invalidField('/trend_csv', 'is sent twice', 'part')
          trendName = storableFileName(part.name, part.filename) || null
          // Everything needed is known: stream the file straight into the database; otherwise keep it on disk.
          if (mapping !== undefined && fields.has('site_id') && fields.has('format')) run = await ingest(streamingSource(part, maxFileBytes))
          else spool = await spoolToDisk(part, maxFileBytes)
        }
        if (run === undefined) {
          if (spool === undefined) {
            fields.read()
            if (mapping === undefined) throw invalidField('/mapping_csv', 'is required: historian_tag,instance_id,tag_key[,unit][,scale]', 'part')
            throw invalidField('/trend_csv', 'is required: the historian export', 'part')
          }
          run = await ingest(spool.source())
        }
      } catch (err) {
        // A part after trend_csv was refused: what the batch already wrote goes too (all or nothing).
        await run?.abandon(err)
        throw err
      } finally {
        await spool?.remove()
      }
      const row = await run.finish()
      return toBatch(row, { isDryRun: run.isDryRun })
    },

    async list(orgId: OrgId, query: { siteId: string; limit?: number; cursor?: string }) {
      await sites.require(orgId, query.siteId)
      const limit = query.limit ?? 50
      const before = decodeCursor(query.cursor, ['string'])?.[0] as string | undefined
      const read = () => listBatchesOfSite(db, handle.dialect, orgId, query.siteId, { limit, before })
      let rows = await read()
      if (await recoverRead(orgId, rows)) rows = await read()
      return toPage(rows, limit, toBatchSummary, (r) => [r.id])
    },

    async get(orgId: OrgId, batchId: string): Promise<BatchView> {
      let row = await findBatch(db, orgId, batchId)
      if (!row) throw new NotFound()
      if (await recoverRead(orgId, [row])) row = (await findBatch(db, orgId, batchId))!
      return toBatch(row)
    },

    /** The rejection report: the first rejected rows (or cells) and why. */
    async rejections(orgId: OrgId, batchId: string) {
      const row = await findBatch(db, orgId, batchId)
      if (!row) throw new NotFound()
      const report = readReport(row.report)
      return { batchId: row.id, count: row.rejected_count, rejections: report.rejections, unmappedTags: report.unmappedTags }
    },

    /** The collision report: samples that met a stored value, with the values kept and discarded; paged by position. */
    async collisions(orgId: OrgId, batchId: string, page: { limit?: number; cursor?: string }) {
      const row = await findBatch(db, orgId, batchId)
      if (!row) throw new NotFound()
      const listed = listedCollisions(readReport(row.report))
      const limit = page.limit ?? 100
      const from = (decodeCursor(page.cursor, ['number'])?.[0] as number | undefined) ?? 0
      const items = listed.slice(from, from + limit)
      return {
        batchId: row.id,
        count: row.is_forced === 1 ? row.replaced_count : row.collision_count,
        listed: listed.length,
        items: items.map(toCollision),
        nextCursor: from + limit < listed.length ? encodeCursor([from + limit]) : null,
      }
    },

    /**
     * Deletes a batch and every sample it holds; a running batch cannot be deleted (409). An open one can: under its
     * gateway's lock, so a push waits and then opens a new batch, and the samples deleted are all the batch holds.
     */
    async remove(orgId: OrgId, actor: Actor, batchId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        let row = await findBatch(trx, orgId, batchId)
        if (row?.status === 'open') {
          await lockOpenBatch(trx, handle, orgId, row.site_code, row.created_by)
          row = await findBatch(trx, orgId, batchId)
        }
        if (!row) throw new NotFound()
        if (row.status === 'running') throw new BatchStillRunning(batchId)
        const samples = await deleteSamplesOfBatch(trx, orgId, batchId, { siteCode: row.site_code, coverage: JSON.parse(row.tags) as BatchCoverage[] })
        // A concurrent delete removed it after it was read: that request deleted it, this one answers the uniform 404.
        if ((await deleteBatchRow(trx, orgId, batchId)) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'historian.batch.deleted', target: batchId, detail: { site: row.site_code, samples } })
      })
    },

    /**
     * One tag's history in one of the retrieval modes (service/series.ts): a page as JSON, or with format=csv every
     * row from the cursor on, as CSV chunks. Throws NotFound (site), ValidationFailed (the field named).
     */
    async series(orgId: OrgId, siteCode: string, query: SeriesQuery) {
      const site = await sites.require(orgId, siteCode)
      const plan = planSeries(query, site.timeZone, 'query')
      // The cursor is checked before the answer starts: a CSV's 200 is sent with its first row.
      readCursor(plan, query.cursor)
      const target = (await targetsOf(db, orgId, site.code, plan, [{ instanceId: query.instanceId, tag: query.tag }]))[0]!
      if (plan.isCsv) return { csv: seriesCsv(db, orgId, [target], plan, query.cursor) }
      return { json: await readSeriesPage(db, orgId, target, plan, { limit: query.limit ?? 1000, cursor: query.cursor }) }
    },

    /** Many instance/tag pairs in one read: the first page of each, or every row of each as one CSV. */
    async seriesOfMany(orgId: OrgId, siteCode: string, body: MultiSeriesQuery) {
      const site = await sites.require(orgId, siteCode)
      const plan = planSeries(body, site.timeZone, 'body')
      checkPairs(body)
      checkJsonPoints(body, plan)
      const targets = await targetsOf(db, orgId, site.code, plan, body.series)
      if (plan.isCsv) return { csv: seriesCsv(db, orgId, targets, plan) }
      const items = []
      for (const target of targets) items.push(await readSeriesPage(db, orgId, target, plan, { limit: body.limit ?? 1000 }))
      return { json: { items } }
    },

    /**
     * Start-up: a batch left `running` by a process that died is marked failed and its samples removed. On
     * PostgreSQL only batches whose importing connection is gone (see store/session.ts), so live imports of other
     * processes are left alone (reads clean the rest later: recoverRead). Returns how many were cleaned.
     */
    async recoverInterrupted(): Promise<number> {
      let cleaned = 0
      for (const { org_id, id } of await listRunningBatches(db)) {
        if (await recoverIfAbandoned(org_id as OrgId, id)) cleaned++
      }
      return cleaned
    },
  }
}

export type HistorianService = ReturnType<typeof createHistorianService>
