import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { controllerBody, createController, equipmentSetup, rowCount, snapshot } from './test-support.ts'

const URL = '/api/sites/S1/controllers'

type Case = [field: string, value: unknown, status: number]

/** Sets `connection.x` or `x` in a body. */
function withField(body: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  if (!field.startsWith('connection.')) return { ...body, [field]: value }
  return { ...body, connection: { ...(body.connection as object), [field.slice('connection.'.length)]: value } }
}

const CONNECTION_BOUNDS: Case[] = [
  ['connection.port', 0, 400],
  ['connection.port', 1, 0],
  ['connection.port', 65535, 0],
  ['connection.port', 65536, 400],
  ['connection.pollIntervalMs', 99, 400],
  ['connection.pollIntervalMs', 100, 0],
  ['connection.pollIntervalMs', 60000, 0],
  ['connection.pollIntervalMs', 60001, 400],
  ['connection.timeoutMs', 999, 400],
  ['connection.timeoutMs', 1000, 0],
  ['connection.timeoutMs', 30000, 0],
  ['connection.timeoutMs', 30001, 400],
  ['connection.retryDelayMs', 999, 400],
  ['connection.retryDelayMs', 1000, 0],
  ['connection.retryDelayMs', 60000, 0],
  ['connection.retryDelayMs', 60001, 400],
  ['connection.maxRetries', 0, 400],
  ['connection.maxRetries', 1, 0],
  ['connection.maxRetries', 10, 0],
  ['connection.maxRetries', 11, 400],
  ['connection.protocol', '', 400],
  ['connection.protocol', 'x', 0],
  ['connection.ipAddress', '', 400],
  ['connection.ipAddress', 'h', 0],
  ['connection.cipPath', null, 0],
  ['connection.cipPath', '', 0],
  ['platform', -1, 400],
  ['platform', 0, 0],
  ['platform', 6, 0],
  ['platform', 7, 400],
  ['firmwareVersion', 'f'.repeat(50), 0],
  ['firmwareVersion', 'f'.repeat(51), 400],
  ['firmwareVersion', null, 0],
  ['firmwareVersion', '', 0],
]
const WRONG_TYPES: Case[] = [
  ['connection.port', '502', 400],
  ['connection.port', 502.5, 400],
  ['connection.pollIntervalMs', true, 400],
  ['connection.maxRetries', null, 400],
  ['connection.protocol', 5, 400],
  ['connection.ipAddress', null, 400],
  ['connection.cipPath', 10, 400],
  ['platform', '1', 400],
  ['platform', 1.5, 400],
  ['platform', null, 400],
  ['connection', null, 400],
  ['connection', 'tcp://x', 400],
  ['connection.timeoutMs', null, 400],
]

