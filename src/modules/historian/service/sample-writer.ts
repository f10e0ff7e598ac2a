import { CompiledQuery, sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'
import { anySampleInRanges, ensureSeries, seriesKey } from '../store.ts'
import { copyIn, copyText } from './pg-copy.ts'
import type { SampleBuffer } from './sample-buffer.ts'

/** Where a batch's samples go: straight into historian_points, or (force=true) into the staging table. */
export type WriteTarget = 'samples' | 'staging'

export interface SampleWriter {
  /** Writes the buffer (deduplicated) and answers how many rows were written; the rest collided with another batch. */
  write(db: Db, buffer: SampleBuffer): Promise<{ attempted: number; written: number }>
  /** The series id of a pair this writer has written (for the collision report). */
  seriesId(instanceId: string, tagKey: string): number | undefined
}

interface Scope { orgId: OrgId; siteCode: string; batchId: string }

// SQLite allows 32 766 bound variables per statement: 7 per row.
const SQLITE_ROWS_PER_STATEMENT = 4_600

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
  const series = new Map<string, number>()
  const resolve = async (db: Db, buffer: SampleBuffer): Promise<Int32Array> => {
    const { instanceIds, tagKeys } = buffer
    const ids = new Int32Array(buffer.length)
    const missing = new Map<string, { instanceId: string; tagKey: string }>()
    // Rows of one pair come in runs (and a file has few pairs): one key and lookup per run, not per row.
    const runs = (each: (i: number, instanceId: string, tagKey: string) => void) => {
      let lastInstance: string | undefined
      let lastTag: string | undefined
      for (let i = 0; i < buffer.length; i++) {
        if (instanceIds[i] !== lastInstance || tagKeys[i] !== lastTag) {
          lastInstance = instanceIds[i]!
          lastTag = tagKeys[i]!
          each(i, lastInstance, lastTag)
        }
      }
    }
    runs((_, instanceId, tagKey) => {
      const k = seriesKey(instanceId, tagKey)
      if (!series.has(k) && !missing.has(k)) missing.set(k, { instanceId, tagKey })
    })
    if (missing.size > 0) for (const [k, id] of await ensureSeries(db, scope.orgId, scope.siteCode, [...missing.values()])) series.set(k, id)
    let start = -1
    let lastId = 0
    runs((i, instanceId, tagKey) => {
      if (start >= 0) ids.fill(lastId, start, i)
      start = i
      lastId = series.get(seriesKey(instanceId, tagKey))!
    })
    if (start >= 0) ids.fill(lastId, start, buffer.length)
    return ids
  }
  const mayCollide = (db: Db, ids: Int32Array, ts: number[]) => {
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
  const write = dialect === 'postgres' ? postgresWrite : (db: Db, t: string, sc: Scope, ids: Int32Array, b: SampleBuffer, upsert: boolean) => sqliteWrite(db, t, sc, ids, b, upsert, statements)
  return {
    seriesId: (instanceId, tagKey) => series.get(seriesKey(instanceId, tagKey)),
    async write(db, buffer) {
      if (buffer.length === 0) return { attempted: 0, written: 0 }
      // Series first (every pair of the buffer keeps a row after dedupe), then dedupe by series id.
      const ids = buffer.dedupe(await resolve(db, buffer))
      const attempted = buffer.length
      const upsert = await mayCollide(db, ids, buffer.ts)
      const written = await write(db, table, scope, ids, buffer, upsert)
      return { attempted, written }
    },
  }
}

const insertHead = (table: string) => `insert into ${table} (org_id, batch_id, series_id, ts, value, text, quality)`
const conflictClause = (table: string, upsert: boolean) => (!upsert ? '' : table === 'historian_points' ? POINT_UPSERT : STAGING_UPSERT)

/**
 * PostgreSQL: the buffer is loaded with `COPY … FROM STDIN` (text format) into a temporary table of the import's
 * connection (no index, integer columns, emptied at every commit), then moved with one INSERT … SELECT. COPY cannot
 * go straight into historian_points: it has no ON CONFLICT (a collision must be decided row by row, not fail the
 * chunk), and PostgreSQL refuses COPY FROM into a table under row-level security.
 */
async function postgresWrite(db: Db, table: string, scope: Scope, ids: Int32Array, buffer: SampleBuffer, upsert: boolean): Promise<number> {
  await sql`create temp table if not exists historian_copy (
    series_id integer not null, ts bigint not null, value float8, text text, quality smallint not null
  ) on commit delete rows`.execute(db)
  const copied = await copyIn(db, 'copy historian_copy (series_id, ts, value, text, quality) from stdin', copyPayload(ids, buffer))
  if (copied !== buffer.length) throw new Error(`COPY loaded ${copied} of ${buffer.length} samples`)
  const move = `${insertHead(table)} select $1, $2, c.series_id, c.ts, c.value, c.text, c.quality from historian_copy c ${conflictClause(table, upsert)}`
  const result = await db.executeQuery(CompiledQuery.raw(move, [scope.orgId, scope.batchId]))
  return Number(result.numAffectedRows ?? 0n)
}

/** The buffer as COPY text rows: series, ts, value, text, quality. */
function copyPayload(ids: Int32Array, buffer: SampleBuffer): Buffer {
  const parts: Buffer[] = []
  const { ts, values, texts, qualities } = buffer
  let text = ''
  for (let i = 0; i < buffer.length; i++) {
    const v = values[i]
    const t = texts[i]
    text += `${ids[i]}\t${ts[i]}\t${v === null || v === undefined ? '\\N' : v}\t${t === null || t === undefined ? '\\N' : copyText(t)}\t${qualities[i]}\n`
    if (text.length > 1 << 20) {
      parts.push(Buffer.from(text))
      text = ''
    }
  }
  parts.push(Buffer.from(text))
  return Buffer.concat(parts)
}

/**
 * SQLite: multi-row inserts (the statement text per size is built once per batch; connect.ts caches the prepared
 * statements by text).
 */
function sqliteStatement(statements: Map<string, string>, table: string, rows: number, upsert: boolean): string {
  const key = `${table}:${rows}:${upsert}`
  let text = statements.get(key)
  if (text === undefined) {
    text = `${insertHead(table)} values ${new Array<string>(rows).fill('(?,?,?,?,?,?,?)').join(',')} ${conflictClause(table, upsert)}`
    statements.set(key, text)
  }
  return text
}

async function sqliteWrite(db: Db, table: string, scope: Scope, ids: Int32Array, buffer: SampleBuffer, upsert: boolean, statements: Map<string, string>): Promise<number> {
  const { ts, values, texts, qualities } = buffer
  const { orgId, batchId } = scope
  let written = 0
  for (let start = 0; start < buffer.length; start += SQLITE_ROWS_PER_STATEMENT) {
    const end = Math.min(buffer.length, start + SQLITE_ROWS_PER_STATEMENT)
    const params: unknown[] = new Array((end - start) * 7)
    let p = 0
    for (let i = start; i < end; i++) {
      params[p++] = orgId
      params[p++] = batchId
      params[p++] = ids[i]
      params[p++] = ts[i]
      params[p++] = values[i]
      params[p++] = texts[i]
      params[p++] = qualities[i]
    }
    const result = await db.executeQuery(CompiledQuery.raw(sqliteStatement(statements, table, end - start, upsert), params))
    written += Number(result.numAffectedRows ?? 0n)
  }
  return written
}
