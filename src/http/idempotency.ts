import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../clock.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import { withOrgScope } from '../db/tenant-scope.ts'
import { invalidField } from '../errors/domain-error.ts'
import {
  completeIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  insertIdempotencyClaim,
  releaseIdempotencyClaim,
  retakeIdempotencyClaim,
  type IdempotencyRow,
} from './idempotency-store.ts'
import { IdempotencyAnswerUnreadable, IdempotencyKeyInProgress, IdempotencyKeyReused } from './errors.ts'
import { problemResponses } from './problem.ts'

/**
 * `Idempotency-Key` on the POSTs that create something (modelled on Stripe's): a route opts in with
 * `config.idempotent`. A function there refuses the header for bodies whose answer cannot be replayed (a stream).
 */
export type IdempotentOption = true | { refuse: (body: unknown) => string | undefined }

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotent?: IdempotentOption
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'idempotent-replayed'
/** Keys expire 24 hours after their first use (Stripe's window). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/** A claim whose executor has been silent this long belongs to a process that died; another request may take it. */
export const IDEMPOTENCY_STALE_MS = 10 * 60_000
/** Response headers kept with the answer and replayed (nosniff too: a replayed problem goes out as the first did, http/problem.ts). */
const STORED_HEADERS = ['content-type', 'x-content-type-options', 'location', 'cache-control']
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/
const POINTER = `/${IDEMPOTENCY_HEADER}`

const HEADER_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7E]+$',
  description:
    'Optional. 1 to 255 printable ASCII characters chosen by the client (a UUID is a good choice). ' +
    'The first request with a key executes; a retry with the same key, method, ' +
    'path and body within 24 hours gets the stored answer again, with `Idempotent-Replayed: true`, and changes nothing. ' +
    'Keys are scoped to the organisation, and an answer is replayed only to the credential that made the request (the same API key, ' +
    'signed-in account, site user or site server); another credential sending the same key answers 422 `IdempotencyKeyReused`. Stored: 2xx and 4xx answers except 409 and 429; a 5xx, 409 or 429 is not stored, ' +
    'so a retry executes anew. The same key with another body or path: 422 `IdempotencyKeyReused`. ' +
    'A retry while the first is still executing waits for its answer (409 `IdempotencyKeyInProgress` with `Retry-After` if ' +
    'it takes longer than the configured wait).',
}

/** Stripe's rule: only answers of a request that began executing are stored, and never a conflict or a throttle. */
export function isStorableStatus(status: number): boolean {
  return (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 409 && status !== 429)
}

/** SHA-256 of the body as canonical JSON (object keys sorted), so key order does not make two requests differ. */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256')
    .update(body === undefined ? '' : canonicalJson(body))
    .digest('hex')
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record)
      .sort()
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

interface Claim {
  orgId: string
  key: string
}

/** A route option's hooks (none, one or a list) as a list. */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
}

export interface IdempotencyDeps {
  handle: DatabaseHandle
  clock: Clock
  keySecret: Buffer
  /** How long a request waits for another one with its key to finish (then 409). */
  waitMs: number
}

