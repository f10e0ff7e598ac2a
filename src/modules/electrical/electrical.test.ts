import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { addNode, BASE, electricalSetup, snapshot } from './test-support.ts'

type Case = [field: string, value: unknown, status: number]

const node = (over: Record<string, unknown> = {}) => ({ id: 'N1', name: 'Main switchboard', nodeType: 3, ...over })
const pointers = (body: string) => ((JSON.parse(body) as { errors?: Array<{ pointer: string }> }).errors ?? []).map((e) => e.pointer)

const PHYSICAL = ['ratedVoltageV', 'ratedCurrentA', 'ratedPowerKw', 'impedanceOhms', 'cableLengthM', 'protectionPickupA', 'protectionTms']
// A 50-character spelling of a known curve (normalisation folds the padding).
const CURVE_50 = `IEC-Standard-Inverse${'_'.repeat(30)}`

const CREATE_BOUNDS: Case[] = [
  ['id', '', 400],
  ['id', 'a', 201],
  ['id', 'i'.repeat(50), 201],
  ['id', 'i'.repeat(51), 400],
  ['id', 'tab\there', 400],
  ['name', '', 400],
  ['name', 'n', 201],
  ['name', 'n'.repeat(200), 201],
  ['name', 'n'.repeat(201), 400],
  ['name', null, 400],
  ['nodeType', -1, 400],
  ['nodeType', 0, 201],
  ['nodeType', 13, 201],
  ['nodeType', 14, 400],
  ['nodeType', 2.5, 400],
  ['nodeType', '3', 400],
  ['cableSize', '', 201],
  ['cableSize', 'c'.repeat(100), 201],
  ['cableSize', 'c'.repeat(101), 400],
  ['cableSize', null, 201],
  ['protectionCurve', '', 201],
  ['protectionCurve', CURVE_50, 201],
  ['protectionCurve', `${CURVE_50}_`, 400],
  ['protectionCurve', null, 201],
  ['description', '', 201],
  ['description', 'd'.repeat(500), 201],
  ['description', 'd'.repeat(501), 400],
  ['description', null, 201],
  ...PHYSICAL.flatMap((f): Case[] => [
    [f, -0.001, 400],
    [f, 0, 201],
    [f, 1e300, 201],
    [f, null, 201],
    [f, '1', 400],
  ]),
  ['tagBindings', {}, 201],
  ['tagBindings', { current: 'MSB1.I' }, 201],
  ['tagBindings', { '': 'x' }, 400],
  ['tagBindings', { k: '' }, 400],
  ['tagBindings', { ['k'.repeat(100)]: 'v'.repeat(500) }, 201],
  ['tagBindings', { ['k'.repeat(101)]: 'v' }, 400],
  ['tagBindings', { k: 'v'.repeat(501) }, 400],
  ['tagBindings', { k: 1 }, 400],
  ['tagBindings', Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'v'])), 201],
  ['tagBindings', Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, 'v'])), 400],
  ['metadata', { any: [1, { deep: true }] }, 201],
  ['metadata', { blob: 'x'.repeat(16_384 - 11) }, 201],
  ['metadata', { blob: 'x'.repeat(16_384 - 10) }, 400],
  ['metadata', 'text', 400],
]

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical nodes`, () => {
    it('create answers 201 with every field; GET reads the same node', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const res = await as(
        'POST',
        `${BASE}/nodes`,
        node({
          ratedVoltageV: 415,
          ratedCurrentA: 1600,
          protectionCurve: 'iec si',
          protectionPickupA: 1600,
          protectionTms: 0.2,
          cableSize: '4x240',
          cableLengthM: 12.5,
          tagBindings: { current: 'MSB1.I_A' },
          metadata: { panel: { rows: 3 } },
        }),
      )
      assert.equal(res.statusCode, 201, res.body)
      const n = res.json()
      assert.equal(n.id, 'N1')
      assert.equal(n.siteId, 'S1')
      assert.equal(n.nodeTypeName, 'Switchboard')
      assert.equal(n.protectionCurve, 'iec si', 'the curve is stored as sent')
      assert.equal(n.impedanceOhms, null)
      assert.deepEqual(n.tagBindings, { current: 'MSB1.I_A' })
      assert.deepEqual(n.metadata, { panel: { rows: 3 } })
      assert.deepEqual((await as('GET', `${BASE}/nodes/N1`)).json(), n)
    })

    it('create: every bound holds at both sides; a refused create writes nothing and names the field', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      let i = 0
      for (const [field, value, status] of CREATE_BOUNDS) {
        const id = field === 'id' ? value : `n${i++}`
        const before = await snapshot(h, org)
        const res = await as('POST', `${BASE}/nodes`, node({ id, [field]: value }))
        assert.equal(res.statusCode, status, `${field} = ${JSON.stringify(value).slice(0, 40)}: ${res.body.slice(0, 300)}`)
        if (status === 400) {
          assert.ok(
            pointers(res.body).some((p) => p.startsWith(`/${field}`)),
            `${field}: names the field, got ${pointers(res.body).join(',')}`,
          )
          assert.equal(await snapshot(h, org), before)
        }
      }
    })

    it('create: a non-finite double (1e999 parses to Infinity) is refused naming the field', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      for (const field of PHYSICAL) {
        const res = await as('POST', `${BASE}/nodes`, `{"id":"N1","name":"x","nodeType":3,"${field}":1e999}`)
        assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
        assert.deepEqual(pointers(res.body), [`/${field}`])
        const neg = await as('POST', `${BASE}/nodes`, `{"id":"N1","name":"x","nodeType":3,"${field}":-1e999}`)
        assert.equal(neg.statusCode, 400)
      }
      assert.equal(await snapshot(h, org), JSON.stringify({ nodes: [], edges: [] }))
    })

    it('create: an unknown protection curve is refused with a 400 listing the accepted names', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const res = await as('POST', `${BASE}/nodes`, node({ protectionCurve: 'IEC Super Inverse' }))
      assert.equal(res.statusCode, 400)
      assert.deepEqual(pointers(res.body), ['/protectionCurve'])
      assert.match(res.json().errors[0].message, /IEC SI/)
      for (const curve of ['IEC SI', 'ieee-vi', 'IEEE_EI', 'DT', 'iec long time inverse', '   ']) {
        assert.equal((await as('POST', `${BASE}/nodes`, node({ id: `c-${curve.trim() || 'blank'}`, protectionCurve: curve }))).statusCode, 201, curve)
      }
    })

    it('create: a node id is unique per site (409), the same id in another site is fine', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'N1', 3)
      const before = await snapshot(h, org)
      const dup = await as('POST', `${BASE}/nodes`, node({ nodeType: 0 }))
      assert.equal(dup.statusCode, 409)
      assert.equal(dup.json().code, 'Conflict')
      assert.equal(await snapshot(h, org), before)
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Other' })).statusCode, 201)
      await addNode(as, 'N1', 3, {}, 'S2')
    })
  })
}
