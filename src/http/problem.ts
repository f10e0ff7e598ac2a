import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { Type } from 'typebox'
import { catalog, isErrorCode, type ErrorCode } from '../errors/catalog.ts'
import { isForeignKeyViolation, isUniqueViolation } from '../db/constraint-errors.ts'
import { DomainError, NotFound, pointerToken, type FieldProblem } from '../errors/domain-error.ts'
import { UnsupportedMediaType } from './errors.ts'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** RFC 9457 problem details with our stable `code` extension. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'A page documenting this code: GET it for the explanation.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request id; quote it when asking the operator.' }),
    code: Type.String({ description: 'Stable machine-readable code, e.g. `ValidationFailed`, `NotFound`, `ReservedRole`.' }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          in: Type.String({ description: 'body, query, params, headers or part' }),
          pointer: Type.String({ description: 'RFC 6901 JSON pointer to the field' }),
          message: Type.String({ description: 'the rule the field breaks' }),
        }),
      ),
    ),
  },
  { $id: 'Problem', additionalProperties: true },
)

/** Response schema entries for the problem statuses a route can answer, for the OpenAPI document. */
export function problemResponses(...statuses: number[]) {
  const out: Record<number, unknown> = {}
  for (const status of statuses) {
    out[status] = { description: describeStatus(status), content: { [PROBLEM_CONTENT_TYPE]: { schema: Type.Ref('Problem') } } }
  }
  return out
}

function describeStatus(status: number): string {
  const codes = Object.entries(catalog)
    .filter(([, v]) => v.status === status)
    .map(([k]) => `\`${k}\``)
  return `Problem (${codes.join(', ') || 'see code'})`
}

export function problemTypeUri(code: ErrorCode): string {
  return `/problems/${code}`
}

/** The RFC 9457 document of an answer (`ProblemSchema`): status and title from the catalog, then the extensions. */
export interface Problem {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly detail: string
  readonly instance: string
  readonly code: ErrorCode
  readonly errors?: FieldProblem[]
  readonly [extension: string]: unknown
}

type ProblemExtras = { errors?: FieldProblem[] | undefined; extensions?: Record<string, unknown> | undefined }

export function problemOf(code: ErrorCode, detail: string, instance: string, extra?: ProblemExtras): Problem {
  const { status, title } = catalog[code]
  const body: Record<string, unknown> = { type: problemTypeUri(code), title, status, detail, instance, code }
  if (extra?.errors) body.errors = extra.errors
  if (extra?.extensions) Object.assign(body, extra.extensions)
  return body as unknown as Problem
}

/** Sends a problem document with its status (and the 401's challenge). */
export function replyProblem(reply: FastifyReply, problem: Problem) {
  return sendProblemJson(reply, problem.code, problem.status, JSON.stringify(problem))
}

function sendProblemJson(reply: FastifyReply, code: ErrorCode, status: number, json: string) {
  if (code === 'Unauthorized') reply.header('www-authenticate', 'Bearer, ApiKey')
  // A problem may echo what the client sent (a path, a field's value): nosniff keeps a browser from reading it as HTML.
  return reply.code(status).header('content-type', PROBLEM_CONTENT_TYPE).header('x-content-type-options', 'nosniff').send(json)
}

/**
 * `sendProblem` for a code and detail that never change (the uniform 401): the document's JSON is built once, cut
 * around its `instance`, and each answer joins the request id in (issue 29, sixth pass: serialising the document was
 * ~2.5 % of a refused request's CPU). Byte for byte what `sendProblem` sends.
 */
export function constantProblem(code: ErrorCode, detail: string): (reply: FastifyReply, request: FastifyRequest) => FastifyReply {
  const marker = '\u0000instance\u0000'
  const [head, tail] = JSON.stringify(problemOf(code, detail, marker)).split(JSON.stringify(marker)) as [string, string]
  const { status } = catalog[code]
  return (reply, request) => sendProblemJson(reply, code, status, head + JSON.stringify(request.id) + tail)
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, code: ErrorCode, detail: string, extra?: ProblemExtras) {
  return replyProblem(reply, problemOf(code, detail, request.id, extra))
}

interface AjvError {
  instancePath: string
  message?: string
  keyword: string
  params: Record<string, unknown>
  /** The schema holding the failed keyword (Ajv's `verbose`, http/validation.ts): it names the codes of an enumeration. */
  parentSchema?: Record<string, unknown>
}

