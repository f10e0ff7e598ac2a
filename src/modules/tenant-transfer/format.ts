import { createHash } from 'node:crypto'
import { DomainError } from '../../errors/domain-error.ts'
import { gunzipLimited, splitLines } from '../../http/inflate.ts'
import { DEPTH_RULE, findUnsafeJson, jsonTextDepth, MAX_JSON_DEPTH } from '../../http/input-guard.ts'
import { PackageCorrupt, PackageInflatesTooLarge, PackageVersionUnsupported } from './errors.ts'
import type { Row } from './introspect.ts'
import { quoted } from '../../errors/quoted.ts'

/**
 * A tenant package is gzip of newline-delimited JSON, one record a line, streamable both ways in constant memory:
 *   {"type":"header","format":"sitegrid-tenant-package","formatVersion":1,"sourceMode":…,"exportedAt":…,"org":{id,slug,name},"site":null|code,"tables":[…]}
 *   {"type":"row","part":"sites","row":{…columns sorted by name, without org_id…}}         (per table, in dependency order)
 *   {"type":"partEnd","part":"sites","count":N,"sha256":"<hex of that part's row lines>"}
 *   {"type":"end","counts":{part: N…},"sha256":"<hex of every line before this one>"}
 * A package without its end record is truncated; any checksum or count that does not match is tampering.
 */
export const PACKAGE_FORMAT = 'sitegrid-tenant-package'
export const PACKAGE_FORMAT_VERSION = 1
/** One record a line: a row is far smaller (JSON bodies are capped at 100 MiB at most, most by far less). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

export interface PackageHeader {
  type: 'header'
  format: string
  formatVersion: number
  sourceMode: 'site' | 'cloud'
  exportedAt: string
  org: { id: string; slug: string; name: string }
  site: string | null
  tables: string[]
}

export interface PackageEvent {
  part: string
  row: Row
}

/**
 * Serialises header and parts to the package's text (not yet gzipped) in ~64 KiB pieces, computing every checksum on
 * the way; `onRows` hears the rows of each piece (the metrics).
 */
export async function* writePackage(
  header: PackageHeader,
  parts: AsyncIterable<{ part: string; rows: AsyncIterable<Row> }>,
  onRows: (rows: number) => void = () => {},
): AsyncGenerator<string> {
  const whole = createHash('sha256')
  let pending = ''
  let pendingRows = 0
  const emit = (line: string) => {
    whole.update(line)
    pending += line
  }
  emit(`${JSON.stringify(header)}\n`)
  const counts: Record<string, number> = {}
  for await (const { part, rows } of parts) {
    const hash = createHash('sha256')
    let count = 0
    const prefix = `{"type":"row","part":${JSON.stringify(part)},"row":`
    for await (const row of rows) {
      const line = `${prefix}${JSON.stringify(row)}}\n`
      hash.update(line)
      count += 1
      emit(line)
      pendingRows += 1
      if (pending.length >= 65_536) {
        onRows(pendingRows)
        yield pending
        pending = ''
        pendingRows = 0
      }
    }
    counts[part] = count
    emit(`${JSON.stringify({ type: 'partEnd', part, count, sha256: hash.digest('hex') })}\n`)
  }
  onRows(pendingRows)
  yield `${pending}${JSON.stringify({ type: 'end', counts, sha256: whole.digest('hex') })}\n`
}

/**
 * Reads a package from its gzipped bytes, checking format version, part counts and checksums as it goes.
 * `onHeader` runs before any row is yielded; rows of a part are yielded before its checksum is known, so a
 * caller that writes must do so inside a transaction it rolls back when this throws.
 */
