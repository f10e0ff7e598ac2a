import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { EdgeType as E, NodeType as N } from './codes.ts'
import { InvalidNetwork, NodeNotInNetwork, buildGraph, findIslands, findIsolatedNodes, findLoops, findSupplyPaths } from './topology.ts'
import type { ElectricalEdge, ElectricalNode, Graph } from './topology.ts'

const node = (id: string, nodeType: number): ElectricalNode => ({ id, nodeType })
const edge = (sourceId: string, targetId: string, edgeType: number = E.Cable): ElectricalEdge => ({ sourceId, targetId, edgeType })

// Grid → 33/6.6 kV transformer → switchboard → breaker → motor, and a second chain through an MCC.
const radial = {
  nodes: [
    node('GRID', N.UtilitySupply),
    node('TX1', N.PowerTransformer),
    node('SWB1', N.Switchboard),
    node('CB1', N.CircuitBreaker),
    node('M1', N.Motor),
    node('CB2', N.CircuitBreaker),
    node('TX2', N.PowerTransformer),
    node('MCC1', N.MotorControlCentre),
    node('FS1', N.FuseSwitch),
    node('M2', N.Motor),
  ],
  edges: [
    edge('GRID', 'TX1'),
    edge('TX1', 'SWB1', E.TransformerWinding),
    edge('SWB1', 'CB1', E.BusbarLink),
    edge('CB1', 'M1'),
    edge('SWB1', 'CB2', E.BusbarLink),
    edge('CB2', 'TX2'),
    edge('TX2', 'MCC1', E.TransformerWinding),
    edge('MCC1', 'FS1', E.BusbarLink),
    edge('FS1', 'M2'),
  ],
}

// Ring main fed at A: S–A, A–B, B–C, C–D, D–A.
const ring = {
  nodes: [node('S', N.UtilitySupply), node('A', N.Switchboard), node('B', N.Switchboard), node('C', N.Switchboard), node('D', N.Switchboard)],
  edges: [edge('S', 'A'), edge('A', 'B'), edge('B', 'C'), edge('C', 'D'), edge('D', 'A')],
}

describe('buildGraph', () => {
  it('rejects unknown endpoints, self-loops, duplicate ids, bad codes and repeated triples, listing each', () => {
    const nodes = [node('A', N.Switchboard), node('A', N.Motor), node('B', 14), node('C', 1.5)]
    const edges = [edge('A', 'X'), edge('B', 'B'), edge('A', 'B', 5), edge('A', 'B'), edge('A', 'B')]
    assert.throws(
      () => buildGraph(nodes, edges),
      (err: unknown) => {
        assert.ok(err instanceof InvalidNetwork)
        assert.equal(err.code, 'UnprocessableEntity')
        assert.deepEqual(
          err.errors?.map((p) => p.pointer),
          ['/nodes/1/id', '/nodes/2/nodeType', '/nodes/3/nodeType', '/edges/0/targetId', '/edges/1', '/edges/2/edgeType', '/edges/4'],
        )
        assert.equal(err.problemCount, 7)
        return true
      },
    )
  })

  it('accepts the same two nodes joined by edges of different types (parallel edges)', () => {
    const graph = buildGraph([node('A', N.Switchboard), node('B', N.Switchboard)], [edge('A', 'B', E.Cable), edge('A', 'B', E.BusTie), edge('B', 'A', E.Cable)])
    assert.equal(graph.edges.length, 3)
  })
})

describe('islands and isolated nodes', () => {
  const graph = buildGraph(
    [node('S1', N.UtilitySupply), node('X', N.Switchboard), node('L1', N.FeederLoad), node('Y', N.Motor), node('L2', N.FeederLoad), node('Z', N.Motor)],
    [edge('S1', 'X'), edge('X', 'Y'), edge('L1', 'L2')],
  )

  it('splits two islands and an isolated node, largest first, flagging which has a supply', () => {
    assert.deepEqual(findIslands(graph), [
      { nodeIds: ['S1', 'X', 'Y'], supplyIds: ['S1'], hasSupply: true },
      { nodeIds: ['L1', 'L2'], supplyIds: [], hasSupply: false },
      { nodeIds: ['Z'], supplyIds: [], hasSupply: false },
    ])
  })

  it('reports nodes with no edge as isolated', () => {
    assert.deepEqual(findIsolatedNodes(graph), ['Z'])
  })

  it('says a node in an island without supply has no supply path', () => {
    assert.deepEqual(findSupplyPaths(graph, 'L2'), { nodeId: 'L2', isSupplied: false, paths: [] })
  })
})

