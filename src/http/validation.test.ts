import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { type TSchema, Type } from 'typebox'
import { harness, testDialects } from '../../test/harness.ts'
import { PLATFORMS } from '../modules/controllers/codes.ts'
import { EDGE_TYPES, NODE_TYPES } from '../modules/electrical/codes.ts'
import { SITE_STATUS } from '../modules/sites/codes.ts'
import { DATE_TIME_RULE, describeAjvErrors, installProblemHandlers, MAX_FIELD_PROBLEMS } from './problem.ts'
import { createBodyValidator, installValidators } from './validation.ts'

const fixture = fileURLToPath(new URL('../../test/fixtures/validation/many-nullable-items.ts', import.meta.url))

/** The message of a refused coded integer: each code with its name, from the table the schema is built from. */
const codes = (table: ReadonlyArray<{ code: number; name: string }>) => `must be one of ${table.map((c) => `${c.code} (${c.name})`).join(', ')}`

for (const dialect of testDialects()) {
  describe(`${dialect}: validation messages of enumerations (issue 27)`, () => {
    it('a refused value of an enumeration answers the allowed values, in the body and in the query', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const as = { org, apiKey: key }
      const errorsOf = async (method: 'POST' | 'GET', url: string, payload?: object) => {
        const res = await h.inject(as, { method, url, ...(payload ? { payload } : {}) })
        assert.equal(res.statusCode, 400, res.body)
        assert.equal(res.json().code, 'ValidationFailed')
        return res.json().errors as Array<{ in: string; pointer: string; message: string }>
      }
      assert.deepEqual(await errorsOf('POST', `/api/admin/orgs/${org.slug}/members/someone/approve`, { role: 'boss' }), [
        { in: 'body', pointer: '/role', message: 'must be one of "owner", "admin", "member"' },
      ])
      const alarmEvent = { eventId: 'e-1', instanceId: 'i-1', condition: 'HI', priority: 'high', state: 'raised', occurredAt: new Date().toISOString() }
      const [state] = (await errorsOf('POST', '/api/sites/S1/alarms/events', { events: [alarmEvent] })).filter((e) => e.pointer === '/events/0/state')
      assert.deepEqual(state, { in: 'body', pointer: '/events/0/state', message: 'must be one of "active", "normal"' })
      const [query] = await errorsOf('GET', '/api/sites/S1/alarms?state=closed')
      assert.equal(query?.in, 'query')
      assert.match(query?.message ?? '', /^must be one of "active_unacknowledged", /)
    })

    it('a refused coded integer (site status, platform, nodeType, edgeType) names each code, also in the streamed network load', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const as = { org, apiKey: key }
      const send = (method: 'POST' | 'PUT', url: string, payload: object) => h.inject(as, { method, url, payload })
      const refusal = async (res: Awaited<ReturnType<typeof send>>) => {
        assert.equal(res.statusCode, 400, res.body)
        assert.equal(res.json().code, 'ValidationFailed')
        return res.json().errors as Array<{ pointer: string; message: string }>
      }
      const field = (errors: Array<{ pointer: string; message: string }>, pointer: string) => errors.find((e) => e.pointer === pointer)?.message

      assert.equal(field(await refusal(await send('POST', '/api/sites', { code: 'S1', name: 'Plant', status: 9 })), '/status'), codes(SITE_STATUS))
      assert.equal((await send('POST', '/api/sites', { code: 'S1', name: 'Plant' })).statusCode, 201)
      const controller = { name: 'PLC', platform: 9, assetNumber: 'A-1', connection: { protocol: 'cip', ipAddress: '10.0.0.1' } }
      assert.equal(field(await refusal(await send('POST', '/api/sites/S1/controllers', controller)), '/platform'), codes(PLATFORMS))
      assert.equal(
        field(await refusal(await send('POST', '/api/sites/S1/electrical/nodes', { id: 'N1', name: 'N', nodeType: 14 })), '/nodeType'),
        codes(NODE_TYPES),
      )
      const edge = { sourceId: 'N1', targetId: 'N2', edgeType: 7 }
      assert.equal(field(await refusal(await send('POST', '/api/sites/S1/electrical/edges', edge)), '/edgeType'), codes(EDGE_TYPES))
      const network = { nodes: [{ id: 'N1', name: 'N', nodeType: 99 }], edges: [edge] }
      const streamed = await refusal(await send('PUT', '/api/sites/S1/electrical/network', network))
      assert.equal(field(streamed, '/nodes/0/nodeType'), codes(NODE_TYPES))
      assert.equal(field(streamed, '/edges/0/edgeType'), codes(EDGE_TYPES))
    })
  })
}