export async function* readPackage(
  bytes: AsyncIterable<Buffer>,
  maxInflatedBytes: number,
  onHeader: (header: PackageHeader) => void,
): AsyncGenerator<PackageEvent> {
  const inflated = gunzipLimited(bytes, maxInflatedBytes, () => new PackageInflatesTooLarge(maxInflatedBytes))
  const lines = splitLines(
    inflated,
    MAX_LINE_BYTES,
    () => new PackageCorrupt(`a line is longer than ${MAX_LINE_BYTES} bytes`),
    (line) => new PackageCorrupt(`line ${line} is not UTF-8 text`),
  )
  const whole = createHash('sha256')
  let header: PackageHeader | undefined
  let part: { name: string; hash: ReturnType<typeof createHash>; count: number } | undefined
  const seen = new Set<string>()
  let ended = false
  try {
    for await (const raw of lines) {
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw // a package saved with CRLF line ends reads the same
      if (ended) throw new PackageCorrupt('data after the end record')
      const line = `${text}\n`
      const record = parseRecord(text)
      if (!header) {
        header = checkHeader(record)
        onHeader(header)
        whole.update(line)
        continue
      }
      if (record.type === 'row') {
        const name = String(record.part)
        if (!part) {
          if (!header.tables.includes(name) || seen.has(name)) throw new PackageCorrupt(`unexpected part ${quoted(name)}`)
          part = { name, hash: createHash('sha256'), count: 0 }
        }
        if (name !== part.name || typeof record.row !== 'object' || record.row === null) throw new PackageCorrupt(`row of part ${quoted(name)} out of place`)
        part.hash.update(line)
        part.count += 1
        whole.update(line)
        refuseUnstorable(name, part.count, record.row as Row)
        yield { part: name, row: record.row as Row }
      } else if (record.type === 'partEnd') {
        const name = String(record.part)
        const current = part ?? (header.tables.includes(name) && !seen.has(name) ? { name, hash: createHash('sha256'), count: 0 } : undefined)
        if (!current || current.name !== name) throw new PackageCorrupt(`unexpected end of part ${quoted(name)}`)
        if (record.count !== current.count || record.sha256 !== current.hash.digest('hex')) throw new PackageCorrupt(`part ${name} does not match its checksum`)
        seen.add(name)
        part = undefined
        whole.update(line)
      } else if (record.type === 'end') {
        if (part) throw new PackageCorrupt(`part ${part.name} has no end record`)
        if (record.sha256 !== whole.digest('hex')) throw new PackageCorrupt('the package does not match its checksum')
        ended = true
      } else {
        throw new PackageCorrupt(`unknown record type ${quoted(String(record.type))}`)
      }
    }
  } catch (err) {
    if (err instanceof DomainError) throw err
    throw new PackageCorrupt('not a gzip of JSON lines')
  }
  if (!header) throw new PackageCorrupt('empty package')
  if (!ended) throw new PackageCorrupt('truncated: no end record')
}

/**
 * A row holds only what a request could have written (http/input-guard.ts): no NUL or lone surrogate (PostgreSQL
 * refuses them: the import failed with a 500 there and stored them on SQLite), and JSON text columns (`config`,
 * `metadata`, …) nested at most MAX_JSON_DEPTH levels (deeper, every later read of the row overflowed the serializer).
 */
function refuseUnstorable(part: string, line: number, row: Row): void {
  const unsafe = findUnsafeJson(row)
  if (unsafe) throw new PackageCorrupt(`row ${line} of part ${part}: ${unsafe.pointer.slice(1)} ${unsafe.message}`)
  for (const [column, value] of Object.entries(row)) {
    if (typeof value === 'string' && /^\s*[[{]/.test(value) && jsonTextDepth(value) > MAX_JSON_DEPTH) {
      throw new PackageCorrupt(`row ${line} of part ${part}: ${column} ${DEPTH_RULE}`)
    }
  }
}

function parseRecord(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // below
  }
  throw new PackageCorrupt('a line is not a JSON record')
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

function checkHeader(record: Record<string, unknown>): PackageHeader {
  if (record.type !== 'header' || record.format !== PACKAGE_FORMAT) throw new PackageCorrupt('not a sitegrid tenant package')
  if (typeof record.formatVersion !== 'number' || record.formatVersion > PACKAGE_FORMAT_VERSION || record.formatVersion < 1) {
    throw new PackageVersionUnsupported(record.formatVersion)
  }
  const problem = headerFieldProblem(record)
  if (problem) throw new PackageCorrupt(`the header's ${problem}`)
  return record as unknown as PackageHeader
}

/**
 * The header's fields a staging and an import answer with or read: of another type, the answer failed to serialise
 * (a 500) after the package was stored.
 */
function headerFieldProblem(record: Record<string, unknown>): string | undefined {
  const org = record.org
  if (typeof org !== 'object' || org === null || Array.isArray(org)) return 'org must be an object'
  for (const field of ['id', 'slug', 'name']) if (typeof (org as Record<string, unknown>)[field] !== 'string') return `org.${field} must be a string`
  if (record.sourceMode !== 'site' && record.sourceMode !== 'cloud') return 'sourceMode must be one of site, cloud'
  if (typeof record.exportedAt !== 'string') return 'exportedAt must be a string'
  if (record.site !== null && typeof record.site !== 'string') return 'site must be a string or null'
  // Table names as SQL writes them (at most 63 characters): every refusal may name a part, and a name was any string.
  if (!Array.isArray(record.tables) || !record.tables.every((t) => typeof t === 'string' && TABLE_NAME.test(t)))
    return 'tables must be an array of table names (a-z, 0-9 and _, at most 63 characters)'
  return undefined
}
