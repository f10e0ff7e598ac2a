import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { addEdge, addNode, BASE, electricalSetup, snapshot } from './test-support.ts'

type Case = [field: string, value: unknown, status: number]

const pointers = (body: string) => ((JSON.parse(body) as { errors?: Array<{ pointer: string }> }).errors ?? []).map((e) => e.pointer)

const PHYSICAL = ['ratedVoltageV', 'ratedCurrentA', 'ratedPowerKw', 'impedanceOhms', 'cableLengthM', 'protectionPickupA', 'protectionTms']
// A 50-character spelling of a known curve (normalisation folds the padding).
const CURVE_50 = `IEC-Standard-Inverse${'_'.repeat(30)}`

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical nodes (update, list, delete)`, () => {
    it('update: only the fields present change and a null clears a nullable field', async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      const created = await addNode(as, 'N1', 5, {
        ratedCurrentA: 630,
        protectionCurve: 'IEC SI',
        protectionPickupA: 500,
        protectionTms: 0.1,
        description: 'incomer',
        tagBindings: { a: 'b' },
      })
      h.clock.advance(1000)
      const res = await as('PUT', `${BASE}/nodes/N1`, { ratedCurrentA: null, protectionTms: 0.25, description: '' })
      assert.equal(res.statusCode, 200, res.body)
      const n = res.json()
      assert.deepEqual(n, { ...created, ratedCurrentA: null, protectionTms: 0.25, description: '', updatedAt: n.updatedAt })
      assert.notEqual(n.updatedAt, created.updatedAt)
      assert.equal((await as('PUT', `${BASE}/nodes/N1`, {})).json().protectionTms, 0.25, 'an empty update changes nothing but updatedAt')
      const cleared = await as('PUT', `${BASE}/nodes/N1`, { name: null, protectionCurve: null, cableSize: null, nodeType: 6 })
      assert.equal(cleared.json().name, null)
      assert.equal(cleared.json().protectionCurve, null)
      assert.equal(cleared.json().nodeTypeName, 'FuseSwitch')
    })

    it('update: every bound holds at both sides (name 0 to 200 and nullable, nodeType 0 to 13, physical ≥ 0)', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'N1', 3)
      const cases: Case[] = [
        ['name', '', 200],
        ['name', 'n'.repeat(200), 200],
        ['name', 'n'.repeat(201), 400],
        ['name', null, 200],
        ['nodeType', -1, 400],
        ['nodeType', 0, 200],
        ['nodeType', 13, 200],
        ['nodeType', 14, 400],
        ['nodeType', null, 400],
        ['cableSize', 'c'.repeat(100), 200],
        ['cableSize', 'c'.repeat(101), 400],
        ['protectionCurve', CURVE_50, 200],
        ['protectionCurve', `${CURVE_50}x`, 400],
        ['protectionCurve', 'unknown', 400],
        ['description', 'd'.repeat(500), 200],
        ['description', 'd'.repeat(501), 400],
        ...PHYSICAL.flatMap((f): Case[] => [
          [f, -0.001, 400],
          [f, 0, 200],
          [f, null, 200],
        ]),
      ]
      for (const [field, value, status] of cases) {
        const before = await snapshot(h, org)
        const res = await as('PUT', `${BASE}/nodes/N1`, { [field]: value })
        assert.equal(res.statusCode, status, `${field} = ${JSON.stringify(value).slice(0, 40)}: ${res.body.slice(0, 200)}`)
        if (status === 400) {
          assert.ok(
            pointers(res.body).some((p) => p === `/${field}`),
            `${field}: ${res.body}`,
          )
          assert.equal(await snapshot(h, org), before)
        } else {
          assert.deepEqual(res.json()[field], value)
        }
      }
    })

    it('update: id is not updatable and tagBindings/metadata are create-only: a 400 naming the field, nothing changes', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'N1', 3, { tagBindings: { a: 'b' }, metadata: { m: 1 } })
      const before = await snapshot(h, org)
      for (const [field, value] of [
        ['id', 'N2'],
        ['tagBindings', { a: 'c' }],
        ['tagBindings', {}],
        ['metadata', { m: 2 }],
        ['metadata', null],
      ] as const) {
        const res = await as('PUT', `${BASE}/nodes/N1`, { name: 'changed', [field]: value })
        assert.equal(res.statusCode, 400, res.body)
        assert.deepEqual(pointers(res.body), [`/${field}`])
        assert.match(res.json().errors[0].message, field === 'id' ? /not updatable/ : /create-only/)
        assert.equal(await snapshot(h, org), before)
      }
      assert.equal((await as('PUT', `${BASE}/nodes/N1`, { unknownField: 1 })).statusCode, 400)
      assert.equal((await as('PUT', `${BASE}/nodes/N1`, { ratedVoltageV: 1 })).statusCode, 200)
    })

    it('list: paged by id with a stable cursor, filtered by nodeType; a foreign cursor is a 400', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      for (const id of ['e', 'a', 'd', 'c', 'b']) await addNode(as, id, id === 'c' ? 0 : 3)
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const res = await as('GET', `${BASE}/nodes?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(res.statusCode, 200)
        const page = res.json() as { items: Array<{ id: string }>; nextCursor: string | null }
        assert.ok(page.items.length <= 2)
        seen.push(...page.items.map((n) => n.id))
        cursor = page.nextCursor
      } while (cursor)
      assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'e'])
      assert.deepEqual(
        (await as('GET', `${BASE}/nodes?nodeType=0`)).json().items.map((n: { id: string }) => n.id),
        ['c'],
      )
      assert.equal((await as('GET', `${BASE}/nodes?cursor=nonsense`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/nodes?limit=0`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/nodes?limit=1001`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/nodes?limit=1000`)).statusCode, 200)
    })

    it('delete: refused with 409 while edges touch the node; cascade=true removes them too', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      await addNode(as, 'B', 3)
      await addNode(as, 'C', 8)
      await addEdge(as, 'A', 'B')
      await addEdge(as, 'B', 'C')
      const before = await snapshot(h, org)
      const refused = await as('DELETE', `${BASE}/nodes/B`)
      assert.equal(refused.statusCode, 409)
      assert.equal(refused.json().edgeCount, 2)
      assert.equal(await snapshot(h, org), before)
      assert.equal((await as('DELETE', `${BASE}/nodes/B?cascade=true`)).statusCode, 204)
      assert.equal((await as('GET', `${BASE}/nodes/B`)).statusCode, 404)
      assert.deepEqual((await as('GET', `${BASE}/edges`)).json().items, [])
      assert.equal((await as('DELETE', `${BASE}/nodes/C`)).statusCode, 204, 'a node without edges goes without cascade')
      assert.equal((await as('DELETE', `${BASE}/nodes/C`)).statusCode, 404)
    })
  })
}
