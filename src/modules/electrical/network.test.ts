import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { comparableBody, testDialects } from '../../../test/harness.ts'
import { addEdge, addNode, BASE, electricalSetup, snapshot } from './test-support.ts'

const node = (over: Record<string, unknown> = {}) => ({ id: 'N1', name: 'Main switchboard', nodeType: 3, ...over })
const pointers = (body: string) => ((JSON.parse(body) as { errors?: Array<{ pointer: string }> }).errors ?? []).map((e) => e.pointer)

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical network document, policy and tenancy`, () => {
    it('GET network returns every node and edge; PUT network replaces it atomically and keeps createdAt of kept ids', async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      const old = await addNode(as, 'KEEP', 3)
      await addNode(as, 'GONE', 8)
      await addEdge(as, 'KEEP', 'GONE')
      h.clock.advance(5000)
      const res = await as('PUT', `${BASE}/network`, {
        nodes: [
          { id: 'G', name: 'Grid', nodeType: 0 },
          { id: 'KEEP', name: 'MSB', nodeType: 3, ratedVoltageV: 415 },
          { id: 'M', name: 'Motor', nodeType: 8 },
        ],
        edges: [
          { sourceId: 'G', targetId: 'KEEP', edgeType: 3 },
          { sourceId: 'KEEP', targetId: 'M', edgeType: 0 },
        ],
      })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), { siteId: 'S1', nodeCount: 3, edgeCount: 2, nodesAdded: 2, nodesRemoved: 1, nodesKept: 1 })
      const net = (await as('GET', `${BASE}/network`)).json()
      assert.equal(net.nodeCount, 3)
      assert.deepEqual(
        net.nodes.map((n: { id: string }) => n.id),
        ['G', 'KEEP', 'M'],
      )
      assert.deepEqual(
        net.edges.map((e: { sourceId: string; targetId: string }) => `${e.sourceId}-${e.targetId}`),
        ['G-KEEP', 'KEEP-M'],
      )
      const kept = net.nodes[1]
      assert.equal(kept.createdAt, old.createdAt)
      assert.notEqual(kept.updatedAt, old.updatedAt)
      assert.equal(kept.ratedVoltageV, 415)
      const empty = await as('PUT', `${BASE}/network`, { nodes: [], edges: [] })
      assert.equal(empty.statusCode, 200)
      assert.deepEqual((await as('GET', `${BASE}/network`)).json(), { siteId: 'S1', nodeCount: 0, edgeCount: 0, nodes: [], edges: [] })
    })

    it('PUT network: a field problem (400) or a graph problem (422) is listed with its pointer and nothing changes', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      const before = await snapshot(h, org)
      const fields = await as(
        'PUT',
        `${BASE}/network`,
        '{"nodes":[{"id":"X","name":"x","nodeType":3},{"id":"Y","name":"y","nodeType":3,"ratedCurrentA":1e999,"protectionCurve":"nope"}],"edges":[]}',
      )
      assert.equal(fields.statusCode, 400, fields.body)
      assert.deepEqual(pointers(fields.body), ['/nodes/1/ratedCurrentA', '/nodes/1/protectionCurve'])
      const negative = await as('PUT', `${BASE}/network`, { nodes: [{ id: 'X', name: 'x', nodeType: 3, cableLengthM: -5 }], edges: [] })
      assert.equal(negative.statusCode, 400)
      assert.ok(pointers(negative.body).includes('/nodes/0/cableLengthM'))
      const schema = await as('PUT', `${BASE}/network`, { nodes: [{ id: 'X', name: 'x', nodeType: 14 }], edges: [] })
      assert.equal(schema.statusCode, 400)
      assert.deepEqual(pointers(schema.body), ['/nodes/0/nodeType'])
      const graph = await as('PUT', `${BASE}/network`, {
        nodes: [
          { id: 'X', name: 'x', nodeType: 3 },
          { id: 'X', name: 'again', nodeType: 3 },
          { id: 'Z', name: 'z', nodeType: 3 },
        ],
        edges: [
          { sourceId: 'X', targetId: 'nowhere', edgeType: 0 },
          { sourceId: 'Z', targetId: 'Z', edgeType: 0 },
          { sourceId: 'X', targetId: 'Z', edgeType: 1 },
          { sourceId: 'X', targetId: 'Z', edgeType: 1 },
        ],
      })
      assert.equal(graph.statusCode, 422, graph.body)
      assert.ok(pointers(graph.body).includes('/nodes/1/id'))
      assert.ok(pointers(graph.body).includes('/edges/0/targetId'))
      assert.ok(pointers(graph.body).includes('/edges/1'))
      assert.ok(pointers(graph.body).includes('/edges/3'))
      assert.equal(graph.json().problemCount, 4)
      assert.equal((await as('PUT', `${BASE}/network`, { nodes: [] })).statusCode, 400, 'edges is required')
      assert.equal(await snapshot(h, org), before)
    })

    it('PUT network has its own size bound (SITEGRID_NETWORK_MAX_BYTES): a body over SITEGRID_BODY_LIMIT_BYTES loads there and nowhere else', async (t) => {
      const { as } = await electricalSetup(t, dialect, { SITEGRID_BODY_LIMIT_BYTES: '2048' })
      const nodes = Array.from({ length: 40 }, (_, i) => ({
        id: `N${String(i).padStart(2, '0')}`,
        name: `Feeder ${i}`,
        nodeType: 10,
        description: 'd'.repeat(40),
      }))
      const edges = nodes.slice(1).map((n) => ({ sourceId: 'N00', targetId: n.id, edgeType: 0 }))
      const body = JSON.stringify({ nodes, edges })
      assert.ok(body.length > 2048)
      const res = await as('PUT', `${BASE}/network`, body)
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().nodeCount, 40)
      const big = await as('POST', `${BASE}/nodes`, {
        id: 'BIG',
        name: 'x',
        nodeType: 3,
        description: 'd'.repeat(500),
        tagBindings: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'.repeat(50)])),
      })
      assert.equal(big.statusCode, 413)
    })

    it('policy: members read everything; writes need admin or owner (403, nothing written)', async (t) => {
      const { h, org, as, asMember } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      await addNode(as, 'B', 3)
      await addEdge(as, 'A', 'B')
      const before = await snapshot(h, org)
      for (const path of [
        '/nodes',
        '/nodes/A',
        '/edges',
        '/network',
        '/topology/islands',
        '/topology/loops',
        '/topology/isolated',
        '/nodes/B/supply-paths',
        '/export/pandapower',
      ]) {
        assert.equal((await asMember('GET', `${BASE}${path}`)).statusCode, 200, path)
      }
      for (const [method, path, body] of [
        ['POST', '/nodes', node({ id: 'C' })],
        ['PUT', '/nodes/A', { name: 'x' }],
        ['DELETE', '/nodes/A?cascade=true', undefined],
        ['POST', '/edges', { sourceId: 'B', targetId: 'A', edgeType: 0 }],
        ['DELETE', '/edges?source=A&target=B&type=0', undefined],
        ['PUT', '/network', { nodes: [], edges: [] }],
      ] as const) {
        assert.equal((await asMember(method, `${BASE}${path}`, body)).statusCode, 403, `${method} ${path}`)
      }
      assert.equal(await snapshot(h, org), before)
    })

    it("another organisation's site and an unknown site answer the same 404 on every route", async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      const other = await h.orgWithKey('owner')
      const asOther = (method: string, url: string, payload?: unknown) =>
        h.inject({ org: other.org, apiKey: other.key }, { method: method as 'GET', url, payload: payload as object })
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/nodes'],
        ['GET', '/nodes/A'],
        ['POST', '/nodes', node({ id: 'B' })],
        ['PUT', '/nodes/A', { name: 'x' }],
        ['DELETE', '/nodes/A'],
        ['GET', '/edges'],
        ['POST', '/edges', { sourceId: 'A', targetId: 'A2', edgeType: 0 }],
        ['DELETE', '/edges?source=A&target=B&type=0'],
        ['GET', '/network'],
        ['PUT', '/network', { nodes: [], edges: [] }],
        ['GET', '/topology/islands'],
        ['GET', '/topology/loops'],
        ['GET', '/topology/isolated'],
        ['GET', '/nodes/A/supply-paths'],
        ['GET', '/nodes/A/trip-time?faultCurrentA=10'],
        ['GET', '/nodes/A/coordination?faultCurrentA=10'],
        ['GET', '/export/pandapower'],
      ]
      for (const [method, path, body] of routes) {
        const foreign = await asOther(method, `${BASE}${path}`, body)
        const unknown = await as(method, `/api/sites/NOPE/electrical${path}`, body)
        assert.equal(foreign.statusCode, 404, `${method} ${path}: ${foreign.body}`)
        assert.deepEqual(comparableBody(foreign.body), comparableBody(unknown.body), `${method} ${path}`)
      }
      const unknownNode = await as('GET', `${BASE}/nodes/NOPE`)
      assert.deepEqual(comparableBody(unknownNode.body), comparableBody((await asOther('GET', `${BASE}/nodes/A`)).body))
      assert.equal((await as('GET', `${BASE}/nodes/A`)).statusCode, 200, 'the owner still sees its node')
    })

    it('deleting the site previews and then removes its network (foreign keys cascade)', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      await addNode(as, 'B', 3)
      await addEdge(as, 'A', 'B')
      const preview = await as('DELETE', '/api/sites/S1')
      assert.equal(preview.statusCode, 409)
      assert.equal(preview.json().wouldDelete.electricalNodes, 2)
      assert.equal(preview.json().wouldDelete.electricalEdges, 1)
      assert.equal((await as('DELETE', '/api/sites/S1?confirm=S1')).statusCode, 204, (await as('GET', '/api/sites/S1')).body)
      assert.equal(await snapshot(h, org), JSON.stringify({ nodes: [], edges: [] }))
    })

    it('OpenAPI documents nodeType and edgeType as named enumerations', async (t) => {
      const { h } = await electricalSetup(t, dialect)
      const doc = (await h.inject(undefined, { method: 'GET', url: '/openapi.json' })).json()
      const text = JSON.stringify(doc)
      assert.ok(text.includes('"x-enum-varnames":["UtilitySupply","Generator","PowerTransformer"'), 'nodeType names')
      assert.ok(text.includes('"x-enum-varnames":["Cable","OverheadLine","BusbarLink","TransformerWinding","BusTie"]'), 'edgeType names')
      assert.ok(doc.paths['/api/sites/{siteId}/electrical/network'].put, 'bulk load documented')
    })
  })
}
