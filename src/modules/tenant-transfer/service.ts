import { randomUUID } from 'node:crypto'
import { pipeline, Readable, Transform } from 'node:stream'
import type { RawBuilder } from 'kysely'
import { createGzip } from 'node:zlib'
import type { Actor, Org } from '../../identity.ts'
import type { Clock } from '../../clock.ts'
import type { Mode } from '../../config/schema.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { Db } from '../../db/schema.ts'
import { withApplyOrigin } from '../../db/link-triggers.ts'
import { NO_TRANSFER_METER, type TransferMeter, type TransferRun } from '../../http/transfer-meter.ts'
import type { OrgId } from '../../ids.ts'
import { recordAudit } from '../audit/service.ts'
import type { SitesService } from '../sites/service.ts'
import { isUniqueViolation, rowRuleBroken } from '../../db/constraint-errors.ts'
import {
  ImportConflicts,
  NoStagedPackage,
  PackageCorrupt,
  PackageOfAnotherOrg,
  PackageTooLarge,
  PackageValueRefused,
  StagedUploadReplaced,
  UniqueRuleConflicts,
} from './errors.ts'
import { PACKAGE_FORMAT, PACKAGE_FORMAT_VERSION, readPackage, writePackage, type PackageHeader } from './format.ts'
import { describeTable, describeUniqueKeys, type Row, type TableShape } from './introspect.ts'
import {
  appendChunk,
  dropStaged,
  EXTRA_COLUMN,
  findExisting,
  hasAnyRow,
  markStaged,
  readChunks,
  replaceStagedPackage,
  streamRows,
  takeStaged,
  upsertRows,
} from './store.ts'
import type { ImportReport } from './schemas.ts'
import { EXPORTED_TABLES, type ExportedTable, type StoredPart, type StoredParts } from './tables.ts'
import { findValueProblem } from './value-rules.ts'
import { findHeldElsewhere, findUniqueConflicts, uniqueRulesOf, type UniqueRule } from './unique-rules.ts'
import { quoted } from '../../errors/quoted.ts'

/**
 * A staged package is stored a chunk of at most 16 KiB a statement, as the body arrives, and read back 32 chunks a
 * query. No chunk, nor PostgreSQL's hex text of one on the way back (32 KiB), is a large object (V8 frees those only
 * at a full collection), and a small statement makes little garbage in the driver: 1 MiB chunks of base64 text grew
 * the server by +80 MiB over a 100 MiB upload (issue 24).
 */
const MAX_CHUNK_BYTES = 16 * 1024
const CHUNKS_PER_READ = 32
const MAX_LISTED_CONFLICTS = 100
/** Rows checked against the target and written a statement; a stored part's narrow rows (samples) go in larger batches. */
const BATCH_ROWS = 500
const STORED_BATCH_ROWS = 2000

export type { ImportReport } from './schemas.ts'

interface Part {
  spec: ExportedTable
  stored: StoredPart | undefined
  shape: TableShape
  columns: string[]
  unique: UniqueRule[]
}

/** A write refused by a unique index the checks before it could not see (another organisation's record): the rows tried. */
class UniqueIndexRefused extends Error {
  constructor(
    readonly part: Part,
    readonly rows: Row[],
  ) {
    super(`a unique index of ${part.spec.name} refused the import`)
  }
}

/** A version read with each exported row of some tables (a fleet link seed's: outbox/store.ts seedVersionSql). */
export interface RowVersions {
  /** The SQL of a row's version in `table` (its columns qualified by the table's name), or undefined for none. */
  of(table: string): RawBuilder<unknown> | undefined
  /** Hears a row whose version is not null. */
  found(table: string, row: Row, version: number): void
  /** Runs after the last part was read, before the package ends. */
  done(): Promise<void>
}

export interface TenantTransferDeps {
  handle: DatabaseHandle
  clock: Clock
  mode: Mode
  /** This server's base domain: a package's domain binding may not be it or under it (orgs/row-rules.ts). */
  baseDomain: string
  sites: SitesService
  /** The parts EXPORTED_TABLES marks `isStoredPart`, from the areas that store them (historian/transfer.ts). */
  storedParts: StoredParts
  maxPackageBytes: number
  maxInflatedBytes: number
  /** Count the exports, and the imports (a staging and an apply each), with their rows and bytes (the metrics). */
  meters?: { export: TransferMeter; import: TransferMeter }
}