describe('supply paths', () => {
  it('walks a radial feeder from the motor back through MCC, transformers and switchboard to the grid', () => {
    const result = findSupplyPaths(buildGraph(radial.nodes, radial.edges), 'M2')
    assert.equal(result.isSupplied, true)
    assert.equal(result.paths.length, 1)
    const [path] = result.paths
    assert.deepEqual(path!.nodeIds, ['M2', 'FS1', 'MCC1', 'TX2', 'CB2', 'SWB1', 'TX1', 'GRID'])
    assert.deepEqual(
      path!.edges.map((e) => e.index),
      [8, 7, 6, 5, 4, 1, 0],
    )
    assert.equal(path!.hops, 7)
  })

  it('gives one shortest path to each supply, nearest first, and a zero-hop path for a supply itself', () => {
    const graph = buildGraph(
      [node('G1', N.UtilitySupply), node('B1', N.Switchboard), node('B2', N.Switchboard), node('GEN', N.Generator)],
      [edge('G1', 'B1'), edge('B1', 'B2', E.BusTie), edge('GEN', 'B2')],
    )
    assert.deepEqual(
      findSupplyPaths(graph, 'B2').paths.map((p) => [p.supplyId, p.nodeIds]),
      [
        ['GEN', ['B2', 'GEN']],
        ['G1', ['B2', 'B1', 'G1']],
      ],
    )
    assert.deepEqual(findSupplyPaths(graph, 'G1').paths[0], { supplyId: 'G1', hops: 0, nodeIds: ['G1'], edges: [] })
  })

  it('takes the shorter way round a ring main', () => {
    const path = findSupplyPaths(buildGraph(ring.nodes, ring.edges), 'D').paths[0]!
    assert.deepEqual(path.nodeIds, ['D', 'A', 'S'])
  })

  it('answers the uniform NotFound for a node id that is not in the network, without echoing the id', () => {
    assert.throws(
      () => findSupplyPaths(buildGraph(ring.nodes, ring.edges), 'nope'),
      (err: unknown) => err instanceof NodeNotInNetwork && err.code === 'NotFound' && !err.message.includes('nope'),
    )
  })
})

describe('loops', () => {
  it('finds no loop in a radial feeder', () => {
    assert.deepEqual(findLoops(buildGraph(radial.nodes, radial.edges)), { isRadial: true, loopCount: 0, loops: [], isTruncated: false })
  })

  it('closes a ring main at the edge farthest from the infeed and lists the ring nodes in order', () => {
    const report = findLoops(buildGraph(ring.nodes, ring.edges))
    assert.equal(report.isRadial, false)
    assert.equal(report.loopCount, 1)
    const [loop] = report.loops
    assert.deepEqual(loop!.closingEdge, { index: 3, sourceId: 'C', targetId: 'D', edgeType: E.Cable })
    assert.deepEqual(loop!.nodeIds, ['C', 'B', 'A', 'D'])
    assert.deepEqual(
      loop!.edges.map((e) => e.index),
      [2, 1, 4, 3],
    )
  })

  it('counts parallel edges between the same two nodes as a two-node loop', () => {
    const report = findLoops(buildGraph([node('A', N.Switchboard), node('B', N.Switchboard)], [edge('A', 'B', E.Cable), edge('A', 'B', E.BusTie)]))
    assert.equal(report.loopCount, 1)
    assert.deepEqual(report.loops[0]!.nodeIds, ['A', 'B'])
    assert.deepEqual(
      report.loops[0]!.edges.map((e) => e.index),
      [0, 1],
    )
  })

  it('lists at most maxLoops loops and says the list is truncated', () => {
    const edges = [edge('A', 'B', 0), edge('A', 'B', 1), edge('A', 'B', 2), edge('A', 'B', 3)]
    const report = findLoops(buildGraph([node('A', N.Switchboard), node('B', N.Switchboard)], edges), { maxLoops: 2 })
    assert.equal(report.loopCount, 3)
    assert.equal(report.loops.length, 2)
    assert.equal(report.isTruncated, true)
  })
})

