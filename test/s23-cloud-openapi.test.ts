// Session 23 (part HN): a new integrator who trusts /openapi.json. Every operation of the document the server serves,
// called over HTTP on a seeded real server with a valid request and an invalid one; each answer must be one the
// document describes: a declared status, a declared content type, a body its schema accepts (no field the schema does
// not name, none it requires missing) and, for a problem, a code the response lists and a `type` page that exists.
import assert from 'node:assert/strict'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { harness, sleep, testDialects } from './harness.ts'
import {
  callerFor,
  exampleOf,
  fillPath,
  inlinedDocument,
  jsonBodySchema,
  label,
  NO_RATE_LIMIT,
  operations,
  parameterKind,
  pathParams,
  queryFor,
  queryParams,
  seedTenant,
  type OpenApiDocument,
  type Operation,
  type Schema,
} from './hardening/support.ts'
import { responseValidator } from './support/response-validator.ts'

interface Answer {
  status: number
  contentType: string
  body: string
}

function call(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // Node's client frames a DELETE's body with neither a length nor chunks unless told its length.
    const framed = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }
    const req = request({ host: '127.0.0.1', port, method, path, headers: framed }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (d: Buffer) => chunks.push(d))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? '')
            .split(';')[0]!
            .trim(),
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * A response schema as an integrator's strict client reads it: an object that names its properties and says nothing
 * of others has no others (a field the document does not name is a finding). One that says (`additionalProperties`,
 * like the problem's extensions) keeps its word.
 */
function closed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closed)
  if (value === null || typeof value !== 'object') return value
  const copy = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, closed(s)])) : closed(v),
    ]),
  )
  if ('properties' in copy && !('additionalProperties' in copy) && !('unevaluatedProperties' in copy)) copy.unevaluatedProperties = false
  return copy
}

/** The codes a problem response lists in its description (`Problem (\`NotFound\`, …)`, http/problem.ts). */
const listedCodes = (description: unknown) => [...String(description ?? '').matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!)

