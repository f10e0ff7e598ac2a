import type { FastifyInstance, FastifyRequest } from 'fastify'
import { invalidField, type FieldProblem } from '../errors/domain-error.ts'
import { ContentEncodingRefused } from './errors.ts'

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

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units: no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a text cannot be stored: PostgreSQL refuses NUL, and a lone surrogate has no UTF-8 form. */
export function textRule(text: string): string | undefined {
  if (text.includes('\0')) return NUL_RULE
  if (LONE_SURROGATE.test(text)) return SURROGATE_RULE
  return undefined
}

/** RFC 6901: `~` and `/` in a reference token are escaped. */
const token = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

/** A value met by the walk; its pointer is spelled out only when it is refused. */
interface Visit {
  value: unknown
  parent: Visit | undefined
  key: string | number
  depth: number
}

function pointerOf(visit: Visit, base: string): string {
  const tokens: string[] = []
  for (let v: Visit | undefined = visit; v?.parent !== undefined; v = v.parent) tokens.push(token(String(v.key)))
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

export function installInputGuard(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain')
  // RFC 9110 §8.6: a request of Content-Length 0 has no content, whatever type it names. Fastify's JSON parser refused
  // it (400 MalformedBody), so a client sending `Content-Type: application/json` on every request could not revoke a key
  // without a reason (spec 4.1: the body is optional). It is now an absent body: the route's schema decides (a
  // required body is a 400 naming it, validated as null); any other text is parsed as before.
  const json = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body === '' ? done(null, undefined) : json(request, body as string, done),
  )
  // A body with a content encoding is a 415 naming it, before its bytes are read: no route inflates one, and read as
  // they are a gzip's bytes were JSON's "malformed body" or a CSV's "NUL character". The binary types are the tenant
  // package's, whose route refuses an encoding on top of its own gzip naming its types.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase()
    const type = request.headers['content-type']?.split(';')[0]!.trim().toLowerCase()
    // A type the route does not read at all keeps that answer (a 415 naming the types it reads).
    if (!encoding || encoding === 'identity' || type === undefined || BINARY_TYPES.has(type) || !request.server.hasContentTypeParser(type))
      return done(null, payload)
    done(new ContentEncodingRefused(encoding, type))
  })
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = unsafeInputOf(request)
    if (!problem) return done()
    done(invalidField(problem.pointer, problem.message, problem.in))
  })
}
