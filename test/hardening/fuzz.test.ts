// Issue 14, fuzzing from the OpenAPI document: property-based bodies, queries and path parameters for every operation.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { harness, sleep, testDialects, type Harness } from '../harness.ts'
import { arbitraryFromSchema } from '../support/schema-arbitrary.ts'
import { bodyTypesOf, depthCases, hugeNumberCases, mediaTypeCases, textCases, type Expected } from './input-cases.ts'
import {
  callerFor,
  fillPath,
  harnessForEveryOperation,
  jsonBodySchema,
  label,
  leaksIn,
  NO_RATE_LIMIT,
  openApiDocument,
  operations,
  parameterKind,
  pathParams,
  policyOf,
  queryParams,
  responseChecker,
  secretIssuedBy,
  seedTenant,
  snapshotDiff,
  snapshotOrg,
  snapshotRows,
  type Operation,
  type TenantIds,
} from './support.ts'

/**
 * Runs per operation per database (SITEGRID_FUZZ_RUNS, default 10: with a snapshot of every tenant table after each
 * request, 20 took minutes per database on the loaded shared machine); the seed is printed and SITEGRID_FUZZ_SEED
 * replays it.
 */
const RUNS = Number(process.env.SITEGRID_FUZZ_RUNS ?? 10)
const SEED = Number(process.env.SITEGRID_FUZZ_SEED ?? Date.now() % 2_147_483_647)
/**
 * Cloud mode: runs per operation the site mode fuzzes too (SITEGRID_FUZZ_CLOUD_SHARED_RUNS, default 3): the same
 * handlers, so a few samples check the cloud's policies and forwarding; the cloud's own operations (the fleet link's
 * and the site servers') get RUNS. Ten of each doubled the suite's time.
 */
const CLOUD_SHARED_RUNS = Math.min(RUNS, Number(process.env.SITEGRID_FUZZ_CLOUD_SHARED_RUNS ?? 3))
const cloudOwn = (op: Operation) => op.path.startsWith('/api/link/') || op.path.startsWith('/api/admin/site-servers')

/**
 * Tables a refused request may change by design: a failed site sign-in or PIN change counts towards the lockout
 * (spec: N failures lock the account), which is the point of refusing it.
 */
const CHANGES_BY_DESIGN: Readonly<Record<string, readonly string[]>> = {
  'POST /auth/site/login': ['site_sign_in_failures', 'site_users'],
  'POST /auth/site/pin': ['site_sign_in_failures', 'site_users'],
}

interface FuzzRequest {
  path: Record<string, string>
  query: Array<[string, string]>
  body: unknown
  hasBody: boolean
}

/**
 * A streamed AI answer (`text/event-stream`) records its usage once the stream has ended, after the response: the
 * next request's snapshot would otherwise see that write as its own (session 26, seed 606, PostgreSQL: a 400 "changed
 * ai_usage"). Waits (at most 5 s) until the organisation has no request in flight.
 */
async function streamSettled(h: Harness, orgId: string, res: LightMyRequestResponse): Promise<void> {
  if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) return
  for (let i = 0; i < 100; i++) {
    const pending = await h.handle.db.selectFrom('ai_usage').select('id').where('org_id', '=', orgId).where('status', '=', 'pending').execute()
    if (pending.length === 0) return
    await sleep(50)
  }
}

const asQueryValues = (value: unknown): string[] =>
  Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) : [typeof value === 'string' ? value : JSON.stringify(value)]

/**
 * A long poll's wait (GET /api/link/pull's `waitMs`, up to 25 s): drawn from the schema, most values past the cursor
 * find nothing and wait that long, and ten samples took minutes. The fuzzer keeps the waits short and the refusals
 * (below 0, past the maximum, not an integer); the maximum itself is accepted, which limits.test.ts checks once with a
 * cursor that has changes to answer at once. The 25 s stays: the agent's long poll must end well before the 30–60 s
 * idle timeouts of the proxies a plant's outbound HTTPS goes through.
 */
const WAIT_PARAMETER = 'waitMs'
const waitArbitrary = (schema: unknown) => {
  const maximum = (schema as { maximum?: number }).maximum ?? 0
  return fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom<unknown>(-1, maximum + 1, 1.5, 'soon', '1e400'))
}

