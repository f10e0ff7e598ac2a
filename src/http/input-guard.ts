import { isUtf8 } from 'node:buffer'
import { Transform } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { invalidField, pointerToken, type FieldProblem } from '../errors/domain-error.ts'
import { BodyNotUtf8, CharsetRefused, ContentEncodingRefused } from './errors.ts'

/**
 * The deepest a JSON body nests (objects and arrays; the body itself is level 1). Free-form fields (an instance's
 * `config`, a node's `metadata`, …) are bounded by it: JSON.stringify, PostgreSQL's jsonb and every walker of
 * stored JSON recurse, and a value thousands of levels deep overflowed their stacks (issue 24, defect 9).
 */
export const MAX_JSON_DEPTH = 64

export const DEPTH_RULE = `must not nest deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`
export const NUL_RULE = 'must not contain the NUL character (U+0000)'
export const SURROGATE_RULE = 'must not contain a lone surrogate (U+D800 to U+DFFF without its pair)'
/** JSON has no Infinity, but JSON.parse reads a number past the largest double (`1e400`) as it. */
export const FINITE_RULE = 'must be a finite number (this one is past the largest double)'

/**
 * The instants an ISO 8601 date-time with a four-digit year writes (0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z),
 * which every answer's `date-time` is: a stored time past them answered a 500 wherever it was read (session 23).
 */
export const FIRST_ISO_MS = -62_167_219_200_000
export const LAST_ISO_MS = 253_402_300_799_999
export const ISO_TIME_RULE = 'epoch milliseconds from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units: no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a text cannot be stored: PostgreSQL refuses NUL, and a lone surrogate has no UTF-8 form. */
export function textRule(text: string): string | undefined {
  if (text.includes('\0')) return NUL_RULE
  if (LONE_SURROGATE.test(text)) return SURROGATE_RULE
  return undefined
}

/**
 * The offset of the first byte of `bytes` that is not part of a UTF-8 sequence (a sequence cut short at the end
 * included), or -1 when all of it is UTF-8. Decoding puts U+FFFD in the place of such bytes; one that was sent as
 * U+FFFD itself (EF BF BD) is told apart by its bytes.
 */
export function firstNonUtf8(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')
  let offset = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0xfffd && !(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset
    if (c >= 0xd800 && c <= 0xdbff) i++ // a pair: one four-byte sequence
    offset += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3
  }
  return offset
}

/** The line breaks (LF) in `bytes` before `end`, and the offset after the last of them (0 when none). */
function linesBefore(bytes: Uint8Array, end: number): { breaks: number; lineStart: number } {
  let breaks = 0
  let lineStart = 0
  for (let at = bytes.indexOf(10); at !== -1 && at < end; at = bytes.indexOf(10, at + 1)) {
    breaks++
    lineStart = at + 1
  }
  return { breaks, lineStart }
}

/** Where a text body stops being UTF-8: decoded, the byte would have become U+FFFD and the text been stored changed. */
function notUtf8(byte: number, line: number, column: number, offset: number): BodyNotUtf8 {
  const hex = byte.toString(16).toUpperCase().padStart(2, '0')
  return new BodyNotUtf8(line, `${UTF8_RULE}: byte 0x${hex} at column ${column} (byte ${offset} of the body; columns counted in bytes) is not UTF-8`)
}

export const UTF8_RULE = 'must be UTF-8 text (the only character set read)'

/** A whole body's text; a byte that is not UTF-8 answers 400 MalformedBody naming its line and column. */
export function utf8Text(bytes: Buffer): string {
  const bad = firstNonUtf8(bytes)
  if (bad === -1) return bytes.toString('utf8')
  const { breaks, lineStart } = linesBefore(bytes, bad)
  throw notUtf8(bytes[bad]!, breaks + 1, bad - lineStart + 1, bad + 1)
}

/** A content-type parser (`parseAs: 'buffer'`) for a text body: its UTF-8 text, or the 400 of utf8Text. */
export function parseUtf8Text(_request: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void): void {
  let text: string
  try {
    text = utf8Text(body)
  } catch (err) {
    return done(err as Error)
  }
  done(null, text)
}

/** The length of `bytes` without a UTF-8 sequence that its end cuts short (the next chunk completes it). */
function completeLength(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i >= 0 && i >= bytes.length - 3; i--) {
    const b = bytes[i]!
    if ((b & 0xc0) === 0x80) continue // a continuation byte
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1
    return i + length > bytes.length ? i : bytes.length
  }
  return bytes.length
}