describe('validation messages of enumerations, from the errors of the body validator', () => {
  it('a nullable enumeration lists null with its values; codes without names are listed bare', () => {
    const validate = createBodyValidator().compile(
      Type.Object({
        mode: Type.Union([Type.Literal('upsert'), Type.Literal('delete'), Type.Null()]),
        level: Type.Integer({ enum: [1, 2, 3] }),
      }),
    )
    assert.equal(validate({ mode: 'merge', level: 4 }), false)
    assert.deepEqual(describeAjvErrors(validate.errors ?? []), [
      { pointer: '/mode', message: 'must be one of "upsert", "delete", null' },
      { pointer: '/level', message: 'must be one of 1, 2, 3' },
    ])
  })
})

describe('the date-time format', () => {
  it('takes what the service can read: a leap second or an offset of hours alone breaks the format (they passed, then answered 500)', () => {
    const validate = createBodyValidator().compile(Type.Object({ at: Type.String({ format: 'date-time' }) }))
    for (const at of ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.123+01:00', '2024-05-01t10:00:00z', '2016-12-31T23:59:59-14:00']) {
      assert.equal(validate({ at }), true, at)
    }
    for (const at of ['2016-12-31T23:59:60Z', '2024-05-01T10:00:00+01', '2024-05-01T10:00:00-00', '2024-02-30T10:00:00Z', '2024-05-01 10:00:00']) {
      assert.equal(validate({ at }), false, at)
      assert.deepEqual(describeAjvErrors(validate.errors ?? []), [{ pointer: '/at', message: DATE_TIME_RULE }], at)
    }
  })
})

describe('a refused body with many or oddly named fields', () => {
  async function app(t: TestContext, schema: TSchema) {
    const server = Fastify({ bodyLimit: 2 * 1024 * 1024 })
    t.after(() => server.close())
    installValidators(server)
    installProblemHandlers(server)
    server.post('/', { schema: { body: schema } }, async () => ({ ok: true }))
    return server
  }

  it('an unknown or missing property is named by its pointer token, `~` and `/` escaped (RFC 6901)', async (t) => {
    const server = await app(t, Type.Object({ 'a/b': Type.Integer() }, { additionalProperties: false }))
    const res = await server.inject({ method: 'POST', url: '/', payload: { 'x~y/z': 1 } })
    assert.equal(res.statusCode, 400, res.body)
    assert.deepEqual(res.json().errors, [
      { in: 'body', pointer: '/a~1b', message: 'is required' },
      { in: 'body', pointer: '/x~0y~1z', message: 'is not a known property' },
    ])
  })

  it(`lists at most ${MAX_FIELD_PROBLEMS} fields and says how many more; the answer stays smaller than a large body`, async (t) => {
    const server = await app(t, Type.Object({ name: Type.String() }, { additionalProperties: false }))
    const body = Object.fromEntries([['name', 'n'], ...Array.from({ length: 100_000 }, (_, i) => [`p${i}`, 0])])
    const payload = JSON.stringify(body)
    const res = await server.inject({ method: 'POST', url: '/', payload, headers: { 'content-type': 'application/json' } })
    assert.equal(res.statusCode, 400, res.body.slice(0, 500))
    const problem = res.json() as { detail: string; errors: Array<{ pointer: string }> }
    assert.equal(problem.errors.length, MAX_FIELD_PROBLEMS)
    assert.deepEqual(
      problem.errors.slice(0, 2).map((e) => e.pointer),
      ['/p0', '/p1'],
    )
    assert.match(problem.detail, /; and 99900 more fields$/)
    assert.ok(res.body.length < 20_000, `${res.body.length} bytes answered`)
    // A few fields are all listed, without a count of more.
    const few = await server.inject({ method: 'POST', url: '/', payload: { name: 'n', a: 1, b: 2 } })
    assert.equal(few.json().errors.length, 2)
    assert.doesNotMatch(few.json().detail, /more fields/)
  })

  it('a body of many nullable items, each broken below its object, is answered field by field, in a process bounded to 60 s (their parents were found by a scan of every field for each, quadratic: more than a minute)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fixture], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(run.signal, null, `not answered within 60 s (it answers in under a second): ${run.stderr}`)
    assert.equal(run.status, 0, run.stderr)
    const { status, first, listed, detailEnd } = JSON.parse(run.stdout) as {
      status: number
      first: unknown
      listed: Array<{ pointer: string }>
      detailEnd: string
    }
    assert.equal(status, 400)
    // Only the fields that broke a rule: a nullable item whose object is wrong below it is not named itself.
    assert.deepEqual(first, { in: 'body', pointer: '/items/0/u', message: 'is not a known property' })
    assert.ok(listed.every((e) => /^\/items\/[0-9]+\/u$/.test(e.pointer)))
    assert.match(detailEnd, /; and 59900 more fields$/)
  })
})
