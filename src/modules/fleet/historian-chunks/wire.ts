import { createHash } from 'node:crypto'
import { MAX_TIME } from '../../../clock.ts'
import type { FieldProblem } from '../../../errors/domain-error.ts'
import { textRule } from '../../../http/input-guard.ts'
import type { LinkSample } from '../../historian/link.ts'
import { SAMPLE_VALUE_RULE, sampleValueRule } from '../../historian/sample-value.ts'
import { MAX_CHUNK_SAMPLES, TAG_KEY_MAX } from './schemas.ts'

/** The chunk's checksum: lower-case hex SHA-256 of the canonical samples, `JSON.stringify(samples)`. */
export function chunkDigest(samples: readonly LinkSample[]): string {
  return sha256Hex(JSON.stringify(samples))
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

const MAX_PROBLEMS = 20

const isInt = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/**
 * What the route's schema checks, checked again for callers of the service (the value rules of the samples part's
 * columns: SQLite would store any value in any column), plus what a schema cannot say: samples ascending by
 * (instanceId, tagKey) in byte order then ts, so that no key comes twice (one upsert statement cannot write a row
 * twice) and a reordered chunk is refused. The first problems, each by its pointer.
 */
export function findSampleProblems(samples: readonly unknown[]): FieldProblem[] {
  const problems: FieldProblem[] = []
  const add = (pointer: string, message: string) => problems.push({ in: 'body', pointer, message })
  if (samples.length === 0 || samples.length > MAX_CHUNK_SAMPLES) add('/samples', `must hold 1 to ${MAX_CHUNK_SAMPLES} samples`)
  let previous: LinkSample | undefined
  for (let i = 0; i < samples.length && problems.length < MAX_PROBLEMS; i++) {
    const s = samples[i]
    const at = `/samples/${i}`
    if (!Array.isArray(s) || s.length !== 6) {
      add(at, 'must be [instanceId, tagKey, ts, value, text, quality]')
      previous = undefined
      continue
    }
    const [instanceId, tagKey, ts, value, text, quality] = s as unknown[]
    const before = problems.length
    if (typeof instanceId !== 'string' || instanceId.length === 0 || instanceId.length > 100) add(`${at}/0`, 'must be an instance id (1 to 100 characters)')
    // An instance's tag key (its tagMappings' rule): a longer one made PostgreSQL's series index refuse the row (a 500).
    if (typeof tagKey !== 'string' || tagKey.length === 0 || tagKey.length > TAG_KEY_MAX) add(`${at}/1`, `must be a tag key (1 to ${TAG_KEY_MAX} characters)`)
    if (!isInt(ts, -MAX_TIME, MAX_TIME)) add(`${at}/2`, `must be an integer (epoch ms) from -${MAX_TIME} to ${MAX_TIME}`)
    const valueRule = value === null ? undefined : typeof value === 'number' ? sampleValueRule(value) : SAMPLE_VALUE_RULE
    if (valueRule !== undefined) add(`${at}/3`, `must be ${valueRule} or null`)
    if (text !== null && typeof text !== 'string') add(`${at}/4`, 'must be a string or null')
    if (!isInt(quality, -32_768, 32_767)) add(`${at}/5`, 'must be an integer from -32768 to 32767')
    // PostgreSQL text holds no NUL nor a lone surrogate: refused here rather than failing the insert (a 500).
    for (const [k, v] of [instanceId, tagKey, text].entries()) {
      const rule = typeof v === 'string' ? textRule(v) : undefined
      if (rule !== undefined) add(`${at}/${k === 2 ? 4 : k}`, rule)
    }
    if (problems.length > before) {
      previous = undefined
      continue
    }
    const sample = s as LinkSample
    if (previous !== undefined) {
      const order = byteOrder(previous[0], sample[0]) || byteOrder(previous[1], sample[1]) || Math.sign(previous[2] - sample[2])
      if (order >= 0)
        add(
          at,
          order === 0 ? 'repeats the key (instanceId, tagKey, ts) of the sample before it' : 'comes before the sample before it (instanceId, tagKey, ts order)',
        )
    }
    previous = sample
  }
  return problems
}
