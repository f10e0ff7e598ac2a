import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { withOrgScope, withSystemScope } from '../../db/tenant-scope.ts'
import type { OrgId } from '../../ids.ts'
import { sleep, testDialects, type Harness } from '../../../test/harness.ts'
import { createSitesService } from '../sites/service.ts'
import { createElectricalService } from './service.ts'
import { countStaged, EDGE, NODE } from './staging-store.ts'
import { addEdge, addNode, BASE, electricalSetup, snapshot } from './test-support.ts'

interface Doc {
  nodes: Array<Record<string, unknown>>
  edges: Array<{ sourceId: string; targetId: string; edgeType: number }>
}

/** A tree of `size` nodes under one supply, every tenth node with a few optional fields set. */
function tree(size: number, prefix = 'N'): Doc {
  const id = (i: number) => `${prefix}${String(i).padStart(6, '0')}`
  const nodes = Array.from({ length: size }, (_, i) => ({
    id: id(i),
    name: `Node ${i}`,
    nodeType: i === 0 ? 0 : [3, 5, 4, 8][i % 4]!,
    ...(i % 10 === 0 ? { ratedVoltageV: 415, cableLengthM: i / 10, description: `feeder ${i}`, tagBindings: { current: `T${i}.I` } } : {}),
  }))
  const edges = nodes.slice(1).map((_, k) => ({ sourceId: id(Math.floor(k / 3)), targetId: id(k + 1), edgeType: k % 5 }))
  return { nodes, edges }
}

const staged = (h: Harness) => withSystemScope(() => countStaged(h.handle.db))
const pointers = (body: string) => ((JSON.parse(body) as { errors?: Array<{ pointer: string }> }).errors ?? []).map((e) => e.pointer)

async function readBack(as: (m: string, u: string) => Promise<{ json(): unknown }>) {
  const net = (await as('GET', `${BASE}/network`)).json() as { nodes: Array<Record<string, unknown>>; edges: Array<Record<string, unknown>> }
  const pick = (n: Record<string, unknown>) => {
    const out: Record<string, unknown> = { id: n.id, name: n.name, nodeType: n.nodeType }
    for (const f of ['ratedVoltageV', 'cableLengthM', 'description'] as const) if (n[f] !== null) out[f] = n[f]
    if (Object.keys(n.tagBindings as object).length > 0) out.tagBindings = n.tagBindings
    return out
  }
  return {
    nodes: net.nodes.map(pick),
    edges: net.edges.map((e) => ({ sourceId: e.sourceId, targetId: e.targetId, edgeType: e.edgeType })),
  }
}
const sortedEdges = (edges: Doc['edges']) =>
  [...edges].sort(
    (a, b) =>
      (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0) ||
      (a.targetId < b.targetId ? -1 : a.targetId > b.targetId ? 1 : 0) ||
      a.edgeType - b.edgeType,
  )