const networkArb = fc.integer({ min: 1, max: 25 }).chain((n) =>
  fc.record({
    types: fc.array(fc.integer({ min: 0, max: 13 }), { minLength: n, maxLength: n }),
    // The target is drawn as an offset from the source, so a self-loop cannot be generated (n = 1: no edges).
    edges: fc.uniqueArray(
      fc
        .tuple(fc.nat(n - 1), fc.integer({ min: 1, max: Math.max(1, n - 1) }), fc.integer({ min: 0, max: 4 }))
        .map(([s, d, k]): [number, number, number] => [s, (s + d) % n, k]),
      { maxLength: n === 1 ? 0 : 2 * n, selector: ([s, t, k]) => `${s} ${t} ${k}` },
    ),
  }),
)

function toGraph({ types, edges }: { types: number[]; edges: [number, number, number][] }): Graph {
  return buildGraph(
    types.map((t, i) => node(`n${i}`, t)),
    edges.map(([s, t, k]) => edge(`n${s}`, `n${t}`, k)),
  )
}

const joins = (e: ElectricalEdge, a: string, b: string): boolean => (e.sourceId === a && e.targetId === b) || (e.sourceId === b && e.targetId === a)

describe('properties on random networks', () => {
  it('islands partition the node set and no edge crosses two islands', () => {
    fc.assert(
      fc.property(networkArb, (spec) => {
        const graph = toGraph(spec)
        const islands = findIslands(graph)
        const islandOf = new Map<string, number>()
        islands.forEach((island, k) =>
          island.nodeIds.forEach((id) => {
            assert.equal(islandOf.has(id), false, `${id} in two islands`)
            islandOf.set(id, k)
          }),
        )
        assert.equal(islandOf.size, graph.nodes.length)
        for (const e of graph.edges) assert.equal(islandOf.get(e.sourceId), islandOf.get(e.targetId))
      }),
    )
  })

  it('every supply path is a walk along real edges from the node to a supply, shortest first', () => {
    fc.assert(
      fc.property(networkArb, fc.nat(), (spec, pick) => {
        const graph = toGraph(spec)
        const start = graph.nodes[pick % graph.nodes.length]!.id
        const result = findSupplyPaths(graph, start)
        const island = findIslands(graph).find((i) => i.nodeIds.includes(start))!
        assert.deepEqual(result.paths.map((p) => p.supplyId).sort(), [...island.supplyIds].sort())
        for (const path of result.paths) {
          assert.equal(path.nodeIds[0], start)
          assert.equal(path.nodeIds.at(-1), path.supplyId)
          assert.equal(path.edges.length, path.nodeIds.length - 1)
          assert.equal(path.hops, path.edges.length)
          path.edges.forEach((ref, i) => {
            assert.deepEqual(graph.edges[ref.index], { sourceId: ref.sourceId, targetId: ref.targetId, edgeType: ref.edgeType })
            assert.ok(joins(ref, path.nodeIds[i]!, path.nodeIds[i + 1]!))
          })
        }
        for (let i = 1; i < result.paths.length; i++) assert.ok(result.paths[i - 1]!.hops <= result.paths[i]!.hops)
      }),
    )
  })

  it('loop count equals edges − nodes + islands, and each loop is a closed walk of distinct nodes', () => {
    fc.assert(
      fc.property(networkArb, (spec) => {
        const graph = toGraph(spec)
        const report = findLoops(graph)
        assert.equal(report.loopCount, graph.edges.length - graph.nodes.length + findIslands(graph).length)
        for (const loop of report.loops) {
          const ids = loop.nodeIds
          assert.equal(new Set(ids).size, ids.length)
          assert.equal(loop.edges.length, ids.length)
          assert.deepEqual(loop.edges.at(-1), loop.closingEdge)
          loop.edges.forEach((ref, i) => assert.ok(joins(ref, ids[i]!, ids[(i + 1) % ids.length]!)))
        }
      }),
    )
  })
})