/**
 * One Ajv error as the field it names and the rule it broke: a missing or unknown property is named by its own
 * pointer (`/name` "is required", not "must have required property 'name'"); an enumeration gives its values.
 */
/** How a refused `date-time` is told, wherever it is checked (the schemas' format, a module reading an instant). */
export const DATE_TIME_RULE = 'must be a date-time as RFC 3339 with Z or an offset ±hh:mm (2024-05-01T10:00:00Z), its seconds 00 to 59'

function describe(e: AjvError): { pointer: string; message: string; allowed?: string[] } {
  const child = e.params.missingProperty ?? e.params.additionalProperty
  // A property's name as a pointer's token, as Ajv's instancePath has them.
  const pointer = child === undefined ? e.instancePath : `${e.instancePath}/${pointerToken(String(child))}`
  if (e.keyword === 'required') return { pointer, message: 'is required' }
  if (e.keyword === 'additionalProperties') return { pointer, message: 'is not a known property' }
  if (e.keyword === 'format' && e.params.format === 'date-time') return { pointer, message: DATE_TIME_RULE }
  const message = e.message ?? 'is not valid'
  if (e.keyword === 'const') return { pointer, message, allowed: [JSON.stringify(e.params.allowedValue)] }
  if (e.keyword !== 'enum' || !Array.isArray(e.params.allowedValues)) return { pointer, message }
  // A coded integer names each code (`2 (PowerTransformer)`): `x-enum-varnames` is index-aligned with `enum`.
  const names = e.parentSchema?.['x-enum-varnames']
  const allowed = e.params.allowedValues.map((value: unknown, i) => {
    const name = Array.isArray(names) ? names[i] : undefined
    return typeof name === 'string' ? `${JSON.stringify(value)} (${name})` : JSON.stringify(value)
  })
  return { pointer, message, allowed }
}

const oneOf = (allowed: readonly string[]) => `must be one of ${[...new Set(allowed)].join(', ')}`

/**
 * Ajv's errors as one problem per field. A union of values (an `anyOf` of `const`s, a nullable enumeration) fails every
 * branch: the values become one list (`must be one of "owner", "admin", "member"`, null included for a nullable one).
 * A nullable field (anyOf [T, null]) names the rule of T, not "must be null" and "anyOf", also when T's rule is broken
 * below it (`{ "unknown": 1 }` for a nullable object names `/unknown` only).
 */
export function describeAjvErrors(errors: readonly AjvError[]): Array<{ pointer: string; message: string }> {
  const byPointer = new Map<string, { messages: string[]; allowed: string[] }>()
  for (const e of errors) {
    const { pointer, message, allowed } = describe(e)
    const field = byPointer.get(pointer) ?? { messages: [], allowed: [] }
    if (allowed) field.allowed.push(...allowed)
    else if (!field.messages.includes(message)) field.messages.push(message)
    byPointer.set(pointer, field)
  }
  const isBranchNoise = (m: string) => m === 'must be null' || m === 'must match a schema in anyOf'
  // The pointers some error lies below, each once: a body of many nullable items would make a scan of every pointer
  // for each of them quadratic (a 1 MiB body, minutes of CPU).
  const parents = new Set<string>()
  for (const pointer of byPointer.keys()) {
    for (let at = pointer.lastIndexOf('/'); at >= 0; at = at === 0 ? -1 : pointer.lastIndexOf('/', at - 1)) parents.add(pointer.slice(0, at))
  }
  return [...byPointer].flatMap(([pointer, { messages, allowed }]) => {
    const values = allowed.length > 0 && messages.includes('must be null') ? [...allowed, 'null'] : allowed
    const specific = [...(values.length > 0 ? [oneOf(values)] : []), ...messages.filter((m) => !isBranchNoise(m))]
    if (specific.length === 0 && parents.has(pointer)) return []
    return [{ pointer, message: (specific.length ? specific : messages).join('; ') }]
  })
}

function fieldProblems(err: FastifyError & { validation?: AjvError[]; validationContext?: string }): FieldProblem[] {
  const where = (err.validationContext === 'querystring' ? 'query' : (err.validationContext ?? 'body')) as FieldProblem['in']
  return describeAjvErrors(err.validation ?? []).map((problem) => ({ in: where, ...problem }))
}

/** The 415 of every route (see UnsupportedMediaType). */
export function unsupportedMediaType(acceptedTypes: readonly string[]): DomainError<'UnsupportedMediaType'> {
  return new UnsupportedMediaType(acceptedTypes)
}