for (const dialect of testDialects()) {
  // Both modes: the cloud's own operations (the fleet link, the site servers) and the site server's (site users, PIN sign-in).
  for (const mode of ['cloud', 'site'] as const)
    describe(`${dialect}, ${mode} mode: every operation of the served OpenAPI document, called over HTTP on a seeded server`, () => {
      it('a valid request, the same without a credential and an invalid one to each: every answer has a declared status, a declared content type, a body its schema accepts (closed objects) and, as a problem, a listed code whose type page exists', async (t) => {
        const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: mode, SITEGRID_PIN_SCRYPT_LOG2N: '10' })
        const tenant = await seedTenant(h, 'OA')
        await h.app.listen({ port: 0, host: '127.0.0.1' })
        const port = (h.app.server.address() as AddressInfo).port
        const host = `${tenant.org.slug}.localhost`
        const served = await call(port, 'GET', '/openapi.json', { host })
        assert.equal(served.status, 200)
        const doc = inlinedDocument(JSON.parse(served.body) as OpenApiDocument)
        // Deletions and a site server's revocation last, the site itself at the very end (test/hardening/fuzz.test.ts).
        const last = (op: Operation) => op.method === 'DELETE' || op.path.endsWith('/revoke')
        const rank = (op: Operation) => (!last(op) ? 0 : op.path === '/api/sites/{code}' ? 2 : 1)
        const ops = operations(doc).sort((a, b) => rank(a) - rank(b))
        await sleep(100)

        const validators = new Map<object, (value: unknown) => string | null>()
        const typePages = new Map<string, number>()
        const findings: string[] = []
        const statuses: Record<string, number> = {}
        let succeeded = 0
        let invalidSent = 0

        async function check(op: Operation, what: string, answer: Answer): Promise<void> {
          const where = `${label(op)} (${what}) ${answer.status}`
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
          const declared = op.spec.responses[String(answer.status)] as { description?: string; content?: Record<string, { schema?: Schema }> } | undefined
          if (!declared) return void findings.push(`${where}: status not declared (${Object.keys(op.spec.responses).join(', ')}): ${answer.body.slice(0, 200)}`)
          const content = declared.content ?? {}
          if (answer.body.length === 0) {
            if (Object.keys(content).length > 0 && answer.status !== 204) findings.push(`${where}: empty body, declared ${Object.keys(content).join(', ')}`)
            return
          }
          const media = content[answer.contentType]
          if (!media)
            return void findings.push(`${where}: answered ${answer.contentType || 'no content type'}, declared ${Object.keys(content).join(', ') || 'no body'}`)
          if (!/json/.test(answer.contentType) || !media.schema) return
          let validate = validators.get(media.schema)
          if (!validate) {
            validate = responseValidator(closed(media.schema) as object)
            validators.set(media.schema, validate)
          }
          const body = JSON.parse(answer.body) as Record<string, unknown>
          const error = validate(body)
          if (error) findings.push(`${where}: body breaks its schema: ${error.slice(0, 400)}`)
          if (answer.contentType !== 'application/problem+json') return
          const code = String(body.code)
          if (body.status !== answer.status) findings.push(`${where}: problem status ${String(body.status)}`)
          const listed = listedCodes(declared.description)
          if (listed.length > 0 && !listed.includes(code)) findings.push(`${where}: problem code ${code} not listed (${listed.join(', ')})`)
          if (body.type !== `/problems/${code}`) findings.push(`${where}: problem type ${String(body.type)}`)
          if (!typePages.has(code)) typePages.set(code, (await call(port, 'GET', `/problems/${code}`, { host })).status)
          if (typePages.get(code) !== 200) findings.push(`${where}: its type page /problems/${code} answers ${typePages.get(code)}`)
        }

        // A connection dropped without an answer is a finding too, named by its operation.
        const send = (op: Operation, what: string, ...args: Parameters<typeof call>) =>
          call(...args).catch((err: Error): Answer => {
            findings.push(`${label(op)} (${what}): no answer (${err.message})`)
            return { status: 0, contentType: '', body: '' }
          })

        for (const op of ops) {
          const caller = callerFor(h, op, tenant)
          const headers: Record<string, string> = { host, ...caller.headers }
          if (caller.credential.apiKey) headers['x-api-key'] = caller.credential.apiKey
          if (caller.credential.bearer) headers.authorization = `Bearer ${caller.credential.bearer}`
          const path = fillPath(
            op.path,
            Object.fromEntries(
              pathParams(op).map((p) => {
                const kind = parameterKind(op.path, p.name)
                return [p.name, kind ? tenant.ids[kind] : String(exampleOf(p.schema, h.clock.now()))]
              }),
            ),
          )
          // A long poll answers at once when told not to wait.
          const extra: Record<string, string> = queryParams(op).some((p) => p.name === 'waitMs') ? { waitMs: '0' } : {}
          const query = queryFor(op, h.clock.now(), extra, tenant.ids)
          const schema = jsonBodySchema(op)
          const jsonHeaders = schema ? { ...headers, 'content-type': 'application/json' } : headers
          const valid = await send(
            op,
            'valid',
            port,
            op.method,
            path + query,
            jsonHeaders,
            schema ? JSON.stringify(exampleOf(schema, h.clock.now())) : undefined,
          )
          if (valid.status === 0) continue
          if (valid.status < 300) succeeded++
          await check(op, 'valid', valid)

          // Without a credential: a secured operation is the uniform 401; one documented with no security answers as it did
          // with the credential (a sign-in's own 401 is about the PIN or code in its body, not a header).
          const { 'x-api-key': _key, authorization: _bearer, ...anonymous } = jsonHeaders
          const bare = await send(
            op,
            'no credential',
            port,
            op.method,
            path + query,
            anonymous,
            schema ? JSON.stringify(exampleOf(schema, h.clock.now())) : undefined,
          )
          const isPublic = Array.isArray(op.spec.security) && op.spec.security.length === 0
          if (bare.status !== 0) {
            if (isPublic ? bare.status !== valid.status : bare.status !== 401)
              findings.push(
                `${label(op)} (no credential): ${bare.status}, documented ${isPublic ? `public (with the credential: ${valid.status})` : 'secured'}`,
              )
            await check(op, 'no credential', bare)
          }

          // The invalid one: a body of the wrong JSON type, else an integer query parameter that is no number.
          const integerQuery = queryParams(op).find((p) => p.schema.type === 'integer')
          let invalid: Answer | undefined
          if (schema) invalid = await send(op, 'invalid', port, op.method, path + query, jsonHeaders, schema.type === 'string' ? '42' : '"x"')
          else if (integerQuery) {
            const q = new URLSearchParams(query.slice(1))
            q.set(integerQuery.name, 'many')
            invalid = await send(op, 'invalid', port, op.method, `${path}?${q}`, headers)
          }
          if (invalid === undefined || invalid.status === 0) continue
          invalidSent++
          if (invalid.status < 400 || invalid.status >= 500)
            findings.push(`${label(op)} (invalid): answered ${invalid.status}, not a refusal: ${invalid.body.slice(0, 200)}`)
          await check(op, 'invalid', invalid)
        }
        console.log(
          `# openapi walk (${dialect}, ${mode}): ${ops.length} operations, ${succeeded} valid requests answered 2xx, ${invalidSent} invalid requests sent; statuses ${JSON.stringify(statuses)}; ${findings.length} findings`,
        )
        for (const finding of findings) console.log(`# openapi finding: ${finding.slice(0, 600)}`)
        assert.ok(ops.length >= 80, `${ops.length} operations`)
        assert.ok(invalidSent >= 40, `${invalidSent} invalid requests`)
        assert.deepEqual(findings, [])
      })
    })
}