/** Path values: the tenant's own id half of the time (so handlers run on real rows), else anything the schema allows or not. */
function requestArbitrary(op: Operation, ids: TenantIds): fc.Arbitrary<FuzzRequest> {
  const segment = (schema: unknown) =>
    arbitraryFromSchema(schema)
      .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
      // An empty or dot segment would address another route (or none): the router's business, not this operation's.
      .filter((s) => s.length > 0 && s !== '.' && s !== '..')
  const path = fc.record(
    Object.fromEntries(
      pathParams(op).map((p) => {
        const kind = parameterKind(op.path, p.name)
        return [p.name, kind ? fc.oneof(fc.constant(ids[kind]), segment(p.schema)) : segment(p.schema)]
      }),
    ),
  )
  const query = fc
    .tuple(
      ...queryParams(op).map((p) => {
        const kind = parameterKind(op.path, p.name)
        const value = kind
          ? fc.oneof(fc.constant<unknown>(ids[kind]), arbitraryFromSchema(p.schema))
          : p.name === WAIT_PARAMETER
            ? waitArbitrary(p.schema)
            : arbitraryFromSchema(p.schema)
        return fc.option(
          value.map((v) => asQueryValues(v).map((s) => [p.name, s] as [string, string])),
          { nil: undefined, freq: 2 },
        )
      }),
    )
    .map((pairs) => pairs.flatMap((p) => p ?? []))
  const schema = jsonBodySchema(op)
  const body = schema ? arbitraryFromSchema(schema) : fc.constant(undefined)
  return fc.record({ path, query, body, hasBody: fc.constant(schema !== undefined) }) as fc.Arbitrary<FuzzRequest>
}

