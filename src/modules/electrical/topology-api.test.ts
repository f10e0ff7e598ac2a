import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { addEdge, BASE, electricalSetup, loadNetwork as load, RADIAL } from './test-support.ts'

/** A ring main: grid → SB1, ring SB1–SB2–SB3–SB4–SB1, a generator on SB3, and a dead island X1–X2. */
const MESH = {
  nodes: [
    { id: 'G', name: 'Grid', nodeType: 0 },
    { id: 'GEN', name: 'Standby generator', nodeType: 1 },
    { id: 'SB1', name: 'Ring 1', nodeType: 3 },
    { id: 'SB2', name: 'Ring 2', nodeType: 3 },
    { id: 'SB3', name: 'Ring 3', nodeType: 3 },
    { id: 'SB4', name: 'Ring 4', nodeType: 3 },
    { id: 'X1', name: 'Dead 1', nodeType: 3 },
    { id: 'X2', name: 'Dead 2', nodeType: 10 },
  ],
  edges: [
    { sourceId: 'G', targetId: 'SB1', edgeType: 0 },
    { sourceId: 'SB1', targetId: 'SB2', edgeType: 0 },
    { sourceId: 'SB2', targetId: 'SB3', edgeType: 0 },
    { sourceId: 'SB3', targetId: 'SB4', edgeType: 0 },
    { sourceId: 'SB4', targetId: 'SB1', edgeType: 0 },
    { sourceId: 'GEN', targetId: 'SB3', edgeType: 0 },
    { sourceId: 'X1', targetId: 'X2', edgeType: 0 },
  ],
}

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical topology`, () => {
    it('radial feeder: one supplied island plus the unconnected node, no loop, the supply path back to the grid', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await load(as, RADIAL)
      const islands = (await as('GET', `${BASE}/topology/islands`)).json()
      assert.equal(islands.islandCount, 2)
      assert.equal(islands.unsuppliedIslandCount, 1)
      assert.deepEqual(islands.islands[0].supplyIds, ['G'])
      assert.equal(islands.islands[0].nodeCount, 9)
      assert.deepEqual([...islands.islands[0].nodeIds].sort(), ['CB1', 'CB2', 'CB3', 'G', 'M1', 'M2', 'MCC', 'MSB', 'TX'])
      assert.deepEqual(islands.islands[1], { nodeCount: 1, hasSupply: false, supplyIds: [], nodeIds: ['ISO'] })
      assert.deepEqual((await as('GET', `${BASE}/topology/isolated`)).json(), { count: 1, nodeIds: ['ISO'] })
      const loops = (await as('GET', `${BASE}/topology/loops`)).json()
      assert.deepEqual(loops, { isRadial: true, loopCount: 0, loops: [], isTruncated: false })
      const path = (await as('GET', `${BASE}/nodes/M1/supply-paths`)).json()
      assert.equal(path.isSupplied, true)
      assert.equal(path.paths.length, 1)
      assert.deepEqual(path.paths[0].nodeIds, ['M1', 'CB2', 'MCC', 'CB1', 'MSB', 'TX', 'G'])
      assert.equal(path.paths[0].hops, 6)
      assert.deepEqual(path.paths[0].edges[0], { index: 1, sourceId: 'CB2', targetId: 'M1', edgeType: 0 })
      assert.deepEqual((await as('GET', `${BASE}/nodes/ISO/supply-paths`)).json(), { nodeId: 'ISO', isSupplied: false, paths: [] })
      assert.deepEqual((await as('GET', `${BASE}/nodes/G/supply-paths`)).json().paths[0].nodeIds, ['G'], 'a supply is its own zero-hop path')
      assert.equal((await as('GET', `${BASE}/nodes/NOPE/supply-paths`)).statusCode, 404)
    })

    it('mesh: the ring is one loop, both supplies are found nearest first, the dead island is reported', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await load(as, MESH)
      const islands = (await as('GET', `${BASE}/topology/islands`)).json()
      assert.equal(islands.islandCount, 2)
      assert.deepEqual(islands.islands[0].supplyIds, ['G', 'GEN'])
      assert.equal(islands.islands[0].nodeCount, 6)
      assert.deepEqual(islands.islands[1], { nodeCount: 2, hasSupply: false, supplyIds: [], nodeIds: ['X1', 'X2'] })
      assert.deepEqual((await as('GET', `${BASE}/topology/isolated`)).json(), { count: 0, nodeIds: [] })
      const loops = (await as('GET', `${BASE}/topology/loops`)).json()
      assert.equal(loops.isRadial, false)
      assert.equal(loops.loopCount, 1)
      assert.deepEqual([...loops.loops[0].nodeIds].sort(), ['SB1', 'SB2', 'SB3', 'SB4'])
      assert.equal(loops.loops[0].edges.length, 4)
      assert.ok(
        ['SB2-SB3', 'SB3-SB4'].includes(`${loops.loops[0].closingEdge.sourceId}-${loops.loops[0].closingEdge.targetId}`),
        'the open point lies away from the grid infeed',
      )
      const paths = (await as('GET', `${BASE}/nodes/SB3/supply-paths`)).json()
      assert.deepEqual(
        paths.paths.map((p: { supplyId: string; hops: number }) => [p.supplyId, p.hops]),
        [
          ['GEN', 1],
          ['G', 3],
        ],
      )
      assert.equal(paths.paths[1].nodeIds[0], 'SB3')
      assert.equal(paths.paths[1].nodeIds.at(-1), 'G')
      assert.equal((await as('GET', `${BASE}/nodes/X2/supply-paths`)).json().isSupplied, false)
      // A bus tie in parallel with a cable closes a second, two-node loop; maxLoops limits the listing.
      await addEdge(as, 'SB1', 'SB2', 4)
      const two = (await as('GET', `${BASE}/topology/loops?maxLoops=1`)).json()
      assert.equal(two.loopCount, 2)
      assert.equal(two.loops.length, 1)
      assert.equal(two.isTruncated, true)
      assert.equal((await as('GET', `${BASE}/topology/loops?maxLoops=-1`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/topology/loops?maxLoops=10001`)).statusCode, 400)
      assert.equal((await as('GET', `${BASE}/topology/loops?maxLoops=10000`)).statusCode, 200)
    })

    it('an empty network answers empty questions', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      assert.deepEqual((await as('GET', `${BASE}/topology/islands`)).json(), { islandCount: 0, unsuppliedIslandCount: 0, islands: [] })
      assert.deepEqual((await as('GET', `${BASE}/topology/loops`)).json(), { isRadial: true, loopCount: 0, loops: [], isTruncated: false })
    })
  })
}
