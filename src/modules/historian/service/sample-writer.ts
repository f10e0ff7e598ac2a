import { CompiledQuery, sql } from 'kysely'
import type { Dialect } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import { copyIn, copyText } from './pg-copy.ts'
import type { SampleBuffer } from './sample-buffer.ts'

/** Where a batch's samples go: straight into historian_samples, or (force=true) into the staging table. */
export type WriteTarget = 'samples' | 'staging'

export interface SampleWriter {
  /** Writes the buffer (deduplicated) and answers how many rows were written; the rest collided with another batch. */
  write(db: Db, buffer: SampleBuffer): Promise<{ attempted: number; written: number }>
}

// SQLite allows 32 766 bound variables per statement: 9 per row.
const SQLITE_ROWS_PER_STATEMENT = 3_600

const SAMPLE_UPSERT = `on conflict (org_id, site_code, instance_id, tag_key, ts)
  do update set value = excluded.value, text = excluded.text, quality = excluded.quality
  where historian_samples.batch_id = excluded.batch_id`
const STAGING_UPSERT = `on conflict (org_id, batch_id, instance_id, tag_key, ts)
  do update set value = excluded.value, text = excluded.text, quality = excluded.quality`

/**
 * Without force a row lands only where no other batch holds that instance, tag and timestamp: the DO UPDATE's WHERE
 * lets a batch overwrite its own earlier row (a later line of the file) and never another batch's, so written <
 * attempted counts the collisions. Raw compiled statements: Kysely's builder costs more than the insert itself here.
 */
export function createSampleWriter(dialect: Dialect, target: WriteTarget, scope: { orgId: string; siteCode: string; batchId: string }): SampleWriter {
  return dialect === 'postgres' ? postgresWriter(target, scope) : sqliteWriter(target, scope)
}

/**
 * PostgreSQL: each chunk is loaded with `COPY … FROM STDIN` (text format) into a temporary table of the import's
 * connection (emptied at every commit), then moved with one INSERT … SELECT carrying the same upsert rules as
 * SQLite. COPY cannot go straight into historian_samples: it has no ON CONFLICT (a collision must be decided row by
 * row, not fail the chunk), and PostgreSQL refuses COPY FROM into a table under row-level security.
 */
function postgresWriter(target: WriteTarget, scope: { orgId: string; siteCode: string; batchId: string }): SampleWriter {
  const move = target === 'samples'
    ? `insert into historian_samples (org_id, site_code, batch_id, instance_id, tag_key, ts, value, text, quality)
       select $1, $2, $3, c.instance_id, c.tag_key, c.ts, c.value, c.text, c.quality from historian_copy c
       ${SAMPLE_UPSERT}`
    : `insert into historian_staging (org_id, batch_id, instance_id, tag_key, ts, value, text, quality)
       select $1, $3, c.instance_id, c.tag_key, c.ts, c.value, c.text, c.quality from historian_copy c
       where $2::text is not null
       ${STAGING_UPSERT}`
  return {
    async write(db, buffer) {
      buffer.dedupe()
      const attempted = buffer.length
      if (attempted === 0) return { attempted, written: 0 }
      await sql`create temp table if not exists historian_copy (
        instance_id text not null, tag_key text not null, ts bigint not null, value float8, text text, quality smallint not null
      ) on commit delete rows`.execute(db)
      const copied = await copyIn(db, 'copy historian_copy (instance_id, tag_key, ts, value, text, quality) from stdin', copyPayload(buffer))
      if (copied !== attempted) throw new Error(`COPY loaded ${copied} of ${attempted} samples`)
      const result = await db.executeQuery(CompiledQuery.raw(move, [scope.orgId, scope.siteCode, scope.batchId]))
      await sql`truncate historian_copy`.execute(db)
      return { attempted, written: Number(result.numAffectedRows ?? 0n) }
    },
  }
}

/** The buffer as COPY text rows: instance, tag, ts, value, text, quality. */
function copyPayload(buffer: SampleBuffer): Buffer {
  const parts: Buffer[] = []
  const escaped = new Map<string, string>()
  const field = (s: string) => {
    let e = escaped.get(s)
    if (e === undefined) escaped.set(s, (e = copyText(s)))
    return e
  }
  const { instanceIds, tagKeys, ts, values, texts, qualities } = buffer
  let text = ''
  for (let i = 0; i < buffer.length; i++) {
    const v = values[i]
    const t = texts[i]
    text += `${field(instanceIds[i]!)}\t${field(tagKeys[i]!)}\t${ts[i]}\t${v === null || v === undefined ? '\\N' : v}\t${t === null || t === undefined ? '\\N' : copyText(t)}\t${qualities[i]}\n`
    if (text.length > 1 << 20) {
      parts.push(Buffer.from(text))
      text = ''
    }
  }
  parts.push(Buffer.from(text))
  return Buffer.concat(parts)
}

function sqliteWriter(target: WriteTarget, scope: { orgId: string; siteCode: string; batchId: string }): SampleWriter {
  const statements = new Map<number, string>()
  const statementFor = (rows: number) => {
    let text = statements.get(rows)
    if (text === undefined) {
      const values = new Array<string>(rows).fill('(?,?,?,?,?,?,?,?,?)').join(',')
      text = target === 'samples'
        ? `insert into historian_samples (org_id, site_code, batch_id, instance_id, tag_key, ts, value, text, quality) values ${values} ${SAMPLE_UPSERT}`
        // site_code has no column in staging: the insert names it for the same parameter layout and drops it.
        : `insert into historian_staging (org_id, batch_id, instance_id, tag_key, ts, value, text, quality)
           select column1, column3, column4, column5, column6, column7, column8, column9 from (values ${values}) where true ${STAGING_UPSERT}`
      statements.set(rows, text)
    }
    return text
  }
  return {
    async write(db, buffer) {
      buffer.dedupe()
      const attempted = buffer.length
      let written = 0
      for (let start = 0; start < attempted; start += SQLITE_ROWS_PER_STATEMENT) {
        const end = Math.min(attempted, start + SQLITE_ROWS_PER_STATEMENT)
        const params: unknown[] = new Array((end - start) * 9)
        let p = 0
        for (let i = start; i < end; i++) {
          params[p++] = scope.orgId
          params[p++] = scope.siteCode
          params[p++] = scope.batchId
          params[p++] = buffer.instanceIds[i]
          params[p++] = buffer.tagKeys[i]
          params[p++] = buffer.ts[i]
          params[p++] = buffer.values[i]
          params[p++] = buffer.texts[i]
          params[p++] = buffer.qualities[i]
        }
        const result = await db.executeQuery(CompiledQuery.raw(statementFor(end - start), params))
        written += Number(result.numAffectedRows ?? 0n)
      }
      return { attempted, written }
    },
  }
}
