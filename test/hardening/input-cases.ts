// The input classes of issue 24 (defects 9–11) as requests for any operation of the OpenAPI document: a NUL or a
// lone surrogate in each path parameter, query parameter and body string, deep nesting in each free-form body field
// and as the whole body, bodies of content types the operation does not read, and numbers no field can hold.
import {
  exampleOf,
  fillPath,
  jsonBodySchema,
  pathParams,
  parameterKind,
  queryFor,
  queryParams,
  type Operation,
  type Schema,
  type TenantIds,
} from './support.ts'

export const NUL = 'a\u0000b'
export const LONE_SURROGATE = 'a\ud800b'
/** Levels of the deep cases: the 5 000 of the defect (a 25 KB body), far past the limit. */
export const DEEP_LEVELS = 5_000

/** What a case expects: the refusal's status and code, and for a 400 the field it names. */
export interface Expected {
  status: number
  code: string
  in?: string
  pointer?: string
  pointerPrefix?: string
  rule?: RegExp
  /** The field may be named by any of the errors, not only the first (a value the schema itself refuses). */
  anyError?: boolean
}

export interface InputCase {
  name: string
  request: { method: 'GET'; url: string; payload?: string; headers?: Record<string, string> }
  expected: Expected
}

/** A string field or a free-form value (an object or value without declared properties) of a body schema. */
interface BodyField {
  segments: string[]
  freeForm: boolean
}

export const pointerOf = (segments: string[]) => segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

/** Every string field and free-form value of a body schema, one each per pointer (array items as item 0). */
export function bodyFields(schema: Schema, segments: string[] = []): BodyField[] {
  const found = new Map<string, BodyField>()
  const walk = (s: Schema, at: string[]): void => {
    const add = (freeForm: boolean) => {
      if (!found.has(pointerOf(at))) found.set(pointerOf(at), { segments: at, freeForm })
    }
    if (s.anyOf) {
      for (const branch of s.anyOf) walk(branch, at)
      return
    }
    switch (s.type) {
      case 'string':
        return add(false)
      case 'array':
        if (s.prefixItems) return s.prefixItems.forEach((item, i) => walk(item, [...at, String(i)]))
        return s.items ? walk(s.items, [...at, '0']) : add(true)
      case 'object':
        if (!s.properties) return add(true)
        for (const [key, value] of Object.entries(s.properties)) walk(value, [...at, key])
        return
      case undefined:
        if (!s.enum && s.const === undefined) add(true) // Type.Unknown
    }
  }
  walk(schema, segments)
  return [...found.values()]
}

/** A copy of `root` with `value` at `segments`, creating the containers on the way (an array for an index). */
export function withValue(root: unknown, segments: string[], value: unknown): unknown {
  if (segments.length === 0) return value
  const [head, ...rest] = segments as [string, ...string[]]
  const isContainer = root !== null && typeof root === 'object'
  const copy = (isContainer ? structuredClone(root) : /^\d+$/.test(head) ? [] : {}) as Record<string, unknown>
  copy[head] = withValue(copy[head], rest, value)
  return copy
}