for (const dialect of testDialects()) {
  describe(`${dialect}: streamed network load (PUT …/electrical/network)`, () => {
    it('a network many chunks long (30 000 nodes) is replaced and reads back equal, with no staging rows left', async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      await addNode(as, 'OLD', 3)
      const doc = tree(30_000)
      const res = await as('PUT', `${BASE}/network`, JSON.stringify(doc))
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), { siteId: 'S1', nodeCount: 30_000, edgeCount: 29_999, nodesAdded: 30_000, nodesRemoved: 1, nodesKept: 0 })
      const back = await readBack(as)
      assert.deepEqual(back.nodes, doc.nodes)
      assert.deepEqual(back.edges, sortedEdges(doc.edges))
      assert.equal(await staged(h), 0)
    })

    it('edges may come before nodes in the document', async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      const res = await as(
        'PUT',
        `${BASE}/network`,
        '{"edges":[{"sourceId":"G","targetId":"M","edgeType":0},{"sourceId":"M","targetId":"L","edgeType":2}],"nodes":[{"id":"L","name":"Load","nodeType":10},{"id":"G","name":"Grid","nodeType":0},{"id":"M","name":"MSB","nodeType":3}]}',
      )
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().edgeCount, 2)
      const back = await readBack(as)
      assert.deepEqual(
        back.nodes.map((n) => n.id),
        ['G', 'L', 'M'],
      )
      assert.deepEqual(back.edges, [
        { sourceId: 'G', targetId: 'M', edgeType: 0 },
        { sourceId: 'M', targetId: 'L', edgeType: 2 },
      ])
      assert.equal(await staged(h), 0)
    })

    it('malformed JSON after thousands of valid (already staged) nodes: 400 MalformedBody, network unchanged, no staging rows', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      await addNode(as, 'B', 3)
      await addEdge(as, 'A', 'B')
      const before = await snapshot(h, org)
      const valid = JSON.stringify(tree(5000)).slice(0, -1) // drop the closing brace…
      for (const broken of [`${valid},"x":}`, valid, '{"nodes":[{"id":"A","name":"a","nodeType":0}],"edges":[] trailing', '']) {
        const res = await as('PUT', `${BASE}/network`, broken)
        assert.equal(res.statusCode, 400, `${broken.slice(-30)}: ${res.body}`)
        assert.equal(res.json().code, 'MalformedBody')
        assert.equal(await staged(h), 0)
      }
      assert.equal(await snapshot(h, org), before)
    })

    it('an invalid element deep in the stream is named by its pointer (400 field, 422 graph) and nothing changes', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      const before = await snapshot(h, org)
      const schema = tree(4000)
      schema.nodes[3217] = { ...schema.nodes[3217], nodeType: 99 }
      const bad = await as('PUT', `${BASE}/network`, JSON.stringify(schema))
      assert.equal(bad.statusCode, 400, bad.body)
      assert.deepEqual(pointers(bad.body), ['/nodes/3217/nodeType'])
      const field = tree(4000)
      field.nodes[2501] = { ...field.nodes[2501], ratedCurrentA: -1 }
      const negative = await as('PUT', `${BASE}/network`, JSON.stringify(field))
      assert.equal(negative.statusCode, 400, negative.body)
      assert.deepEqual(pointers(negative.body), ['/nodes/2501/ratedCurrentA'])
      const graph = tree(4000)
      graph.edges[3900] = { sourceId: graph.edges[3900]!.sourceId, targetId: 'NOWHERE', edgeType: 0 }
      graph.nodes[3999] = { ...graph.nodes[3999], id: graph.nodes[10]!.id }
      const unknown = await as('PUT', `${BASE}/network`, JSON.stringify(graph))
      assert.equal(unknown.statusCode, 422, unknown.body)
      assert.deepEqual(pointers(unknown.body).sort(), ['/edges/3900/targetId', '/edges/3998/targetId', '/nodes/3999/id'], 'edge 3998 ended at the renamed node')
      const extra = await as('PUT', `${BASE}/network`, '{"nodes":[],"edges":[],"owner":"me"}')
      assert.equal(extra.statusCode, 400, extra.body)
      assert.deepEqual(pointers(extra.body), ['/owner'])
      const noEdges = await as('PUT', `${BASE}/network`, '{"nodes":[]}')
      assert.equal(noEdges.statusCode, 400, noEdges.body)
      assert.deepEqual(
        noEdges.json().errors.map((e: { pointer: string; message: string }) => [e.pointer, e.message]),
        [['/edges', 'is required']],
      )
      assert.equal(await staged(h), 0)
      assert.equal(await snapshot(h, org), before)
    })

    it('a connection closed mid-upload (real HTTP) leaves the network unchanged and no staging rows', async (t) => {
      const { h, org, key, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      const before = await snapshot(h, org)
      await h.app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = h.app.server.address() as AddressInfo
      const text = JSON.stringify(tree(20_000))
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: `${BASE}/network`,
        headers: { host: `${org.slug}.localhost`, 'x-api-key': key, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
      })
      req.on('error', () => {}) // the abort below
      req.write(text.slice(0, Math.floor(text.length * 0.6)))
      let seen = 0
      for (let i = 0; i < 200 && seen === 0; i++) {
        seen = await staged(h)
        if (seen === 0) await sleep(25)
      }
      assert.ok(seen > 0, 'rows were staged while the body was still arriving (streamed, not buffered)')
      req.destroy()
      let left = seen
      for (let i = 0; i < 200 && left > 0; i++) {
        await sleep(25)
        left = await staged(h)
      }
      assert.equal(left, 0)
      assert.equal(await snapshot(h, org), before)
    })

    it('two concurrent loads of one site end with one of the two graphs whole, never a mix', async (t) => {
      const { h, as } = await electricalSetup(t, dialect)
      const a = tree(3000, 'A')
      const b = tree(2500, 'B')
      const [ra, rb] = await Promise.all([as('PUT', `${BASE}/network`, JSON.stringify(a)), as('PUT', `${BASE}/network`, JSON.stringify(b))])
      assert.equal(ra.statusCode, 200, ra.body)
      assert.equal(rb.statusCode, 200, rb.body)
      const back = await readBack(as)
      const winner = back.nodes[0]?.id === a.nodes[0]!.id ? a : b
      assert.deepEqual(back.nodes, winner.nodes)
      assert.deepEqual(back.edges, sortedEdges(winner.edges))
      assert.equal(await staged(h), 0)
    })

    it('the bounds are configurable: exactly the limit loads, one more node, edge or byte is a 413 naming the limit', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect, {
        SITEGRID_NETWORK_MAX_NODES: '5',
        SITEGRID_NETWORK_MAX_EDGES: '4',
        SITEGRID_NETWORK_MAX_BYTES: '1024',
      })
      const doc = tree(5)
      assert.equal((await as('PUT', `${BASE}/network`, JSON.stringify(doc))).statusCode, 200)
      const before = await snapshot(h, org)
      const nodes = await as('PUT', `${BASE}/network`, JSON.stringify(tree(6)))
      assert.equal(nodes.statusCode, 413, nodes.body)
      assert.match(nodes.json().detail, /more than 5 nodes \(SITEGRID_NETWORK_MAX_NODES\)/)
      const edges = await as(
        'PUT',
        `${BASE}/network`,
        JSON.stringify({
          nodes: doc.nodes,
          edges: [...doc.edges, { sourceId: doc.nodes[4]!.id as string, targetId: doc.nodes[0]!.id as string, edgeType: 4 }],
        }),
      )
      assert.equal(edges.statusCode, 413, edges.body)
      assert.match(edges.json().detail, /more than 4 edges \(SITEGRID_NETWORK_MAX_EDGES\)/)
      const small = JSON.stringify({ nodes: [{ id: 'X', name: 'x', nodeType: 0 }], edges: [] })
      const exact = small.slice(0, -1) + ' '.repeat(1024 - small.length) + '}'
      assert.equal(Buffer.byteLength(exact), 1024)
      const atLimit = await as('PUT', `${BASE}/network`, exact)
      assert.equal(atLimit.statusCode, 200, atLimit.body)
      const after = await snapshot(h, org)
      const over = await as('PUT', `${BASE}/network`, ` ${exact}`)
      assert.equal(over.statusCode, 413, over.body)
      assert.match(over.json().detail, /limit of 1024 bytes \(SITEGRID_NETWORK_MAX_BYTES\)/)
      assert.notEqual(after, before)
      assert.equal(await snapshot(h, org), after)
      assert.equal(await staged(h), 0)
    })

    it('staging rows a crashed process left are removed: by start-up recovery, and by the age sweep of the next load', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      const orgId = org.id as OrgId
      const orphan = (loadId: string, stagedAt: number) =>
        withOrgScope(orgId, () =>
          h.handle.db
            .insertInto('electrical_network_staging')
            .values([
              {
                org_id: orgId,
                load_id: loadId,
                kind: NODE,
                position: 0,
                site_code: 'S1',
                staged_at: stagedAt,
                node_id: 'X',
                name: 'x',
                node_type: 3,
                rated_voltage_v: null,
                rated_current_a: null,
                rated_power_kw: null,
                impedance_ohms: null,
                cable_size: null,
                cable_length_m: null,
                protection_curve: null,
                protection_pickup_a: null,
                protection_tms: null,
                description: null,
                tag_bindings: '{}',
                metadata: '{}',
                created_at: null,
                source_id: null,
                target_id: null,
                edge_type: null,
              },
              {
                org_id: orgId,
                load_id: loadId,
                kind: EDGE,
                position: 0,
                site_code: 'S1',
                staged_at: stagedAt,
                node_id: null,
                name: null,
                node_type: null,
                rated_voltage_v: null,
                rated_current_a: null,
                rated_power_kw: null,
                impedance_ohms: null,
                cable_size: null,
                cable_length_m: null,
                protection_curve: null,
                protection_pickup_a: null,
                protection_tms: null,
                description: null,
                tag_bindings: null,
                metadata: null,
                created_at: null,
                source_id: 'X',
                target_id: 'Y',
                edge_type: 0,
              },
            ])
            .execute(),
        )
      // Start-up recovery, as app.ts runs it when a process starts (its own service on the same database).
      const restarted = createElectricalService({
        handle: h.handle,
        clock: h.clock,
        sites: createSitesService({ handle: h.handle, clock: h.clock, dependents: [] }),
        networkLoad: { maxBytes: 1 << 20, maxNodes: 10, maxEdges: 10, staleAfterMs: 60_000 },
      })
      await orphan('crashed', h.clock.now() - 120_000)
      assert.equal(await withSystemScope(() => restarted.recoverNetworkStaging()), 2)
      assert.equal(await staged(h), 0)
      // The sweep at the start of a load: this organisation's loads older than twice the request timeout go.
      await orphan('crashed-2', h.clock.now())
      h.clock.advance(2 * h.config.requestTimeoutMs + 1)
      const res = await as('PUT', `${BASE}/network`, { nodes: [{ id: 'G', name: 'Grid', nodeType: 0 }], edges: [] })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(await staged(h), 0)
    })
  })
}