/**
 * A body streamed on as it arrives (the network's bulk load), failing at its first byte that is not UTF-8 with the
 * 400 of utf8Text. Chunks pass unchanged; only a sequence split between two chunks is held to be checked whole.
 */
export function utf8Checked(): Transform {
  let held: Buffer = Buffer.alloc(0)
  let heldAt = 0 // the body offset of held[0]
  let line = 1
  let lineStart = 0 // the body offset where `line` starts
  const fail = (bytes: Buffer, bad: number) => {
    const before = linesBefore(bytes, bad)
    const start = before.breaks > 0 ? heldAt + before.lineStart : lineStart
    return notUtf8(bytes[bad]!, line + before.breaks, heldAt + bad - start + 1, heldAt + bad + 1)
  }
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const bytes = held.length === 0 ? chunk : Buffer.concat([held, chunk])
      const complete = completeLength(bytes)
      const bad = firstNonUtf8(bytes.subarray(0, complete))
      if (bad !== -1) return done(fail(bytes, bad))
      const before = linesBefore(bytes, complete)
      line += before.breaks
      if (before.breaks > 0) lineStart = heldAt + before.lineStart
      held = bytes.subarray(complete)
      heldAt += complete
      done(null, chunk)
    },
    flush(done) {
      done(held.length === 0 ? null : fail(held, 0))
    },
  })
}

/** A value met by the walk; its pointer is spelled out only when it is refused. */
interface Visit {
  value: unknown
  parent: Visit | undefined
  key: string | number
  depth: number
}

function pointerOf(visit: Visit, base: string): string {
  const tokens: string[] = []
  for (let v: Visit | undefined = visit; v?.parent !== undefined; v = v.parent) tokens.push(pointerToken(String(v.key)))
  return tokens.length === 0 ? base : `${base}/${tokens.reverse().join('/')}`
}

/**
 * The first value of a parsed JSON document (depth first) that nests too deep or holds text that cannot be stored
 * (in a string or a property name), with its pointer under `base`. Iterative, so any depth is safe to walk, and
 * children are stacked one by one (a spread of a 400 000-element array overflows the call stack).
 */
export function findUnsafeJson(
  document: unknown,
  base = '',
  maxDepth = MAX_JSON_DEPTH,
  finiteNumbers = false,
): { pointer: string; message: string } | undefined {
  const stack: Visit[] = [{ value: document, parent: undefined, key: '', depth: 0 }]
  while (stack.length > 0) {
    const visit = stack.pop()!
    const { value, depth } = visit
    if (typeof value === 'number') {
      if (finiteNumbers && !Number.isFinite(value)) return { pointer: pointerOf(visit, base), message: FINITE_RULE }
      continue
    }
    if (typeof value === 'string') {
      const rule = textRule(value)
      if (rule) return { pointer: pointerOf(visit, base), message: rule }
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth >= maxDepth) return { pointer: pointerOf(visit, base), message: DEPTH_RULE }
    const keys = Array.isArray(value) ? undefined : Object.keys(value)
    if (keys !== undefined) {
      for (const key of keys) {
        const rule = textRule(key)
        if (rule) return { pointer: pointerOf({ value: undefined, parent: visit, key, depth: depth + 1 }, base), message: `(the property name) ${rule}` }
      }
    }
    // Pushed last to first, so that the first child is walked first.
    const children = keys ?? (value as unknown[])
    for (let i = children.length - 1; i >= 0; i--) {
      const key = keys === undefined ? i : keys[i]!
      const child = keys === undefined ? (value as unknown[])[i] : (value as Record<string, unknown>)[key as string]
      stack.push({ value: child, parent: visit, key, depth: depth + 1 })
    }
  }
  return undefined
}

/**
 * The nesting of a JSON text (objects and arrays, outside its strings), counted without parsing: for JSON stored as
 * text that reaches the server by another way than a request body (a tenant package's rows).
 */
export function jsonTextDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // the escaped character is skipped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x7d || c === 0x5d) depth--
  }
  return deepest
}

/** A parsed body worth walking: a JSON document or a CSV text, not a stream or a multipart form read by the route. */
function isParsedBody(body: unknown): boolean {
  if (typeof body === 'string' || Array.isArray(body)) return true
  if (body === null || typeof body !== 'object') return false
  const proto: unknown = Object.getPrototypeOf(body)
  return proto === Object.prototype || proto === null
}

