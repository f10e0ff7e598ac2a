import { CompiledQuery, sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'
import { anySampleInRanges, ensureSeries, seriesKey } from './queries.ts'
import { numberArrayBytes, textArrayBytes, withBinaryArrays } from '../../../db/pg-arrays.ts'
import { BinaryCopy, copyIn } from './pg-copy.ts'
import type { SampleBuffer } from './sample-buffer.ts'

/** Where a batch's samples go: straight into historian_points, or (force=true) into the staging table. */
export type WriteTarget = 'samples' | 'staging'

export interface SampleWriter {
  /** Writes the buffer (deduplicated) and answers how many rows were written; the rest collided with another batch. */
  write(db: Db, buffer: SampleBuffer): Promise<{ attempted: number; written: number }>
  /**
   * Does a write's CPU work ahead (dedupe; when every series of the buffer is known, its ids and PostgreSQL's COPY
   * text), so that it runs while the server still inserts the previous buffer. Optional; the buffer must not
   * change between this and its write.
   */
  prepare(buffer: SampleBuffer): void
  /** The series id of a pair (by its number in the buffers' SeriesPairs) this writer has written. */
  seriesId(pair: number): number
}

interface Scope {
  orgId: OrgId
  siteCode: string
  batchId: string
  /**
   * Other transactions may write the same series and timestamps at once (live pushes, service/live.ts): every write
   * counts another's row as a collision after waiting for its transaction. The plain INSERT chosen when no stored
   * sample lies in the range would fail on the other's row instead. Such a write is a push into historian_points, and
   * whatever is stored is kept (another batch's row, or an earlier push's into the same open batch): SQLite inserts
   * OR IGNORE (sqliteLiveWrite), PostgreSQL sends arrays in one call that falls back to ON CONFLICT DO NOTHING only on
   * a unique violation
   * (postgresArrayWrite), not through COPY.
   */
  isContended?: boolean
}

/**
 * SQLite allows 32 766 bound variables per statement, 7 per row: at most 4 600 rows a statement. A buffer is written
 * with statements of these sizes only, largest first, so an import prepares at most four statements (per table and
 * conflict clause) and reuses one parameter array per size: a statement sized to each buffer's remainder was a new
 * statement to compile and cache, and a new large array, at every write.
 */
const SQLITE_STATEMENT_ROWS = [4_600, 256, 16, 1]

const POINT_UPSERT = `on conflict (org_id, series_id, ts)
  do update set value = excluded.value, text = excluded.text, quality = excluded.quality
  where historian_points.batch_id = excluded.batch_id`
const STAGING_UPSERT = `on conflict (org_id, batch_id, series_id, ts)
  do update set value = excluded.value, text = excluded.text, quality = excluded.quality`

/**
 * Without force a row lands only where no other batch holds that series and timestamp: the DO UPDATE's WHERE lets a
 * batch overwrite its own earlier row (a later line of the file) and never another batch's, so written < attempted
 * counts the collisions. When no stored sample lies in the buffer's time range of any of its series (the usual
 * case: a new period), nothing can collide and the write is a plain INSERT. Raw compiled statements: Kysely's
 * builder costs more than the insert itself here.
 */
export function createSampleWriter(dialect: Dialect, target: WriteTarget, scope: Scope): SampleWriter {
  const table = target === 'samples' ? 'historian_points' : 'historian_staging'
  /** Series id by pair number; 0 while not looked up (ids start at 1 on both dialects). */
  let series = new Int32Array(0)
  const missingPairs = (buffer: SampleBuffer) => {
    const missing = new Set<number>()
    for (let i = 0; i < buffer.length; i++) if (!(series[buffer.pair[i]!]! > 0)) missing.add(buffer.pair[i]!)
    return missing
  }
  const idsOf = (buffer: SampleBuffer) => {
    const ids = new Int32Array(buffer.length)
    for (let i = 0; i < buffer.length; i++) ids[i] = series[buffer.pair[i]!]!
    return ids
  }
  const resolve = async (db: Db, buffer: SampleBuffer): Promise<Int32Array> => {
    const { pairs } = buffer
    if (series.length < pairs.list.length) {
      const grown = new Int32Array(Math.max(pairs.list.length, series.length * 2))
      grown.set(series)
      series = grown
    }
    const missing = missingPairs(buffer)
    if (missing.size > 0) {
      const found = await ensureSeries(
        db,
        scope.orgId,
        scope.siteCode,
        [...missing].map((n) => pairs.list[n]!),
      )
      for (const n of missing) series[n] = found.get(seriesKey(pairs.list[n]!.instanceId, pairs.list[n]!.tagKey))!
    }
    return idsOf(buffer)
  }
  const mayCollide = (db: Db, ids: Int32Array, ts: Float64Array) => {
    const ranges = new Map<number, { seriesId: number; from: number; to: number }>()
    for (let i = 0; i < ids.length; i++) {
      const r = ranges.get(ids[i]!)
      if (r === undefined) ranges.set(ids[i]!, { seriesId: ids[i]!, from: ts[i]!, to: ts[i]! })
      else if (ts[i]! < r.from) r.from = ts[i]!
      else if (ts[i]! > r.to) r.to = ts[i]!
    }
    return anySampleInRanges(db, table, scope.orgId, [...ranges.values()])
  }
  const statements = new Map<string, string>()
  const paramArrays = new Map<number, unknown[]>()
  // At most two COPY payloads exist at once (one being copied, one prepared); their bytes are reused.
  const spareCopies: BinaryCopy[] = []
  const payloadOf = (ids: Int32Array, buffer: SampleBuffer) => copyPayload(ids, buffer, spareCopies.pop() ?? new BinaryCopy())
  const prepared = new WeakMap<SampleBuffer, { ids: Int32Array; payload: Payload | undefined }>()
  return {
    seriesId: (pair) => series[pair]!,
    prepare(buffer) {
      buffer.dedupe()
      if (buffer.length === 0 || missingPairs(buffer).size > 0) return
      const ids = idsOf(buffer)
      prepared.set(buffer, { ids, payload: dialect === 'postgres' ? payloadOf(ids, buffer) : undefined })
    },
    async write(db, buffer) {
      const ahead = prepared.get(buffer)
      prepared.delete(buffer)
      if (buffer.length === 0) return { attempted: 0, written: 0 }
      if (ahead === undefined) buffer.dedupe()
      const ids = ahead?.ids ?? (await resolve(db, buffer))
      const attempted = buffer.length
      const upsert = scope.isContended === true || (await mayCollide(db, ids, buffer.ts))
      let written: number
      if (dialect === 'postgres' && scope.isContended === true) written = await postgresArrayWrite(db, scope, ids, buffer)
      else if (scope.isContended === true) written = await sqliteLiveWrite(db, scope, ids, buffer)
      else if (dialect === 'postgres') {
        const payload = ahead?.payload ?? payloadOf(ids, buffer)
        written = await postgresWrite(db, table, scope, buffer, upsert, payload)
        // Sent and confirmed by the server: the bytes may be filled again.
        if (spareCopies.length < 2) spareCopies.push(payload.copy)
      } else written = await sqliteWrite(db, table, scope, ids, buffer, upsert, statements, paramArrays)
      return { attempted, written }
    },
  }
}

const insertHead = (table: string) => `insert into ${table} (org_id, batch_id, series_id, ts, value, text, quality)`
const conflictClause = (table: string, upsert: boolean) => (!upsert ? '' : table === 'historian_points' ? POINT_UPSERT : STAGING_UPSERT)

/**
 * PostgreSQL: the buffer is loaded with `COPY … FROM STDIN` (binary format) into a temporary table of the import's
 * connection (no index, emptied at every commit), then moved with one INSERT … SELECT. COPY cannot go straight into
 * historian_points: it has no ON CONFLICT (a collision must be decided row by row, not fail the chunk), and
 * PostgreSQL refuses COPY FROM into a table under row-level security.
 */
async function postgresWrite(db: Db, table: string, scope: Scope, buffer: SampleBuffer, upsert: boolean, payload: Payload): Promise<number> {
  await sql`create temp table if not exists historian_copy (
    series_id integer not null, ts bigint not null, value float8, text text, quality smallint not null
  ) on commit delete rows`.execute(db)
  const copied = await copyIn(db, 'copy historian_copy (series_id, ts, value, text, quality) from stdin (format binary)', payload.bytes)
  if (copied !== buffer.length) throw new Error(`COPY loaded ${copied} of ${buffer.length} samples`)
  const move = `${insertHead(table)} select $1, $2, c.series_id, c.ts, c.value, c.text, c.quality from historian_copy c ${conflictClause(table, upsert)}`
  const result = await db.executeQuery(CompiledQuery.raw(move, [scope.orgId, scope.batchId]))
  return Number(result.numAffectedRows ?? 0n)
}

/**
 * PostgreSQL, a contended (live) write: the buffer as five binary arrays (db/pg-arrays.ts) in primary-key order, in one
 * call of `historian_live_points` (migration 2550: a plain INSERT, written again with ON CONFLICT DO NOTHING only
 * when it met a stored sample). A push is at most SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES rows, so one statement is one
 * round trip where the COPY path takes three (the temporary table, the COPY, the move). The buffer is deduplicated, so
 * a conflict is another batch's row or one of an earlier push into the same open batch: the stored one is kept.
 */
async function postgresArrayWrite(db: Db, scope: Scope, ids: Int32Array, buffer: SampleBuffer): Promise<number> {
  const order = primaryKeyOrder(ids, buffer.ts)
  const n = order.length
  const text = (k: number) => buffer.text(order[k]!)
  return withBinaryArrays(async (arrays) => {
    const fixed = numberArrayBytes('int4', n) + numberArrayBytes('int8', n) + numberArrayBytes('float8', n) + numberArrayBytes('int2', n)
    arrays.start(fixed + textArrayBytes(n, text))
    const parameters = [
      scope.orgId,
      scope.batchId,
      arrays.numbers('int4', n, (k) => ids[order[k]!]!),
      arrays.numbers('int8', n, (k) => buffer.ts[order[k]!]!),
      arrays.numbers('float8', n, (k) => buffer.value(order[k]!)),
      arrays.texts(n, text),
      arrays.numbers('int2', n, (k) => buffer.qualities[order[k]!]!),
    ]
    const result = await db.executeQuery<{ written: number }>(
      CompiledQuery.raw('select historian_live_points($1, $2, $3::integer[], $4::bigint[], $5::float8[], $6::text[], $7::smallint[]) as written', parameters),
    )
    return result.rows[0]!.written
  })
}

/** The buffer's row indexes sorted by series then time: an INSERT … SELECT then walks each series' part of the index once. */
function primaryKeyOrder(ids: Int32Array, ts: Float64Array): Uint32Array {
  const order = new Uint32Array(ids.length)
  for (let i = 0; i < order.length; i++) order[i] = i
  return order.sort((a, b) => ids[a]! - ids[b]! || ts[a]! - ts[b]!)
}

/**
 * The buffer as binary COPY rows (series, ts, value, text, quality) in primary-key order: the INSERT … SELECT then
 * walks each series' part of the index once instead of hopping between series every row (a file lists every tag
 * at one timestamp before the next timestamp).
 */
function copyPayload(ids: Int32Array, buffer: SampleBuffer, copy: BinaryCopy): Payload {
  const { ts, qualities } = buffer
  const order = primaryKeyOrder(ids, ts)
  copy.start()
  for (const i of order) {
    copy.row(5)
    copy.int32(ids[i]!)
    copy.int64(ts[i]!)
    copy.float64(buffer.value(i))
    copy.text(buffer.text(i))
    copy.int16(qualities[i]!)
  }
  return { copy, bytes: copy.end() }
}

/** A COPY payload: `bytes` is valid until `copy` starts the next one. */
interface Payload {
  copy: BinaryCopy
  bytes: Buffer
}

/** SQLite: the text of a multi-row insert of `rows` rows, built once per size (connect.ts caches the prepared statements by text). */
function sqliteStatement(statements: Map<string, string>, table: string, rows: number, upsert: boolean): string {
  const key = `${table}:${rows}:${upsert}`
  let text = statements.get(key)
  if (text === undefined) {
    text = `${insertHead(table)} values ${new Array<string>(rows).fill('(?,?,?,?,?,?,?)').join(',')} ${conflictClause(table, upsert)}`
    statements.set(key, text)
  }
  return text
}

/**
 * SQLite: the buffer in statements of SQLITE_STATEMENT_ROWS sizes. Each size's parameter array is filled again for
 * every statement of that size: an array of 32 200 values is too large for V8's young generation, so a new one per
 * statement would be old-generation garbage (the import's memory would grow until the next full collection).
 */
async function sqliteWrite(
  db: Db,
  table: string,
  scope: Scope,
  ids: Int32Array,
  buffer: SampleBuffer,
  upsert: boolean,
  statements: Map<string, string>,
  paramArrays: Map<number, unknown[]>,
): Promise<number> {
  const { ts, qualities } = buffer
  const { orgId, batchId } = scope
  let written = 0
  for (let start = 0; start < buffer.length; ) {
    const rows = SQLITE_STATEMENT_ROWS.find((n) => n <= buffer.length - start)!
    let params = paramArrays.get(rows)
    if (params === undefined) paramArrays.set(rows, (params = new Array<unknown>(rows * 7)))
    let p = 0
    for (let i = start; i < start + rows; i++) {
      params[p++] = orgId
      params[p++] = batchId
      params[p++] = ids[i]
      params[p++] = ts[i]
      params[p++] = buffer.value(i)
      params[p++] = buffer.text(i)
      params[p++] = qualities[i]
    }
    // Not CompiledQuery.raw(text, params): it freezes the array.
    const result = await db.executeQuery({
      ...CompiledQuery.raw(sqliteStatement(statements, table, rows, upsert)),
      parameters: params,
    })
    written += Number(result.numAffectedRows ?? 0n)
    start += rows
  }
  return written
}

/**
 * SQLite, a live push (a contended write, service/live.ts): `INSERT OR IGNORE … SELECT` from a VALUES list of the
 * five columns that change, the organisation and batch bound once a statement, in primary-key order (a push
 * interleaves its series row by row; in key order its rows land next to each other). OR IGNORE keeps what is stored:
 * the buffer is deduplicated, so a conflict is another batch's row or an earlier push's into the same open batch,
 * neither of which a push may overwrite. It also leaves nothing in the statement that can abort
 * it half-way (a NOT NULL check or a key conflict under the default ABORT; the NOT NULL columns are bound from the
 * scope and typed arrays here, never null, so OR IGNORE drops no row for them), so SQLite keeps no statement journal for
 * it: with the upsert, each statement of the transaction first copied every page it changed into one, a temporary
 * file past 64 KiB, 2.3 writes for each write to the WAL (docs/benchmarks.md, issue 30 third pass). Statements of
 * power-of-two sizes, one prepared statement each, at most log2 of a push's rows of them.
 */
async function sqliteLiveWrite(db: Db, scope: Scope, ids: Int32Array, buffer: SampleBuffer): Promise<number> {
  const { ts, qualities } = buffer
  const order = primaryKeyOrder(ids, ts)
  let written = 0
  for (let start = 0; start < order.length; ) {
    const rows = Math.min(2 ** Math.floor(Math.log2(order.length - start)), SQLITE_LIVE_ROWS_MAX)
    const params = new Array<unknown>(2 + rows * 5)
    params[0] = scope.orgId
    params[1] = scope.batchId
    let p = 2
    for (let k = start; k < start + rows; k++) {
      const i = order[k]!
      params[p++] = ids[i]
      params[p++] = ts[i]
      params[p++] = buffer.value(i)
      params[p++] = buffer.text(i)
      params[p++] = qualities[i]
    }
    // Not CompiledQuery.raw(text, params): it freezes the array.
    const result = await db.executeQuery({ ...CompiledQuery.raw(sqliteLiveStatement(rows)), parameters: params })
    written += Number(result.numAffectedRows ?? 0n)
    start += rows
  }
  return written
}

/** The largest live statement: its parameter array (2 + 5 × 2 048 values) stays small enough for V8's young generation. */
const SQLITE_LIVE_ROWS_MAX = 2048

/** Live statement texts by size: one string each, so connect.ts's statement cache finds it without hashing it again. */
const sqliteLiveStatements = new Map<number, string>()

/** The live insert of `rows` rows (sqliteLiveWrite). */
export function sqliteLiveStatement(rows: number): string {
  let text = sqliteLiveStatements.get(rows)
  if (text === undefined) {
    text = `insert or ignore into historian_points (org_id, batch_id, series_id, ts, value, text, quality)
      select ?, ?, column1, column2, column3, column4, column5 from (values ${new Array<string>(rows).fill('(?,?,?,?,?)').join(',')})`
    sqliteLiveStatements.set(rows, text)
  }
  return text
}