for (const dialect of testDialects()) {
  // Both modes: the cloud has the fleet link's operations (the site servers' administration, and the link's own, called
  // with the enrolled site server's credential and the link's headers: tenant.link, support.ts callerFor).
  for (const mode of ['site', 'cloud'] as const)
    describe(`${dialect}, ${mode} mode: fuzzing every operation of the OpenAPI document (fast-check)`, () => {
      it(`${RUNS} generated requests per operation (bodies, queries and path parameters from the document): 0 × 5xx, 0 response-schema violations, 0 leaks, 0 rows changed by a refused (4xx) request`, async (t) => {
        const h = await harnessForEveryOperation(t, dialect, mode)
        const tenant = await seedTenant(h, 'FZ')
        // Deletions and a site server's revocation last, the site itself at the very end: the other operations keep
        // finding the seeded rows, the link's own a credential that still passes.
        const last = (op: Operation) => op.method === 'DELETE' || op.path.endsWith('/revoke')
        const rank = (op: Operation) => (!last(op) ? 0 : op.path === '/api/sites/{code}' ? 2 : 1)
        const ops = operations(await openApiDocument(h)).sort((a, b) => rank(a) - rank(b))
        const checkResponse = responseChecker()
        await sleep(200) // the seeding key's lastUsedAt flush lands before the first snapshot
        console.log(
          `# hardening fuzz (${dialect}, ${mode}): seed ${SEED} (replay: SITEGRID_FUZZ_SEED=${SEED}), ${RUNS} runs per operation${mode === 'cloud' ? ` (${CLOUD_SHARED_RUNS} for those the site mode fuzzes too)` : ''}`,
        )
        let requests = 0
        let serverErrors = 0
        let refused = 0
        let refusedChanging = 0
        let linkRequests = 0
        const problems: string[] = []
        const statuses: Record<number, number> = {}
        let baseline = await snapshotOrg(h, tenant.org.id)
        assert.ok(snapshotRows(baseline) >= 15, 'the snapshot sees the seeded rows')
        for (const [index, op] of ops.entries()) {
          const caller = callerFor(h, op, tenant)
          const numRuns = mode === 'site' || cloudOwn(op) ? RUNS : CLOUD_SHARED_RUNS
          for (const sample of fc.sample(requestArbitrary(op, tenant.ids), { seed: SEED + index, numRuns })) {
            const query = new URLSearchParams(sample.query).toString()
            const url = fillPath(op.path, sample.path) + (query ? `?${query}` : '')
            const withBody = sample.hasBody && sample.body !== undefined
            const res = await h.inject(caller.credential, {
              method: op.method as 'GET',
              url,
              headers: { ...caller.headers, ...(withBody ? { 'content-type': 'application/json' } : {}) },
              ...(withBody ? { payload: JSON.stringify(sample.body) } : {}),
            })
            requests++
            if (caller.credential !== tenant.owner) linkRequests++
            statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
            const where = `${label(op)} ${url} ${sample.hasBody ? JSON.stringify(sample.body).slice(0, 200) : ''}`
            if (res.statusCode >= 500) {
              serverErrors++
              problems.push(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`)
            }
            const violation = checkResponse(op, res)
            if (violation) problems.push(`${violation} [${where}]`)
            const leaks = leaksIn(res.body, secretIssuedBy(op))
            if (leaks.length) problems.push(`${where}: the answer holds ${leaks.join(', ')}`)
            await streamSettled(h, tenant.org.id, res)
            const after = await snapshotOrg(h, tenant.org.id)
            if (res.statusCode >= 400 && res.statusCode < 500) {
              refused++
              const allowed = CHANGES_BY_DESIGN[label(op)] ?? []
              const diff = snapshotDiff(baseline, after).filter((d) => !allowed.includes(d.split(':')[0]!))
              if (diff.length) {
                refusedChanging++
                problems.push(`${where}: refused with ${res.statusCode} but changed ${diff.join(', ')}`)
              }
            }
            baseline = after
          }
        }
        console.log(
          `# hardening fuzz (${dialect}, ${mode}): seed ${SEED}, ${ops.length} operations, ${requests} requests (${linkRequests} with the link credential), ${serverErrors} x 5xx, ${problems.length - serverErrors - refusedChanging} schema violations or leaks, ${refusedChanging} refused requests that changed rows (of ${refused} refused); statuses ${JSON.stringify(statuses)}`,
        )
        for (const problem of problems.slice(0, 100)) console.log(`# fuzz problem: ${problem.slice(0, 500)}`)
        assert.equal(ops.length >= 80, true, `${ops.length} operations`)
        // The cloud's link operations were called as the site server (else they would all be 403s of the link policy).
        if (mode === 'cloud') assert.ok(linkRequests >= RUNS * 6, `${linkRequests} requests with the link credential`)
        assert.deepEqual(problems, [])
      })
    })
}

/** Issue 24 (defects 9–11): the input classes of test/hardening/input-cases.ts, every case a refusal. */
const INPUT_CLASSES = {
  'NUL and lone surrogates': textCases,
  'deep nesting': depthCases,
  'content types': mediaTypeCases,
  'huge numbers': hugeNumberCases,
} as const

/** What is wrong with an answer to an input case ('' when nothing): the status and code, the field named, the types listed. */
function inputCaseMismatch(res: LightMyRequestResponse, expected: Expected, op: Operation): string {
  if (res.statusCode !== expected.status) return `answered ${res.statusCode}, expected ${expected.status}: ${res.body.slice(0, 200)}`
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) return `answered ${String(res.headers['content-type'])}, not a problem`
  const body = res.json() as { code?: string; detail?: string; acceptedTypes?: string[]; errors?: Array<{ in: string; pointer: string; message: string }> }
  if (body.code !== expected.code) return `code ${body.code}, expected ${expected.code}`
  if (expected.status === 415) {
    const named = `${body.detail} ${JSON.stringify(body.acceptedTypes ?? [])}`
    const accepted = bodyTypesOf(op)
    return accepted.every((type) => named.includes(type)) ? '' : `the 415 does not name ${accepted.join(', ')}: ${named}`
  }
  const errors = body.errors ?? []
  // A value the schema refuses may be named after other fields' errors (the example body's required fields).
  if (expected.anyError)
    return errors.some((e) => e.in === expected.in && e.pointer === expected.pointer && (!expected.rule || expected.rule.test(e.message)))
      ? ''
      : `names none of ${expected.in} ${expected.pointer} with ${String(expected.rule)}: ${JSON.stringify(errors).slice(0, 300)}`
  const first = errors[0]
  if (!first) return 'no field named'
  if (expected.in !== undefined && first.in !== expected.in) return `names ${first.in}, expected ${expected.in}`
  if (expected.pointer !== undefined && first.pointer !== expected.pointer)
    return `names ${JSON.stringify(first.pointer)}, expected ${JSON.stringify(expected.pointer)}`
  // The streamed network document names the element (`/nodes/0`) of a value too deep, the other routes the value.
  const prefix = expected.pointerPrefix
  if (prefix !== undefined && !first.pointer.startsWith(prefix) && !(first.pointer !== '' && prefix.startsWith(`${first.pointer}/`)))
    return `names ${first.pointer}, not ${prefix}`
  if (expected.rule && !expected.rule.test(first.message)) return `rule "${first.message}", expected ${String(expected.rule)}`
  return ''
}

for (const dialect of testDialects()) {
  // One tenant per mode for every class (a harness and a seeded tenant each were most of a class's time); in the cloud
  // the link's operations are called as its enrolled site server (support.ts callerFor).
  for (const mode of ['site', 'cloud'] as const)
    describe(`${dialect}, ${mode} mode: every operation of the OpenAPI document refuses bad input by class (issue 24)`, () => {
      it(`${Object.keys(INPUT_CLASSES).join(', ')}: each case answers its 4xx problem naming the field (or the accepted types), 0 × 5xx, 0 rows changed, every answer as documented`, async (t) => {
        const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_PIN_SCRYPT_LOG2N: '10', SITEGRID_MODE: mode })
        const tenant = await seedTenant(h, 'IN')
        const ops = operations(await openApiDocument(h))
        const checkResponse = responseChecker()
        await sleep(200) // the seeding key's lastUsedAt flush lands before the first snapshot
        const problems: string[] = []
        for (const [className, casesOf] of Object.entries(INPUT_CLASSES)) {
          let requests = 0
          let linkRequests = 0
          let operationsWithCases = 0
          let serverErrors = 0
          const classProblems: string[] = []
          for (const op of ops) {
            const cases = casesOf(op, tenant.ids, h.clock.now())
            if (cases.length === 0) continue
            operationsWithCases++
            const caller = callerFor(h, op, tenant)
            const before = await snapshotOrg(h, tenant.org.id)
            // The owner passes every policy but the platform administrators': there the 403 comes first.
            const refusedFirst = policyOf(h, op) === 'platformAdmin'
            for (const c of cases) {
              const res = await h.inject(caller.credential, { ...c.request, headers: { ...caller.headers, ...c.request.headers } })
              requests++
              if (caller.credential !== tenant.owner) linkRequests++
              if (res.statusCode >= 500) serverErrors++
              const mismatch = refusedFirst
                ? res.statusCode === 403
                  ? ''
                  : `answered ${res.statusCode}, expected the 403 of its policy`
                : inputCaseMismatch(res, c.expected, op)
              if (mismatch) classProblems.push(`${label(op)} ${c.name}: ${mismatch}`)
              const violation = checkResponse(op, res)
              if (violation) classProblems.push(`${c.name}: ${violation}`)
            }
            const diff = snapshotDiff(before, await snapshotOrg(h, tenant.org.id))
            if (diff.length) classProblems.push(`${label(op)}: refused ${className} cases changed ${diff.join(', ')}`)
          }
          console.log(
            `# input classes (${dialect}, ${mode}) ${className}: ${operationsWithCases} of ${ops.length} operations, ${requests} requests (${linkRequests} with the link credential), ${serverErrors} x 5xx, ${classProblems.length} problems`,
          )
          for (const problem of classProblems.slice(0, 60)) console.log(`# input problem: ${problem.slice(0, 400)}`)
          // Fewer operations take a number than a string or a body.
          const minimum = className === 'huge numbers' ? 10 : 30
          if (!(operationsWithCases >= minimum && requests >= operationsWithCases))
            classProblems.push(`${className}: ${operationsWithCases} operations, ${requests} requests`)
          if (mode === 'cloud' && linkRequests === 0) classProblems.push(`${className}: no case reached a link operation as the site server`)
          problems.push(...classProblems)
        }
        assert.deepEqual(problems, [])
      })
    })
}