/** Adds the header to opted-in routes (validation and OpenAPI) and the claim / replay / store hooks. Call before routes. */
export function installIdempotency(app: FastifyInstance, deps: IdempotencyDeps): void {
  const { handle, clock } = deps
  const sealKey = Buffer.from(hkdfSync('sha256', deps.keySecret, Buffer.alloc(0), 'sitegrid/idempotency/v1', 32))
  const claims = new WeakMap<FastifyRequest, Claim>()

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return
    const schema = (route.schema ??= {}) as Record<string, unknown>
    const headers = schema.headers as { properties?: Record<string, unknown> } | undefined
    schema.headers = { type: 'object', ...headers, properties: { ...headers?.properties, [IDEMPOTENCY_HEADER]: HEADER_SCHEMA } }
    const response = (schema.response ??= {}) as Record<number, unknown>
    for (const [status, entry] of Object.entries(problemResponses(409, 422))) response[Number(status)] ??= entry
    if (typeof schema.description === 'string') {
      schema.description += ' Accepts `Idempotency-Key` (retries replay the first answer; see the header).'
    }
    // Route-level hooks: the other routes pay nothing for idempotency on their request path. Callback style, and
    // synchronous for a request without the header (issue 29, session 21): no promise, no microtask on most requests.
    const option = route.config.idempotent
    route.preHandler = [
      ...hooksOf(route.preHandler),
      (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
        const raw = request.headers[IDEMPOTENCY_HEADER]
        if (raw === undefined) return done()
        claimOrReplay(request, reply, option, raw).then(() => done(), done)
      },
    ]
    route.onSend = [
      ...hooksOf(route.onSend),
      (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
        const claim = claims.get(request)
        if (claim === undefined) return done(null, payload)
        claims.delete(request)
        void storeAnswer(request, reply, claim, payload).then(() => done(null, payload))
      },
    ]
    route.onResponse = [
      ...hooksOf(route.onResponse),
      (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
        const claim = claims.get(request)
        if (claim === undefined) return done()
        claims.delete(request)
        void releaseUnsent(request, claim).then(done)
      },
    ]
  })

  async function claimOrReplay(request: FastifyRequest, reply: FastifyReply, option: IdempotentOption, raw: string | string[]): Promise<void> {
    const key = Array.isArray(raw) ? raw.join(', ') : raw
    if (!KEY_PATTERN.test(key)) throw invalidField(POINTER, 'must be 1 to 255 printable ASCII characters', 'headers')
    if (option !== true) {
      const refusal = option.refuse(request.body)
      if (refusal !== undefined) throw invalidField(POINTER, refusal, 'headers')
    }
    const orgId = request.org.id
    const { kind, subject } = request.principal
    const wanted = { key, requestMethod: request.method, requestPath: request.url, fingerprint: bodyFingerprint(request.body), caller: `${kind}:${subject}` }
    // Explicitly in the organisation's scope (row-level security), whatever async context a hook runs in.
    const row = await withOrgScope(orgId, () => acquire(orgId, wanted))
    if (row !== undefined) return replay(reply, row, orgId)
    claims.set(request, { orgId, key })
    await withOrgScope(orgId, () => deleteExpiredIdempotencyKeys(handle.db, orgId, clock.now() - IDEMPOTENCY_TTL_MS))
  }

  /** Never rejects: a failure is logged and the answer still goes out. */
  async function storeAnswer(request: FastifyRequest, reply: FastifyReply, claim: Claim, payload: unknown): Promise<void> {
    const status = reply.statusCode
    try {
      if (isStorableStatus(status) && (typeof payload === 'string' || Buffer.isBuffer(payload) || payload === null || payload === undefined)) {
        const text = payload === null || payload === undefined ? '' : String(payload)
        const headers: Record<string, string> = {}
        for (const name of STORED_HEADERS) {
          const value = reply.getHeader(name)
          if (value !== undefined) headers[name] = String(value)
        }
        await withOrgScope(claim.orgId, () =>
          completeIdempotencyKey(handle.db, claim.orgId, claim.key, {
            status,
            headers: JSON.stringify(headers),
            body: seal(text, `${claim.orgId}:${claim.key}`),
            now: clock.now(),
          }),
        )
      } else {
        await withOrgScope(claim.orgId, () => releaseIdempotencyClaim(handle.db, claim.orgId, claim.key))
      }
    } catch (err) {
      // The answer still goes out; the claim goes stale and is retaken after IDEMPOTENCY_STALE_MS.
      request.log.error({ err }, 'idempotency: could not store the answer')
    }
  }

  /** An answer that never reached onSend (the connection went away): frees the key for a retry. Never rejects. */
  async function releaseUnsent(request: FastifyRequest, claim: Claim): Promise<void> {
    await withOrgScope(claim.orgId, () => releaseIdempotencyClaim(handle.db, claim.orgId, claim.key)).catch((err: unknown) =>
      request.log.error({ err }, 'idempotency: could not release a claim'),
    )
  }

  /** Claims the key (undefined) or returns the finished row to replay; waits while another request executes it. */
  async function acquire(
    orgId: string,
    wanted: { key: string; requestMethod: string; requestPath: string; fingerprint: string; caller: string },
  ): Promise<IdempotencyRow | undefined> {
    let waited = 0
    let delay = 5
    for (let attempt = 0; attempt < 10_000; attempt++) {
      const now = clock.now()
      const row = await findIdempotencyKey(handle.db, orgId, wanted.key)
      if (row !== undefined && Number(row.created_at) <= now - IDEMPOTENCY_TTL_MS) {
        await deleteExpiredIdempotencyKeys(handle.db, orgId, now - IDEMPOTENCY_TTL_MS)
        continue
      }
      if (row === undefined) {
        if (await insertIdempotencyClaim(handle.db, orgId, { ...wanted, now })) return undefined
        continue // another request won the claim: read its row
      }
      if (row.request_method !== wanted.requestMethod || row.request_path !== wanted.requestPath || row.fingerprint !== wanted.fingerprint) {
        throw new IdempotencyKeyReused()
      }
      // The answer is the caller's own (the audit trail names it): the same key from another credential is a reuse.
      if (row.caller !== null && row.caller !== wanted.caller) throw new IdempotencyKeyReused()
      if (row.state === 'done') return row
      if (Number(row.locked_at) <= now - IDEMPOTENCY_STALE_MS && (await retakeIdempotencyClaim(handle.db, orgId, wanted.key, Number(row.locked_at), now)))
        return undefined
      if (waited >= deps.waitMs) break
      const pause = Math.min(delay, deps.waitMs - waited)
      await new Promise((resolve) => setTimeout(resolve, pause))
      waited += pause
      delay = Math.min(Math.ceil(delay * 1.5), 100)
    }
    throw new IdempotencyKeyInProgress()
  }

  function replay(reply: FastifyReply, row: IdempotencyRow, orgId: string): FastifyReply {
    const body = row.body === null ? undefined : unseal(row.body, `${orgId}:${row.key}`)
    // Sealed under another verifier secret (rotated since): the answer cannot be shown, and must not run again.
    if (body === undefined) throw new IdempotencyAnswerUnreadable()
    const headers = JSON.parse(row.headers ?? '{}') as Record<string, string>
    return reply.code(Number(row.status)).headers(headers).header(REPLAYED_HEADER, 'true').send(body)
  }

  function seal(plaintext: string, context: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', sealKey, iv).setAAD(Buffer.from(context))
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return [iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.')
  }

  function unseal(value: string, context: string): string | undefined {
    const [iv, tag, sealed] = value.split('.')
    if (!iv || !tag || sealed === undefined) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', sealKey, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(context))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }
}