for (const dialect of testDialects()) {
  describe(`${dialect}: controller bounds`, () => {
    it('create: every connection bound holds at both sides; a refused create writes nothing', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      let created = 0
      for (const [field, value, status] of CONNECTION_BOUNDS) {
        const res = await as('POST', URL, withField(controllerBody(), field, value))
        assert.equal(res.statusCode, status || 201, `${field} = ${JSON.stringify(value)}: ${res.body}`)
        if (res.statusCode === 201) created++
        else assert.equal(res.json().errors[0].pointer, `/${field.replace('.', '/')}`, field)
      }
      assert.equal(await rowCount(h, 'controllers', org.id), created)
    })

    it('create: name is required with 1 to 200 characters; required fields, wrong types and unknown fields are 400s naming the field', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      for (const [name, status] of [
        ['', 400],
        ['n', 201],
        ['n'.repeat(200), 201],
        ['n'.repeat(201), 400],
        [null, 400],
      ] as const) {
        assert.equal((await as('POST', URL, controllerBody({ name }))).statusCode, status, `name ${String(name).length}`)
      }
      for (const [assetNumber, status] of [
        ['', 400],
        ['a'.repeat(100), 201],
        ['b'.repeat(101), 400],
        [7, 400],
      ] as const) {
        assert.equal((await as('POST', URL, controllerBody({ assetNumber }))).statusCode, status, `assetNumber ${String(assetNumber)}`)
      }
      for (const field of ['name', 'platform', 'connection', 'assetNumber']) {
        const body: Record<string, unknown> = controllerBody()
        delete body[field]
        const res = await as('POST', URL, body)
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().errors[0].pointer, `/${field}`)
      }
      for (const field of ['protocol', 'ipAddress']) {
        const body = controllerBody()
        delete (body.connection as Record<string, unknown>)[field]
        assert.equal((await as('POST', URL, body)).json().errors[0].pointer, `/connection/${field}`)
      }
      for (const [field, value, status] of WRONG_TYPES) {
        const res = await as('POST', URL, withField(controllerBody(), field, value))
        assert.equal(res.statusCode, status, `${field} = ${JSON.stringify(value)}`)
      }
      const unknown = await as('POST', URL, { ...controllerBody(), colour: 'red' })
      assert.equal(unknown.statusCode, 400)
      assert.deepEqual(
        unknown.json().errors.map((e: { pointer: string }) => e.pointer),
        ['/colour'],
      )
      const unknownNested = await as('POST', URL, withField(controllerBody(), 'connection.slot', 0))
      assert.equal(unknownNested.json().errors[0].pointer, '/connection/slot')
      assert.equal(await rowCount(h, 'controllers', org.id), 3)
    })

    it('ipAddress must be an IPv4 or IPv6 address or a host name', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      for (const ip of ['10.0.0.1', '::1', 'fe80::1', '2001:db8::5', 'plc-01.chpp.local', 'PLC1', 'plc.local.']) {
        assert.equal((await as('POST', URL, controllerBody({}, { ipAddress: ip }))).statusCode, 201, ip)
      }
      for (const ip of ['999.1.1.1', '10.0.0', 'has space', 'a..b', '-plc', 'plc_1', 'http://10.0.0.1', '10.0.0.1:44818', 'x'.repeat(64)]) {
        const res = await as('POST', URL, controllerBody({}, { ipAddress: ip }))
        assert.equal(res.statusCode, 400, ip)
        assert.equal(res.json().errors[0].pointer, '/connection/ipAddress')
      }
    })

    it('PUT: the update bounds of spec 2.3 hold at both sides, and a refused update changes nothing', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const cases: Case[] = [
        ...CONNECTION_BOUNDS,
        ...WRONG_TYPES.filter(([f, v]) => !(f === 'connection' && v === null)),
        ['name', '', 0],
        ['name', 'n'.repeat(200), 0],
        ['name', 'n'.repeat(201), 400],
        ['name', null, 0],
        ['name', 5, 400],
      ]
      for (const [field, value, status] of cases) {
        const before = await snapshot(h, org)
        const res = await as('PUT', `${URL}/${c.id}`, withField({}, field, value))
        assert.equal(res.statusCode, status || 200, `${field} = ${JSON.stringify(value)}: ${res.body}`)
        if (res.statusCode !== 200) assert.equal(await snapshot(h, org), before, `${field} refused yet changed`)
      }
      const before = await snapshot(h, org)
      for (const body of [{ assetNumber: 'B' }, { id: 'ctl_x' }, { connection: { protocol: 'cip', extra: 1 } }, { edgeId: 'E1' }, { connection: null }]) {
        const res = await as('PUT', `${URL}/${c.id}`, body)
        assert.equal(res.statusCode, 400, JSON.stringify(body))
      }
      assert.equal(await snapshot(h, org), before)
    })

    it('PUT: absent fields are left as they are, a null clears name, firmwareVersion and cipPath, connection merges', async (t) => {
      const { h, as } = await equipmentSetup(t, dialect)
      const c = await createController(as, 'S1', { firmwareVersion: '20.011' }, { cipPath: '1,0', port: 2222, maxRetries: 5 })
      h.clock.advance(1000)
      const res = await as('PUT', `${URL}/${c.id}`, { name: null, connection: { pollIntervalMs: 250 } })
      assert.equal(res.statusCode, 200)
      const u = res.json()
      assert.equal(u.name, null)
      assert.equal(u.firmwareVersion, '20.011')
      assert.deepEqual(u.connection, {
        protocol: 'EtherNet/IP',
        ipAddress: '10.20.1.15',
        port: 2222,
        cipPath: '1,0',
        pollIntervalMs: 250,
        timeoutMs: 3000,
        retryDelayMs: 5000,
        maxRetries: 5,
      })
      assert.notEqual(u.updatedAt, c.updatedAt)
      assert.equal(u.createdAt, c.createdAt)
      const cleared = (await as('PUT', `${URL}/${c.id}`, { firmwareVersion: null, connection: { cipPath: null } })).json()
      assert.equal(cleared.firmwareVersion, null)
      assert.equal(cleared.connection.cipPath, null)
      assert.equal(cleared.cipRoute, null)
      assert.equal((await as('PUT', `${URL}/${c.id}`, {})).statusCode, 200, 'an empty update is allowed')
      assert.equal((await as('GET', `${URL}/${c.id}`)).json().connection.pollIntervalMs, 250)
    })
  })
}