/** A text body (CSV) holding a character that cannot be stored, named by its line. */
function textBodyProblem(text: string): FieldProblem | undefined {
  const lines = text.split('\n')
  for (const [index, line] of lines.entries()) {
    const rule = textRule(line)
    if (rule) return { in: 'body', pointer: `/line/${index + 1}`, message: rule }
  }
  return undefined
}

/** The first path parameter, query parameter or body field that the database could not store or the server could not walk. */
export function unsafeInputOf(request: FastifyRequest): FieldProblem | undefined {
  for (const where of ['params', 'query'] as const) {
    const found = findUnsafeJson(request[where])
    if (found) return { in: where, ...found }
  }
  const { body } = request
  if (!isParsedBody(body)) return undefined
  if (typeof body === 'string') return textBodyProblem(body)
  // An infinite number too: the schema's `integer` and `number` let Infinity pass (Ajv's strictNumbers is off with
  // `strict: false`, and with coercion it would let a query's Infinity past `maximum`), and it reached the database.
  const found = findUnsafeJson(body, '', MAX_JSON_DEPTH, true)
  return found && { in: 'body', ...found }
}

/**
 * One check for every route (issue 24, defects 9–11), before schema validation and before any handler, hook or
 * query sees the input: a NUL or lone surrogate in any path parameter, query parameter or body string, and a body
 * nested deeper than MAX_JSON_DEPTH, answer 400 `ValidationFailed` naming the field — the same on both databases.
 * Bodies are read only as JSON (and the CSV, multipart and gzip a route adds itself): Fastify's text/plain parser
 * goes, so text/plain, like any other type no route reads, answers 415 `UnsupportedMediaType`.
 * JSON.parse (V8) and secure-json-parse's prototype scan are iterative, so parsing itself is safe at any depth.
 */
const BINARY_TYPES = new Set(['application/gzip', 'application/octet-stream'])
/** Every charset parameter (a second one, `charset=utf-8; charset=latin1`, is not left unread). */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/gi
/** Charsets whose text is UTF-8 (US-ASCII is a part of it). */
const UTF8_NAMES = ['utf-8', 'utf8', 'us-ascii']

export function installInputGuard(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain')
  // RFC 9110 §8.6: a request of Content-Length 0 has no content, whatever type it names. Fastify's JSON parser refused
  // it (400 MalformedBody), so a client sending `Content-Type: application/json` on every request could not revoke a key
  // without a reason (spec 4.1: the body is optional). It is now an absent body: the route's schema decides (a
  // required body is a 400 naming it, validated as null); any other text is parsed as before.
  const json = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  // Read as bytes and decoded here: Fastify's own decoding put U+FFFD in the place of a byte that is not UTF-8, and the
  // changed text was stored (session 23).
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) =>
    body.length === 0 ? done(null, undefined) : parseUtf8Text(request, body, (err, text) => (err ? done(err) : json(request, text as string, done))),
  )
  // A body with a content encoding is a 415 naming it, before its bytes are read: no route inflates one, and read as
  // they are a gzip's bytes were JSON's "malformed body" or a CSV's "NUL character". The binary types are the tenant
  // package's, whose route refuses an encoding on top of its own gzip naming its types.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const header = request.headers['content-type']
    const type = header?.split(';')[0]!.trim().toLowerCase()
    // A type the route does not read at all keeps that answer (a 415 naming the types it reads).
    if (type === undefined || BINARY_TYPES.has(type) || !request.server.hasContentTypeParser(type)) return done(null, payload)
    const encoding = request.headers['content-encoding']?.trim().toLowerCase()
    if (encoding && encoding !== 'identity') return done(new ContentEncodingRefused(encoding, type))
    // Every text is read as UTF-8: another declared charset (latin1, utf-16) was read as UTF-8 all the same (session 23).
    const other = [...header!.matchAll(CHARSET)].map((m) => m[1]!.toLowerCase()).find((charset) => !UTF8_NAMES.includes(charset))
    if (other !== undefined) return done(new CharsetRefused(other, type))
    done(null, payload)
  })
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = unsafeInputOf(request)
    if (!problem) return done()
    done(invalidField(problem.pointer, problem.message, problem.in))
  })
}