/** Where an import's bytes come from: a file (the CLI), or the staged package, which the import holds and, when it writes, drops. */
interface PackageSource {
  /** Runs first in the import's transaction; answers the bytes. */
  open(trx: Db): Promise<AsyncIterable<Buffer>>
  /** Runs last in the import's transaction when it writes (not on a dry run). */
  consumed?(trx: Db): Promise<unknown>
}

export interface ImportOptions {
  force: boolean
  dryRun: boolean
  origin?: string
}

export function createTenantTransferService(deps: TenantTransferDeps) {
  const { handle, clock } = deps
  const db = handle.db
  const meters = deps.meters ?? { export: NO_TRANSFER_METER, import: NO_TRANSFER_METER }
  const storedOf = (spec: ExportedTable): StoredPart | undefined => {
    if (spec.isStoredPart !== true) return undefined
    const stored = deps.storedParts[spec.name]
    if (stored === undefined) throw new Error(`tenant transfer: no stored part was given for ${spec.name}`)
    return stored
  }
  for (const spec of EXPORTED_TABLES) storedOf(spec) // a composition root that forgets one fails at start-up, not at the first export

  async function partsFor(scope: 'org' | 'site', on: Db = db): Promise<Part[]> {
    const parts: Part[] = []
    for (const spec of EXPORTED_TABLES) {
      if (scope === 'site' && spec.scope === 'org') continue
      const stored = storedOf(spec)
      const shape = stored ? ((await stored.present(on, handle.dialect)) ? stored.shape : undefined) : await describeTable(on, handle.dialect, spec.name)
      if (!shape) continue // an area not in this build
      const unique = stored ? [] : uniqueRulesOf(await describeUniqueKeys(on, handle.dialect, spec.name)) // a stored part keys its own rows
      parts.push({ spec, stored, shape, columns: shape.columns.filter((c) => c !== 'org_id' && !spec.omit?.includes(c)), unique })
    }
    return parts
  }

  /**
   * Applies (or, with dryRun, only measures) the staged package in one transaction: all or nothing. `origin`: the
   * fleet link's peer the rows come from (a seed: 'cloud'), as the outbox records them.
   */
  async function apply(org: Org, actor: Actor, source: PackageSource, options: ImportOptions): Promise<ImportReport> {
    let report: ImportReport | undefined
    const rollback = new Error('dry run')
    const metered = meters.import.begin()
    try {
      await db.transaction().execute(async (trx) => {
        let header: PackageHeader | undefined
        const bytes = await source.open(trx)
        const parts = new Map((await partsFor('org', trx)).map((p) => [p.spec.name, p]))
        const counts: ImportReport['parts'] = {}
        const conflicts: Array<{ part: string; key: Record<string, unknown> }> = []
        let conflictCount = 0
        let batch: Row[] = []
        let batchPart: Part | undefined
        let rowOfPart = 0
        /** The batch's keys and the row of its part each came on: one statement may not write a key twice (refuseRepeatedKey). */
        const batchKeys = new Map<string, number>()
        const occupied = new Map<string, boolean>()
        const memos = new Map<string, Map<string, unknown>>()
        const memoOf = (name: string) => {
          let memo = memos.get(name)
          if (!memo) memos.set(name, (memo = new Map()))
          return memo
        }
        const flush = async () => {
          if (!batchPart || batch.length === 0) return
          const part = batchPart
          const key = part.shape.primaryKey.filter((c) => c !== 'org_id')
          const keyOf = (r: Row) => JSON.stringify(key.map((c) => r[c]))
          if (!occupied.has(part.spec.name))
            occupied.set(part.spec.name, await (part.stored ? part.stored.hasAnyRow(trx, org.id) : hasAnyRow(trx, part.shape, org.id)))
          const found = occupied.get(part.spec.name)
            ? await (part.stored
                ? part.stored.findExisting(trx, handle.dialect, org.id, batch)
                : findExisting(trx, handle.dialect, part.shape, part.columns, org.id, batch))
            : []
          const existing = new Map(found.map((r) => [keyOf(r), r]))
          const count = (counts[part.spec.name] ??= { create: 0, replace: 0, unchanged: 0 })
          const writes: Row[] = []
          for (const row of batch) {
            const old = existing.get(keyOf(row))
            if (!old) {
              count.create += 1
              writes.push(row)
            } else if (sameRow(old, row, part.columns)) {
              count.unchanged += 1
            } else {
              count.replace += 1
              conflictCount += 1
              if (conflicts.length < MAX_LISTED_CONFLICTS) conflicts.push({ part: part.spec.name, key: Object.fromEntries(key.map((c) => [c, row[c]])) })
              writes.push(row)
            }
          }
          const restored = part.spec.restore ? writes.map(part.spec.restore) : writes
          if (part.unique.length > 0 && restored.length > 0) {
            const clashes = await findUniqueConflicts(trx, handle.dialect, part.spec.name, part.shape, org.id, part.unique, restored)
            if (clashes.length > 0) throw new UniqueRuleConflicts(part.spec.name, clashes)
          }
          if (!options.dryRun && restored.length > 0 && (options.force || conflictCount === 0)) {
            for (let i = 0; i < restored.length; i += rowsPerStatement(part.shape)) {
              const rows = restored.slice(i, i + rowsPerStatement(part.shape))
              try {
                await (part.stored
                  ? part.stored.upsert(trx, org.id, rows, memoOf(part.spec.name))
                  : upsertRows(trx, part.shape, org.id, rows, part.spec.omit ?? []))
              } catch (err) {
                if (isUniqueViolation(err)) throw new UniqueIndexRefused(part, rows)
                const rule = rowRuleBroken(err) // a crafted package: a row the table refuses is bad input, not a 500
                if (rule) throw new PackageCorrupt(`a row of part ${part.spec.name} breaks a ${rule} rule of this server's table`)
                throw err
              }
            }
          }
          metered.advanced(batch.length, 0)
          batch = []
          batchKeys.clear()
        }
        const applyRows = async () => {
          for await (const { part: name, row } of readPackage(bytes, deps.maxInflatedBytes, (h) => {
            if (h.org.id !== org.id) throw new PackageOfAnotherOrg()
            header = h
          })) {
            const part = parts.get(name)
            if (!part) throw new PackageCorrupt(`part ${quoted(name)} is not a table of this server`)
            rowOfPart = part === batchPart ? rowOfPart + 1 : 1
            checkRow(part, row, rowOfPart, deps.baseDomain)
            if (part !== batchPart || batch.length >= (part.stored ? STORED_BATCH_ROWS : BATCH_ROWS)) await flush()
            batchPart = part
            refuseRepeatedKey(part, row, rowOfPart, batchKeys)
            batch.push(row)
          }
          await flush()
        }
        // A seed's rows are the cloud's: the fleet link's outbox records them so (never the import's own audit record).
        await (options.origin === undefined ? applyRows() : withApplyOrigin(trx, handle.dialect, options.origin, applyRows))
        if (conflictCount > 0 && !options.force && !options.dryRun) throw new ImportConflicts(conflicts, conflictCount)
        report = {
          dryRun: options.dryRun,
          force: options.force,
          parts: counts,
          source: { orgSlug: header!.org.slug, site: header!.site, sourceMode: header!.sourceMode, exportedAt: header!.exportedAt },
        }
        if (options.dryRun) throw rollback
        await source.consumed?.(trx)
        await recordAudit(trx, clock, org.id as OrgId, actor, {
          action: 'tenant.imported',
          target: org.slug,
          detail: { force: options.force, source: report.source },
        })
        await handle.announceInvalidation(trx)
      })
    } catch (err) {
      // Rolled back: now another organisation's records can be looked up (row-level security hid them in the transaction).
      if (err instanceof UniqueIndexRefused) {
        throw new UniqueRuleConflicts(
          err.part.spec.name,
          await findHeldElsewhere(db, handle.dialect, err.part.spec.name, err.part.shape, org.id, err.part.unique, err.rows),
        )
      }
      if (err !== rollback) throw err
    } finally {
      metered.ended(report ? 'complete' : 'failed')
    }
    handle.invalidateLocally()
    return report!
  }

  return {
    /**
     * The organisation's package (or one site's), as gzip bytes, streamed in constant memory. `versions` (a fleet
     * link seed) reads a version with each row of the tables it names, in the row's own statement, and hears those not
     * null; its `done` runs after the last part was read, before the package ends.
     */
    async exportPackage(org: Org, siteCode: string | null, versions?: RowVersions): Promise<Readable> {
      if (siteCode !== null) await deps.sites.require(org.id, siteCode)
      const parts = await partsFor(siteCode === null ? 'org' : 'site')
      const header: PackageHeader = {
        type: 'header',
        format: PACKAGE_FORMAT,
        formatVersion: PACKAGE_FORMAT_VERSION,
        sourceMode: deps.mode,
        exportedAt: new Date(clock.now()).toISOString(),
        org: { id: org.id, slug: org.slug, name: org.name },
        site: siteCode,
        tables: parts.map((p) => p.spec.name),
      }
      const metered = meters.export.begin()
      async function* versioned(p: Part, v: RowVersions, version: RawBuilder<unknown>): AsyncGenerator<Row> {
        for await (const { [EXTRA_COLUMN]: found, ...row } of streamRows(db, handle.dialect, p.shape, p.columns, org.id, siteCode, version)) {
          if (found !== null && found !== undefined) v.found(p.spec.name, row, Number(found))
          yield row
        }
      }
      async function* partStreams() {
        for (const p of parts) {
          const version = p.stored ? undefined : versions?.of(p.spec.name)
          yield {
            part: p.spec.name,
            rows: p.stored
              ? p.stored.stream(db, handle.dialect, org.id, siteCode)
              : version
                ? versioned(p, versions!, version)
                : streamRows(db, handle.dialect, p.shape, p.columns, org.id, siteCode),
          }
        }
        await versions?.done()
      }
      // pipeline, not pipe: a database failure mid-export reaches the reply through the gzip stream (pipe would leave
      // the source's 'error' unhandled), and a client gone early destroys the source too.
      return pipeline(Readable.from(writePackage(header, partStreams(), (rows) => metered.advanced(rows, 0))), createGzip(), countingBytes(metered), (err) =>
        metered.ended(err ? 'failed' : 'complete'),
      )
    },

    /**
     * Stores the uploaded package, then checks it whole (format version, counts, checksums, organisation). A later
     * upload begun meanwhile replaces this one: StagedUploadReplaced (409), nothing of this one kept.
     */
    async stage(
      org: Org,
      actor: Actor,
      body: AsyncIterable<Buffer>,
    ): Promise<{ uploadId: string; bytes: number; header: PackageHeader; counts: Record<string, number> }> {
      const uploadId = randomUUID()
      await db.transaction().execute((trx) => replaceStagedPackage(trx, org.id, { uploadId, stagedAt: clock.now(), stagedBy: actor.subject }))
      let seq = 0
      let total = 0
      const metered = meters.import.begin()
      try {
        for await (const piece of body) {
          total += piece.length
          metered.advanced(0, piece.length)
          if (total > deps.maxPackageBytes) throw new PackageTooLarge(deps.maxPackageBytes)
          // Stored as it arrives (a socket read is at most 64 KiB), in views of at most MAX_CHUNK_BYTES: no copy.
          for (let at = 0; at < piece.length; at += MAX_CHUNK_BYTES) {
            if (!(await appendChunk(db, handle.dialect, org.id, uploadId, seq++, piece.subarray(at, at + MAX_CHUNK_BYTES)))) throw new StagedUploadReplaced()
          }
        }
        let header: PackageHeader | undefined
        const counts: Record<string, number> = {}
        for await (const { part } of readPackage(readChunks(db, org.id, CHUNKS_PER_READ), deps.maxInflatedBytes, (h) => {
          if (h.org.id !== org.id) throw new PackageOfAnotherOrg()
          header = h
        }))
          counts[part] = (counts[part] ?? 0) + 1
        // The chunks just read were this upload's only if no later upload replaced it before this mark.
        if (!(await markStaged(db, org.id, uploadId, total, JSON.stringify({ header, counts })))) throw new StagedUploadReplaced()
        metered.ended('complete')
        return { uploadId, bytes: total, header: header!, counts }
      } catch (err) {
        metered.ended('failed')
        // Replaced meanwhile: the refusal may come from the later upload's chunks read as this one's, and that one is not ours to drop.
        if (!(await db.transaction().execute((trx) => dropStaged(trx, org.id, uploadId)))) throw new StagedUploadReplaced()
        throw err
      }
    },

    /**
     * Applies the staged package and, unless a dry run, drops it in the same transaction (an upload begun meanwhile
     * waits for it). NoStagedPackage when none is checked and staged; StagedUploadReplaced when `uploadId` names
     * another upload than the staged one.
     */
    async applyStaged(org: Org, actor: Actor, options: { force: boolean; dryRun: boolean; uploadId?: string | undefined }): Promise<ImportReport> {
      let uploadId = ''
      return apply(
        org,
        actor,
        {
          async open(trx) {
            const staged = await takeStaged(trx, handle.dialect, org.id)
            if (staged && options.uploadId !== undefined && staged.uploadId !== options.uploadId) throw new StagedUploadReplaced()
            if (!staged?.isValid) throw new NoStagedPackage()
            uploadId = staged.uploadId
            return readChunks(trx, org.id, CHUNKS_PER_READ)
          },
          consumed: (trx) => dropStaged(trx, org.id, uploadId),
        },
        options,
      )
    },

    /** The CLI's offline import: the file is checked while it is applied, inside the one transaction. */
    importFile: (org: Org, actor: Actor, bytes: () => AsyncIterable<Buffer>, options: ImportOptions) =>
      apply(org, actor, { open: async () => bytes() }, options),
  }
}

