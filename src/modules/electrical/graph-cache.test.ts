import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { connectDatabase, type DatabaseHandle } from '../../db/connect.ts'
import { withOrgScope } from '../../db/tenant-scope.ts'
import type { OrgId } from '../../ids.ts'
import { sleep, testDialects } from '../../../test/harness.ts'
import { createSitesService } from '../sites/service.ts'
import { createElectricalService } from './service.ts'
import { GraphCache } from './service/graph-cache.ts'
import { buildGraph } from './topology.ts'
import { addEdge, addNode, BASE, electricalSetup } from './test-support.ts'

/** A stand-in handle whose generation the test moves, as another process's announcement would. */
function fakeHandle() {
  let generation = 0
  return {
    handle: { generation: () => generation } as unknown as DatabaseHandle,
    move: () => {
      generation++
    },
  }
}

const graphOf = (ids: string[]) =>
  buildGraph(
    ids.map((id) => ({ id, nodeType: 3 })),
    [],
  )

describe('graph cache', () => {
  it('serves the same graph until the site is forgotten or the generation moves; other sites stay cached', async () => {
    const { handle, move } = fakeHandle()
    const cache = new GraphCache(handle)
    let loads = 0
    const load = (ids: string[]) => async () => {
      loads++
      return graphOf(ids)
    }
    const first = await cache.get('org_a', 'S1', 'lean', load(['A']))
    assert.equal(await cache.get('org_a', 'S1', 'lean', load(['B'])), first)
    await cache.get('org_a', 'S2', 'lean', load(['C']))
    assert.equal(loads, 2)
    cache.forget('org_a', 'S1')
    assert.deepEqual(
      (await cache.get('org_a', 'S1', 'lean', load(['B']))).nodes.map((n) => n.id),
      ['B'],
    )
    await cache.get('org_a', 'S2', 'lean', load(['X']))
    assert.equal(loads, 3, 'S2 was not forgotten')
    move()
    assert.deepEqual(
      (await cache.get('org_a', 'S2', 'lean', load(['D']))).nodes.map((n) => n.id),
      ['D'],
    )
    assert.equal(loads, 4)
  })

  it('a graph read while a write of its site was in flight is answered but not kept', async () => {
    const { handle } = fakeHandle()
    const cache = new GraphCache(handle)
    const stale = await cache.get('org_a', 'S1', 'lean', async () => {
      cache.forget('org_a', 'S1') // the write commits while this read is under way
      return graphOf(['old'])
    })
    assert.deepEqual(
      stale.nodes.map((n) => n.id),
      ['old'],
    )
    assert.deepEqual(
      (await cache.get('org_a', 'S1', 'lean', async () => graphOf(['new']))).nodes.map((n) => n.id),
      ['new'],
    )
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: topology answers from the graph cache`, () => {
    it('every kind of network write in this process is seen by the next topology answer', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const islands = async () => (await as('GET', `${BASE}/topology/islands`)).json() as { islandCount: number; islands: Array<{ nodeIds: string[] }> }
      await addNode(as, 'G', 0)
      await addNode(as, 'A', 3)
      assert.equal((await islands()).islandCount, 2)
      await addEdge(as, 'G', 'A')
      assert.equal((await islands()).islandCount, 1, 'edge created')
      await addNode(as, 'B', 3)
      assert.equal((await islands()).islandCount, 2, 'node created')
      assert.equal((await as('PUT', `${BASE}/nodes/B`, { nodeType: 0 })).statusCode, 200)
      assert.equal((await as('GET', `${BASE}/nodes/B/supply-paths`)).json().paths.length, 1, 'node updated: B is now a supply')
      assert.equal((await as('DELETE', `${BASE}/edges?source=G&target=A&type=0`)).statusCode, 204)
      assert.equal((await islands()).islandCount, 3, 'edge deleted')
      assert.equal((await as('DELETE', `${BASE}/nodes/B`)).statusCode, 204)
      assert.equal((await islands()).islandCount, 2, 'node deleted')
      const put = await as('PUT', `${BASE}/network`, { nodes: [{ id: 'Z', name: 'Z', nodeType: 0 }], edges: [] })
      assert.equal(put.statusCode, 200, put.body)
      assert.deepEqual(
        (await islands()).islands.map((i) => i.nodeIds),
        [['Z']],
        'network replaced',
      )
    })

    it("a write made through another process's connection is seen here (generation), and repeated questions hit the cache", async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      // The "other process": its own handle (connection, listener) and service on the same database.
      const handle = await connectDatabase(h.config.databaseUrl, { poolSize: 2 })
      t.after(() => handle.close())
      const sites = createSitesService({ handle, clock: h.clock, dependents: [] })
      const other = createElectricalService({ handle, clock: h.clock, sites })
      const orgId = org.id as OrgId
      const ask = () => withOrgScope(orgId, () => other.islands(orgId, 'S1'))
      await addNode(as, 'G', 0)
      assert.equal((await ask()).islandCount, 1)
      assert.equal((await ask()).islandCount, 1)
      assert.equal(other.graphCacheStats().hits, 1)
      await addNode(as, 'B', 3) // written by the application, not by `other`
      let seen = 0
      for (let i = 0; i < 100 && seen !== 2; i++) {
        seen = (await ask()).islandCount
        if (seen !== 2) await sleep(50) // PostgreSQL: the notification arrives just after the commit
      }
      assert.equal(seen, 2)
    })
  })
}