/** `depth` nested objects as JSON text (built as text: JSON.stringify itself overflows long before 5 000 levels). */
export const deepJson = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`

const PLACEHOLDER = '__deep_value__'

const jsonRequest = (op: Operation, url: string, payload: string) => ({
  method: op.method as 'GET',
  url,
  payload,
  headers: { 'content-type': 'application/json' },
})

/** The URL of an operation on the seeded tenant's own resources, with its required query parameters. */
export function urlFor(op: Operation, ids: TenantIds, now: number, pathOverride: Record<string, string> = {}, query: Record<string, string> = {}): string {
  const path = Object.fromEntries(pathParams(op).map((p) => [p.name, ids[parameterKind(op.path, p.name) ?? 'site']]))
  return fillPath(op.path, { ...path, ...pathOverride }) + queryFor(op, now, query, ids)
}

const fieldRefusal = (where: string, pointer: string, rule: RegExp): Expected => ({ status: 400, code: 'ValidationFailed', in: where, pointer, rule })

/** Methods whose body Fastify reads. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The content types an operation reads a body as: its request body's, else JSON (an optional body, or none). */
export function bodyTypesOf(op: Operation): readonly string[] {
  return Object.keys(op.spec.requestBody?.content ?? { 'application/json': {} })
}

/** A request without a body to an operation that reads only a non-JSON body: the missing body is refused first. */
const refusedWithoutBody = (op: Operation, expected: Expected): Expected =>
  BODY_METHODS.has(op.method) && !bodyTypesOf(op).includes('application/json') ? { status: 415, code: 'UnsupportedMediaType' } : expected

/** Defect 10: NUL in each path parameter, query parameter, body string and property name; a lone surrogate once per place. */
export function textCases(op: Operation, ids: TenantIds, now: number): InputCase[] {
  const cases: InputCase[] = []
  for (const p of pathParams(op)) {
    cases.push({
      name: `NUL in path /${p.name}`,
      request: { method: op.method as 'GET', url: urlFor(op, ids, now, { [p.name]: NUL }) },
      expected: refusedWithoutBody(op, fieldRefusal('params', `/${p.name}`, /NUL/)),
    })
  }
  // Only NUL: a lone surrogate has no UTF-8 form, and the query parser keeps bytes that do not decode as written (%ED%A0%80).
  for (const p of queryParams(op)) {
    const url = urlFor(op, ids, now, {}, { [p.name]: NUL })
    cases.push({
      name: `NUL in query ${p.name}`,
      request: { method: op.method as 'GET', url },
      expected: refusedWithoutBody(op, fieldRefusal('query', `/${p.name}`, /NUL/)),
    })
  }
  const schema = jsonBodySchema(op)
  if (!schema) return cases
  const url = urlFor(op, ids, now)
  const example = exampleOf(schema, now)
  const strings = bodyFields(schema)
  for (const field of strings) {
    const value = field.freeForm ? { note: NUL } : NUL
    const pointer = pointerOf(field.segments) + (field.freeForm ? '/note' : '')
    cases.push({
      name: `NUL in body ${pointer}`,
      request: jsonRequest(op, url, JSON.stringify(withValue(example, field.segments, value))),
      expected: fieldRefusal('body', pointer, /NUL/),
    })
  }
  const first = strings.find((f) => !f.freeForm)
  if (first) {
    const pointer = pointerOf(first.segments)
    cases.push({
      name: `lone surrogate in body ${pointer}`,
      request: jsonRequest(op, url, JSON.stringify(withValue(example, first.segments, LONE_SURROGATE))),
      expected: fieldRefusal('body', pointer, /surrogate/),
    })
  }
  // The rule named may be the schema's (an unknown property) or this one: the name is refused either way.
  const segments = [...(Array.isArray(example) ? ['0'] : []), 'x\u0000']
  cases.push({
    name: 'NUL in a property name',
    request: jsonRequest(op, url, JSON.stringify(withValue(example, segments, 1))),
    expected: { status: 400, code: 'ValidationFailed', in: 'body', pointer: pointerOf(segments) },
  })
  return cases
}

/** Defect 9: DEEP_LEVELS of nesting in each free-form body field, and a whole body of nested arrays. */
export function depthCases(op: Operation, ids: TenantIds, now: number): InputCase[] {
  const schema = jsonBodySchema(op)
  if (!schema) return []
  const url = urlFor(op, ids, now)
  const example = exampleOf(schema, now)
  const cases: InputCase[] = bodyFields(schema)
    .filter((f) => f.freeForm)
    .map((field) => ({
      name: `${DEEP_LEVELS} levels in ${pointerOf(field.segments)}`,
      request: jsonRequest(op, url, JSON.stringify(withValue(example, field.segments, PLACEHOLDER)).replace(`"${PLACEHOLDER}"`, deepJson(DEEP_LEVELS))),
      expected: { status: 400, code: 'ValidationFailed', in: 'body', pointerPrefix: pointerOf(field.segments), rule: /nest deeper than 64 levels/ },
    }))
  const wholeBody = `${'['.repeat(DEEP_LEVELS * 10)}${']'.repeat(DEEP_LEVELS * 10)}`
  cases.push({
    name: `a body of ${DEEP_LEVELS * 10} nested arrays`,
    request: jsonRequest(op, url, wholeBody),
    expected: { status: 400, code: 'ValidationFailed', in: 'body' },
  })
  return cases
}

/** Defect 11: a body of a content type the operation does not read (or none) answers 415 listing those it does. */
export function mediaTypeCases(op: Operation, ids: TenantIds, now: number): InputCase[] {
  if (!BODY_METHODS.has(op.method)) return []
  const accepted = bodyTypesOf(op)
  const url = urlFor(op, ids, now)
  const bodies: Array<[string, string | undefined, string]> = [
    ['text/plain', 'text/plain', '{"name":"x"}'],
    ['no content type', undefined, '{"name":"x"}'],
    ['a form', 'application/x-www-form-urlencoded', 'name=x'],
    ['multipart', 'multipart/form-data; boundary=b0', '--b0\r\ncontent-disposition: form-data; name="name"\r\n\r\nx\r\n--b0--\r\n'],
    ['JSON', 'application/json', '{"name":"x"}'],
  ]
  return bodies
    .filter(([, type]) => !accepted.some((a) => type?.startsWith(a)))
    .map(([name, type, payload]) => ({
      name: `a body as ${name}`,
      request: { method: op.method as 'GET', url, payload, headers: type ? { 'content-type': type } : ({} as Record<string, string>) },
      expected: { status: 415, code: 'UnsupportedMediaType' },
    }))
}

/** A number past every integer and double: `1e400` (JSON.parse and a query string's coercion make it Infinity). */
export const HUGE = '1e400'
const HUGE_PLACEHOLDER = '__huge_number__'
/** 2^64: an integer past PostgreSQL's bigint (and one a JavaScript number rounds). */
export const HUGE_INTEGER = '18446744073709551616'

/** Every integer and number field of a body schema (array items and tuple positions as item 0, or their position). */
export function numberFields(schema: Schema, segments: string[] = [], only?: 'integer'): string[][] {
  const found = new Map<string, string[]>()
  const walk = (s: Schema, at: string[]): void => {
    if (s.anyOf) return s.anyOf.forEach((branch) => walk(branch, at))
    if (s.type === 'integer' || (s.type === 'number' && only === undefined)) {
      if (!found.has(pointerOf(at))) found.set(pointerOf(at), at)
    } else if (s.type === 'array' && s.prefixItems) s.prefixItems.forEach((item, i) => walk(item, [...at, String(i)]))
    else if (s.type === 'array' && s.items) walk(s.items, [...at, '0'])
    else if (s.type === 'object' && s.properties) for (const [key, value] of Object.entries(s.properties)) walk(value, [...at, key])
  }
  walk(schema, segments)
  return [...found.values()]
}

/**
 * The example body (or a copy of `base`) with every container on the way to `segments` filled with its own example (an
 * array's first item, an optional object), so that the value put there is the only thing wrong with the body.
 */
export function exampleAlong(schema: Schema, segments: string[], now: number, base?: unknown): unknown {
  const root = base === undefined ? exampleOf(schema, now) : structuredClone(base)
  let s: Schema | undefined = schema
  let holder = root as Record<string, unknown>
  for (const segment of segments.slice(0, -1)) {
    const branch: Schema | undefined = s?.anyOf ? s.anyOf.find((b) => b.type === 'array' || b.type === 'object') : s
    const next: Schema | undefined = branch?.prefixItems ? branch.prefixItems[Number(segment)] : (branch?.items ?? branch?.properties?.[segment])
    if (holder[segment] === undefined || holder[segment] === null) holder[segment] = exampleOf(next, now)
    if (holder[segment] === null || typeof holder[segment] !== 'object') return root
    holder = holder[segment] as Record<string, unknown>
    s = next
  }
  return root
}

const isInteger = (p: { schema: Schema }) => p.schema.type === 'integer' || (p.schema.anyOf ?? []).some((b) => b.type === 'integer')

/**
 * Huge numbers: `1e400` in each integer path and query parameter and in each number of the body. Each is a 400
 * naming the field (a cursor of the fleet link's pull coerced it to Infinity and answered 500, and 2^64 overflowed
 * PostgreSQL's bigint; a body's Infinity passed as an integer).
 */
export function hugeNumberCases(op: Operation, ids: TenantIds, now: number): InputCase[] {
  const schema = jsonBodySchema(op)
  const example = schema ? JSON.stringify(exampleOf(schema, now)) : undefined
  // The example body with it: a POST without its body would be refused for the body first.
  const request = (url: string) => (example === undefined ? { method: op.method as 'GET', url } : jsonRequest(op, url, example))
  const rule = /must be (integer|number|a finite number|<=|one of)/
  const cases: InputCase[] = []
  for (const p of pathParams(op).filter(isInteger))
    cases.push({
      name: `${HUGE} in path /${p.name}`,
      request: request(urlFor(op, ids, now, { [p.name]: HUGE })),
      expected: refusedWithoutBody(op, { status: 400, code: 'ValidationFailed', in: 'params', pointer: `/${p.name}`, rule, anyError: true }),
    })
  for (const p of queryParams(op).filter(isInteger))
    cases.push({
      name: `${HUGE} in query ${p.name}`,
      request: request(urlFor(op, ids, now, {}, { [p.name]: HUGE })),
      expected: refusedWithoutBody(op, { status: 400, code: 'ValidationFailed', in: 'query', pointer: `/${p.name}`, rule, anyError: true }),
    })
  if (!schema) return cases
  const url = urlFor(op, ids, now)
  // 2^64 in each integer of the link's bodies: positions, transaction ids, times and counters a JavaScript number holds exactly.
  if (op.path.startsWith('/api/link/'))
    for (const segments of numberFields(schema, [], 'integer')) {
      const body = JSON.stringify(withValue(exampleAlong(schema, segments, now), segments, HUGE_PLACEHOLDER)).replace(`"${HUGE_PLACEHOLDER}"`, HUGE_INTEGER)
      cases.push({
        name: `${HUGE_INTEGER} in body ${pointerOf(segments)}`,
        request: jsonRequest(op, url, body),
        expected: { status: 400, code: 'ValidationFailed', in: 'body', pointer: pointerOf(segments), rule: /must be <=/, anyError: true },
      })
    }
  for (const segments of numberFields(schema)) {
    const body = JSON.stringify(withValue(exampleAlong(schema, segments, now), segments, HUGE_PLACEHOLDER)).replace(`"${HUGE_PLACEHOLDER}"`, HUGE)
    cases.push({
      name: `${HUGE} in body ${pointerOf(segments)}`,
      request: jsonRequest(op, url, body),
      expected: { status: 400, code: 'ValidationFailed', in: 'body', pointer: pointerOf(segments), rule, anyError: true },
    })
  }
  return cases
}