export type TenantTransferService = ReturnType<typeof createTenantTransferService>

/** A pass-through stream counting the bytes that go through it. */
function countingBytes(metered: TransferRun): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      metered.advanced(0, chunk.length)
      done(null, chunk)
    },
  })
}

// SQLite binds at most 32 766 parameters a statement; PostgreSQL 65 535.
function rowsPerStatement(shape: TableShape): number {
  return Math.max(1, Math.floor(30_000 / shape.columns.length))
}

/** `line`: the row's number in its part (1 for the first). Every value is checked here, before any row is written. */
function checkRow(part: Part, row: Row, line: number, baseDomain: string): void {
  const keys = Object.keys(row)
  if (keys.length !== part.columns.length || !keys.every((k) => part.columns.includes(k))) {
    throw new PackageCorrupt(`a row of part ${part.spec.name} does not have the columns of this server's table`)
  }
  const problem = findValueProblem(part.shape, part.columns, part.spec, row, { baseDomain })
  if (problem) throw new PackageValueRefused(part.spec.name, line, problem)
}

/**
 * A crafted package's row with the key of an earlier row of its batch: PostgreSQL refuses one upsert that writes a
 * key twice (a 500), SQLite stored the later row and counted both as created. Checked within a batch, the rows held
 * anyway; a key repeated further apart is written again by a later statement (the later row wins), never a 500.
 */
function refuseRepeatedKey(part: Part, row: Row, line: number, seen: Map<string, number>): void {
  const key = part.shape.primaryKey.filter((c) => c !== 'org_id')
  const text = JSON.stringify(key.map((c) => row[c]))
  const earlier = seen.get(text)
  if (earlier !== undefined) {
    throw new PackageCorrupt(
      `row ${line} of part ${part.spec.name} repeats the key (${key.map((c) => `${c} ${quoted(String(row[c]))}`).join(', ')}) of row ${earlier}`,
    )
  }
  seen.set(text, line)
}

function sameRow(a: Row, b: Row, columns: string[]): boolean {
  return columns.every((c) => (a[c] ?? null) === (b[c] ?? null))
}
