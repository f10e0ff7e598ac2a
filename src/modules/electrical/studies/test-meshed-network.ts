// A densely meshed site network for the elimination-work bound of the studies (load-flow-sparse.ts,
// MAX_ELIMINATION_WORK), and, run as a script (`node --import tsx test-meshed-network.ts <boards>`), both studies
// of one in a process of its own, so that a test can bound their time: prints each study's outcome as one JSON line.
import { fileURLToPath } from 'node:url'
import { seededRandom } from '../../../../test/support/seeded-random.ts'
import { DomainError } from '../../../errors/domain-error.ts'
import { buildGraph, type ElectricalEdge, type ElectricalNode } from '../topology.ts'
import { loadFlowStudy } from './load-flow-study.ts'
import { shortCircuitStudy } from './short-circuit.ts'

/**
 * `boards` 33 kV switchboards fed from a grid infeed `G` through a tree of fan-out 4 of 1–2 km cables, each with a
 * 2–5 kW load, and `ties` tie cables between boards drawn at random (each a node `T<k>` on its far board's bus). The
 * default, 2 × `boards`, makes an average of about 6 branches a board: a mesh whose elimination fills in towards a
 * dense matrix. Every study parameter is there, so only the mesh can refuse it. Deterministic from `seed`.
 */
export function meshedSiteNetwork(boards: number, ties = 2 * boards, seed = 1): { nodes: ElectricalNode[]; edges: ElectricalEdge[] } {
  const next = seededRandom(seed)
  const board = (i: number) => (i === 0 ? 'G' : `S${i}`)
  const circuit = () => ({ cableLengthM: 1000 + 1000 * next(), study: { rOhmPerKm: 0.1, xOhmPerKm: 0.08 } })
  const nodes: ElectricalNode[] = [
    { id: 'G', name: 'Grid', nodeType: 0, ratedVoltageV: 33_000, study: { scPowerMaxMva: 500, scPowerMinMva: 400, rxRatio: 0.1 } } as ElectricalNode,
  ]
  const edges: ElectricalEdge[] = []
  for (let i = 1; i <= boards; i++) {
    nodes.push({ id: board(i), name: `Board ${i}`, nodeType: 3, ratedVoltageV: 33_000, ...circuit() } as ElectricalNode)
    nodes.push({ id: `L${i}`, name: `Load ${i}`, nodeType: 10, study: { activePowerKw: 2 + 3 * next(), powerFactor: 0.93 } } as ElectricalNode)
    edges.push({ sourceId: board(Math.floor((i - 1) / 4)), targetId: board(i), edgeType: 0 }, { sourceId: board(i), targetId: `L${i}`, edgeType: 2 })
  }
  for (let k = 0; k < ties; k++) {
    const a = 1 + Math.floor(next() * boards)
    const b = 1 + ((a + Math.floor(next() * (boards - 1))) % boards)
    nodes.push({ id: `T${k}`, name: `Tie ${k}`, nodeType: 3, ...circuit() } as ElectricalNode)
    edges.push({ sourceId: board(a), targetId: `T${k}`, edgeType: 0 }, { sourceId: `T${k}`, targetId: board(b), edgeType: 2 })
  }
  nodes.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
  return { nodes, edges }
}

/** A study's outcome as a test reads it: the answer's size, or the problem's status, code, detail and extensions. */
function outcome(run: () => { buses: unknown[] }) {
  try {
    return { buses: run().buses.length }
  } catch (err) {
    if (!(err instanceof DomainError)) throw err
    return { status: err.status, code: err.code, detail: err.message, extensions: err.extensions }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { nodes, edges } = meshedSiteNetwork(Number(process.argv[2]))
  const graph = buildGraph(nodes, edges)
  const loadFlow = outcome(() => loadFlowStudy(graph))
  const shortCircuit = outcome(() => shortCircuitStudy(graph, { lvTolerancePercent: 10, fHz: 50 }))
  process.stdout.write(`${JSON.stringify({ loadFlow, shortCircuit })}\n`)
}