/** Every body media type some route reads; a route's own are those its (encapsulated) instance has a parser for. */
const BODY_MEDIA_TYPES = [
  'application/json',
  'text/plain',
  'text/csv',
  'application/csv',
  'multipart/form-data',
  'application/gzip',
  'application/octet-stream',
]

/** The media types the request's route reads, from the parsers of the instance it was registered in. */
export function acceptedTypesOf(request: FastifyRequest): string[] {
  return BODY_MEDIA_TYPES.filter((type) => request.server.hasContentTypeParser(type))
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PayloadTooLarge',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MalformedBody',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MalformedBody',
}

/** The methods routes are declared with, in the order an `Allow` header lists them. */
const ROUTE_METHODS: readonly HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/** Methods whose requests Fastify reads a body of (GET and HEAD bodies are ignored). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The longest path parameter the router matches (find-my-way's default, 100, is below the ids' own maxLength). */
export const MAX_PARAM_LENGTH = 1000

/**
 * Fastify's `frameworkErrors`: a path the router cannot read (bad percent-encoding) or a path parameter over
 * MAX_PARAM_LENGTH answers a 400 problem like any other invalid parameter, not Fastify's own JSON (a 414 that
 * echoes the path).
 */
export function frameworkErrorProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? `must NOT have more than ${MAX_PARAM_LENGTH} characters` : 'is not a valid URL component'
  return sendProblem(reply, request, 'ValidationFailed', `A path parameter ${message}.`, { errors: [{ in: 'params', pointer: '', message }] })
}

/** The one place where any error becomes an RFC 9457 answer. No stack, SQL or secret reaches the body. */
export function installProblemHandlers(app: FastifyInstance): void {
  // Every route can answer 400 ValidationFailed (http/input-guard.ts reads the query string of all of them, and a route
  // validates its path, query or body), and one that reads a body 415 for a type it has no parser for: documented on
  // every route, also where its own list of problem statuses forgot them (the fuzzing suites hold answers to the document).
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { response?: Record<string, unknown> } | undefined
    if (!schema?.response) return
    const readsBody = [route.method].flat().some((method) => BODY_METHODS.has(method))
    const statuses = [400, ...(readsBody ? [415] : [])]
    const missing = statuses.filter((status) => schema.response![String(status)] === undefined)
    if (missing.length > 0) schema.response = { ...schema.response, ...problemResponses(...missing) }
  })

  app.setErrorHandler((error, request, reply) => {
    // Every refusal that says when to come back (a busy queue, a limit, a lock) says it in the header too.
    if (error instanceof DomainError && error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
    return replyProblem(reply, toProblem(error, request))
  })

  // A path that exists with other methods answers 405 with `Allow` (RFC 9110 §15.5.6), not 404: the routes' paths are
  // kept in a router of their own, since Fastify's cannot be asked which methods match a concrete path.
  const paths = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH })
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (!paths.hasRoute(method as HTTPMethod, route.url)) paths.on(method as HTTPMethod, route.url, () => {})
  })
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0]!
    const allowed = ROUTE_METHODS.filter((method) => paths.find(method, path) !== null)
    if (allowed.length === 0 || allowed.includes(request.method as HTTPMethod)) return sendProblem(reply, request, 'NotFound', 'No such resource.')
    reply.header('allow', allowed.join(', '))
    return sendProblem(reply, request, 'MethodNotAllowed', `This path takes ${allowed.join(', ')}, not ${request.method}.`)
  })

  // The problem pages the `type` URIs point at (public).
  app.get(
    '/problems/:code',
    {
      config: { policy: 'public' },
      schema: { hide: true, params: Type.Object({ code: Type.String() }) },
    },
    async (request, reply) => {
      const { code } = request.params as { code: string }
      if (!isErrorCode(code)) return sendProblem(reply, request, 'NotFound', 'No such resource.')
      const { status, title, doc } = catalog[code]
      return reply.type('text/plain; charset=utf-8').send(`${code} (${status}): ${title}\n\n${doc}\n`)
    },
  )
}

/** The most fields a refused request's problem lists (its detail says how many more there are). */
export const MAX_FIELD_PROBLEMS = 100

type ThrownError = FastifyError & { validation?: AjvError[]; validationContext?: string }

/**
 * The one place where any thrown error becomes an RFC 9457 document: the error handler answers with it, and the AI
 * stream's `error` event is cut from it. No stack, SQL or secret reaches it. With the request, the document carries
 * its id (`instance`), reads the route's body limit and parsers, and the causes that need the operator are logged.
 */
