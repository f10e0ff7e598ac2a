import type { Db } from '../../../db/schema.ts'
import { invalidField } from '../../../errors/domain-error.ts'
import { decodeCursor, encodeCursor } from '../../../http/paging.ts'
import type { OrgId } from '../../../ids.ts'
import type { SeriesQuery } from '../schemas.ts'
import { listBuckets, listRawSamples } from '../store/queries.ts'

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const QUALITY_NAME = (q: number) => (q >= 192 ? 'good' : q >= 64 ? 'uncertain' : 'bad')
const MAX_TIME = 8_640_000_000_000_000

/** `15m`, `1h`, `500ms`, `1d`: a bucket width from 1 ms to 366 days. */
export function parseBucket(text: string): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text)
  const ms = match === null ? NaN : Number(match[1]) * UNIT_MS[match[2]!]!
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > 366 * 86_400_000)
    throw invalidField('/bucket', 'must be a width such as 500ms, 10s, 15m, 1h or 1d (at most 366d)', 'query')
  return ms
}

function parseTime(name: 'from' | 'to', text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  const ms = Date.parse(text)
  if (!Number.isFinite(ms)) throw invalidField(`/${name}`, 'must be an RFC 3339 date-time such as 2024-03-31T00:00:00Z', 'query')
  return ms
}

/** Raw samples (text states included) or, with `bucket`, numeric buckets; complete batches only. */
export async function readSeries(db: Db, orgId: OrgId, siteCode: string, query: SeriesQuery) {
  const from = parseTime('from', query.from, -MAX_TIME)
  const to = parseTime('to', query.to, MAX_TIME)
  if (to <= from) throw invalidField('/to', 'must be after from', 'query')
  const key = { siteCode, instanceId: query.instanceId, tagKey: query.tag, from, to }
  const after = decodeCursor(query.cursor, ['number'])?.[0] as number | undefined
  if (query.bucket === undefined) {
    const limit = query.limit ?? 1000
    const rows = await listRawSamples(db, orgId, key, { limit, after })
    const page = rows.slice(0, limit)
    return {
      instanceId: query.instanceId,
      tag: query.tag,
      bucket: null,
      samples: page.map((r) => ({
        ts: new Date(Number(r.ts)).toISOString(),
        value: r.value === null ? null : Number(r.value),
        text: r.text,
        quality: QUALITY_NAME(Number(r.quality)),
        batchId: r.batch_id,
      })),
      buckets: null,
      nextCursor: rows.length > limit ? encodeCursor([Number(page[page.length - 1]!.ts)]) : null,
    }
  }
  const bucketMs = parseBucket(query.bucket)
  const limit = query.limit ?? 1000
  const rows = await listBuckets(db, orgId, key, bucketMs, { limit, after })
  const page = rows.slice(0, limit)
  return {
    instanceId: query.instanceId,
    tag: query.tag,
    bucket: query.bucket,
    samples: null,
    buckets: page.map((b) => ({ start: new Date(b.start).toISOString(), min: b.min, max: b.max, mean: b.mean, first: b.first, last: b.last, count: b.count })),
    nextCursor: rows.length > limit ? encodeCursor([page[page.length - 1]!.start]) : null,
  }
}