export function toProblem(thrown: unknown, request?: FastifyRequest): Problem {
  const error = thrown as ThrownError
  const problem = (code: ErrorCode, detail: string, extra?: ProblemExtras) => problemOf(code, detail, request?.id ?? '', extra)
  if (error instanceof DomainError) {
    return problem(error.code, error.message, { errors: error.errors, extensions: error.extensions })
  }
  if (error.validation) {
    // The first MAX_FIELD_PROBLEMS fields, and how many more: a body of a hundred thousand unknown properties would be
    // answered by a list several times its size.
    const all = fieldProblems(error)
    const errors = all.slice(0, MAX_FIELD_PROBLEMS)
    const more = all.length > errors.length ? `; and ${all.length - errors.length} more fields` : ''
    const summary = errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')
    return problem('ValidationFailed', `The ${errors[0]?.in ?? 'request'} is not valid: ${summary}${more}`, { errors })
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // A route with a limit of its own (the link's push: 64 MiB) does not follow the setting: naming it would mislead.
    const limit = request?.routeOptions.bodyLimit
    const own = limit !== undefined && limit !== request?.server.initialConfig.bodyLimit
    return problem('PayloadTooLarge', `The body exceeds the limit of ${limit ?? 'configured'} bytes${own ? ' of this route' : ' (SITEGRID_BODY_LIMIT_BYTES)'}.`)
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const { message, extensions } = unsupportedMediaType(request ? acceptedTypesOf(request) : [])
    return problem('UnsupportedMediaType', message, { extensions })
  }
  const mapped = error.code ? FASTIFY_CODES[error.code] : undefined
  if (mapped) return problem(mapped, catalog[mapped].doc)
  if (error instanceof SyntaxError || (error.statusCode === 400 && error.code?.startsWith('FST_ERR_CTP'))) {
    return problem('MalformedBody', 'The body could not be parsed for its content type.')
  }
  if (error.statusCode === 429) {
    return problem('RateLimited', 'Too many requests for this credential; see Retry-After.')
  }
  if (error.statusCode === 503) return problem('ServiceUnavailable', 'The service is not available right now.')
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    const code: ErrorCode = error.statusCode === 413 ? 'PayloadTooLarge' : error.statusCode === 415 ? 'UnsupportedMediaType' : 'MalformedBody'
    return problem(code, catalog[code].doc)
  }
  // A rule of the database refused a write that the service's own checks had let through: another request changed
  // the rows in between (a concurrent writer, in this process or another of the cell). The record the write refers
  // to went (404, as if it had gone before), a record was added that a delete would orphan, or a unique value was
  // taken (409). A concurrent writer never makes a 5xx.
  if (isForeignKeyViolation(error)) {
    request?.log.info('a write raced a concurrent change (foreign key)')
    return request?.method === 'DELETE'
      ? problem('Conflict', 'The resource is still in use: a record referring to it was added meanwhile.')
      : problem('NotFound', new NotFound().message)
  }
  if (isUniqueViolation(error)) {
    request?.log.info('a write raced a concurrent change (unique)')
    return problem('Conflict', 'A record with the same unique value was written meanwhile.')
  }
  if (error.code === '40P01') {
    // PostgreSQL broke a deadlock by ending this request's transaction (rolled back whole): a concurrent writer took
    // the same rows or locks in another order. Transient: the same request sent again goes through.
    request?.log.warn({ err: error }, 'database deadlock: this request was the one rolled back')
    return problem(
      'ServiceUnavailable',
      'The database ended this request to resolve a deadlock with a concurrent one and rolled its transaction back: send it again.',
    )
  }
  if (error.code === '57014') {
    // PostgreSQL cancelled the statement: SITEGRID_DB_STATEMENT_TIMEOUT_MS, or an operator
    request?.log.error({ err: error }, 'database statement cancelled')
    return problem('ServiceUnavailable', 'The database cancelled the request (statement timeout); retry later.')
  }
  if (isDatabaseUnavailable(error)) {
    request?.log.error({ err: error }, 'database unavailable')
    return problem('ServiceUnavailable', 'The database is not reachable; retry later.')
  }
  request?.log.error({ err: error }, 'unhandled error')
  return problem('InternalError', 'An unexpected error occurred.')
}

function isDatabaseUnavailable(error: { code?: string; message?: string }): boolean {
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P03', '53300', 'SQLITE_BUSY'].includes(error.code ?? '') ||
    /timeout exceeded when trying to connect|Connection terminated|Query read timeout/i.test(error.message ?? '')
  )
}
