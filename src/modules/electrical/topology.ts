import { domainError, NotFound } from '../../errors/domain-error.ts'
import { EDGE_TYPES, NODE_TYPES, isSupplyNodeType } from './codes.ts'

// Lookups copied into module constants: the hot loops below then touch no imported binding.
const NODE_TYPE_COUNT = NODE_TYPES.length
const EDGE_TYPE_COUNT = EDGE_TYPES.length
const SUPPLY_BY_CODE = Uint8Array.from(NODE_TYPES, (t) => (isSupplyNodeType(t.code) ? 1 : 0))
const isCode = (value: unknown, count: number): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < count

/** A node as stored (spec 2.5). Only `id` and `nodeType` matter to topology; the rest rides along. */
export interface ElectricalNode {
  readonly id: string
  readonly nodeType: number
  readonly name?: string | null
  readonly ratedVoltageV?: number | null
  readonly ratedCurrentA?: number | null
  readonly ratedPowerKw?: number | null
  readonly impedanceOhms?: number | null
  readonly cableSize?: string | null
  readonly cableLengthM?: number | null
  readonly protectionCurve?: string | null
  readonly protectionPickupA?: number | null
  readonly protectionTms?: number | null
  /** Study parameters (schemas.ts `NodeStudy`), read by the studies. */
  readonly study?: Readonly<Record<string, number | string | undefined>>
}

/** An edge (spec 2.6), identified by the triple (sourceId, targetId, edgeType). Topology ignores direction. */
export interface ElectricalEdge {
  readonly sourceId: string
  readonly targetId: string
  readonly edgeType: number
}

/**
 * Validated network with integer-indexed adjacency in CSR form: the neighbours of node i are
 * `adjNode[adjStart[i] .. adjStart[i+1])`, reached through edges `adjEdge[...]` (indexes into `edges`).
 * Typed arrays and no recursion keep 50 000-node queries in milliseconds and off the call stack.
 */
export interface Graph {
  readonly nodes: readonly ElectricalNode[]
  readonly edges: readonly ElectricalEdge[]
  readonly indexOf: ReadonlyMap<string, number>
  readonly edgeSource: Int32Array
  readonly edgeTarget: Int32Array
  readonly isSupply: Uint8Array
  readonly adjStart: Int32Array
  readonly adjNode: Int32Array
  readonly adjEdge: Int32Array
}

export interface NetworkProblem {
  readonly pointer: string
  readonly message: string
}

const MAX_PROBLEMS_LISTED = 100

/**
 * The node and edge arrays do not form a valid network (422). `errors` lists up to 100 problems, each with a
 * JSON pointer into `{ nodes, edges }`; the `problemCount` extension counts them all.
 */
export class InvalidNetwork extends domainError('UnprocessableEntity') {
  constructor(
    readonly problems: readonly NetworkProblem[],
    readonly problemCount: number,
  ) {
    super(`The electrical network has ${problemCount} problem(s).`, {
      errors: problems.map((p) => ({ in: 'body' as const, ...p })),
      extensions: { problemCount },
    })
    this.name = 'InvalidNetwork'
  }
}

/** The uniform 404: the id is kept for logs, never put in the answer. */
export class NodeNotInNetwork extends NotFound {
  constructor(readonly nodeId: string) {
    super()
    this.name = 'NodeNotInNetwork'
  }
}

/** Indexes and validates a network; throws InvalidNetwork listing every bad id, code, endpoint and self-loop. */
export function buildGraph(nodes: readonly ElectricalNode[], edges: readonly ElectricalEdge[]): Graph {
  const problems: NetworkProblem[] = []
  let problemCount = 0
  const report = (pointer: string, message: string): void => {
    problemCount++
    if (problems.length < MAX_PROBLEMS_LISTED) problems.push({ pointer, message })
  }

  const n = nodes.length
  const indexOf = new Map<string, number>()
  const isSupply = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!
    if (typeof node.id !== 'string' || node.id === '') report(`/nodes/${i}/id`, `Node ${i} has no id.`)
    else if (indexOf.has(node.id)) report(`/nodes/${i}/id`, `Duplicate node id ${JSON.stringify(node.id)}.`)
    else indexOf.set(node.id, i)
    if (!isCode(node.nodeType, NODE_TYPE_COUNT)) {
      report(`/nodes/${i}/nodeType`, `nodeType must be an integer 0 to ${NODE_TYPE_COUNT - 1}.`)
    } else {
      isSupply[i] = SUPPLY_BY_CODE[node.nodeType]!
    }
  }

  const m = edges.length
  const edgeSource = new Int32Array(m)
  const edgeTarget = new Int32Array(m)
  const degree = new Int32Array(n)
  const usable = new Uint8Array(m)
  for (let e = 0; e < m; e++) {
    const edge = edges[e]!
    const s = indexOf.get(edge.sourceId)
    const t = indexOf.get(edge.targetId)
    if (s === undefined) report(`/edges/${e}/sourceId`, `Edge ${e} starts at unknown node ${JSON.stringify(edge.sourceId)}.`)
    if (t === undefined) report(`/edges/${e}/targetId`, `Edge ${e} ends at unknown node ${JSON.stringify(edge.targetId)}.`)
    const typeOk = isCode(edge.edgeType, EDGE_TYPE_COUNT)
    if (!typeOk) report(`/edges/${e}/edgeType`, `edgeType must be an integer 0 to ${EDGE_TYPE_COUNT - 1}.`)
    if (s === undefined || t === undefined || !typeOk) continue
    if (s === t) {
      report(`/edges/${e}`, `Edge ${e} connects node ${JSON.stringify(edge.sourceId)} to itself.`)
      continue
    }
    usable[e] = 1
    edgeSource[e] = s
    edgeTarget[e] = t
    degree[s]!++
    degree[t]!++
  }
  reportRepeatedTriples(edges, usable, edgeSource, edgeTarget, n, report)
  if (problemCount > 0) throw new InvalidNetwork(problems, problemCount)

  const adjStart = new Int32Array(n + 1)
  for (let i = 0; i < n; i++) adjStart[i + 1] = adjStart[i]! + degree[i]!
  const fill = adjStart.slice(0, n)
  const adjNode = new Int32Array(2 * m)
  const adjEdge = new Int32Array(2 * m)
  for (let e = 0; e < m; e++) {
    const s = edgeSource[e]!
    const t = edgeTarget[e]!
    let k = fill[s]!++
    adjNode[k] = t
    adjEdge[k] = e
    k = fill[t]!++
    adjNode[k] = s
    adjEdge[k] = e
  }
  return { nodes, edges, indexOf, edgeSource, edgeTarget, isSupply, adjStart, adjNode, adjEdge }
}

/**
 * Spec 2.6 identifies an edge by (source, target, type), so a repeat is ambiguous. Edges are bucketed by
 * source (counting sort, input order kept) and each (target, type) stamped with its source: O(n + m), no hashing.
 */
function reportRepeatedTriples(
  edges: readonly ElectricalEdge[],
  usable: Uint8Array,
  edgeSource: Int32Array,
  edgeTarget: Int32Array,
  n: number,
  report: (pointer: string, message: string) => void,
): void {
  const m = edges.length
  const start = new Int32Array(n + 1)
  for (let e = 0; e < m; e++) if (usable[e] === 1) start[edgeSource[e]! + 1]!++
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!
  const bySource = new Int32Array(start[n]!)
  const fill = start.slice(0, n)
  for (let e = 0; e < m; e++) if (usable[e] === 1) bySource[fill[edgeSource[e]!]!++] = e
  const stamp = new Int32Array(n * EDGE_TYPE_COUNT)
  const repeated: number[] = []
  for (let s = 0; s < n; s++) {
    for (let k = start[s]!; k < start[s + 1]!; k++) {
      const e = bySource[k]!
      const key = edgeTarget[e]! * EDGE_TYPE_COUNT + edges[e]!.edgeType
      if (stamp[key] === s + 1) repeated.push(e)
      else stamp[key] = s + 1
    }
  }
  for (const e of repeated.sort((a, b) => a - b)) {
    report(`/edges/${e}`, `Edge ${e} repeats the triple (source, target, type) of an earlier edge.`)
  }
}

export interface EdgeRef {
  readonly index: number
  readonly sourceId: string
  readonly targetId: string
  readonly edgeType: number
}

export function edgeRef(graph: Graph, e: number): EdgeRef {
  const edge = graph.edges[e]!
  return { index: e, sourceId: edge.sourceId, targetId: edge.targetId, edgeType: edge.edgeType }
}

/** Connected-component label per node index (0-based, in order of each component's lowest node index). */
export function componentLabels(graph: Graph): { labels: Int32Array; count: number } {
  const n = graph.nodes.length
  const { adjStart, adjNode } = graph
  const labels = new Int32Array(n).fill(-1)
  const queue = new Int32Array(n)
  let count = 0
  for (let root = 0; root < n; root++) {
    if (labels[root] !== -1) continue
    labels[root] = count
    let head = 0
    let tail = 0
    queue[tail++] = root
    while (head < tail) {
      const u = queue[head++]!
      for (let k = adjStart[u]!, end = adjStart[u + 1]!; k < end; k++) {
        const v = adjNode[k]!
        if (labels[v] === -1) {
          labels[v] = count
          queue[tail++] = v
        }
      }
    }
    count++
  }
  return { labels, count }
}

export interface Island {
  readonly nodeIds: string[]
  readonly supplyIds: string[]
  readonly hasSupply: boolean
}

/** Connected components, largest first (ties: the one holding the earlier node first). */
export function findIslands(graph: Graph): Island[] {
  const { labels, count } = componentLabels(graph)
  const islands = Array.from({ length: count }, () => ({ nodeIds: [] as string[], supplyIds: [] as string[] }))
  for (let i = 0; i < labels.length; i++) {
    const island = islands[labels[i]!]!
    const id = graph.nodes[i]!.id
    island.nodeIds.push(id)
    if (graph.isSupply[i] === 1) island.supplyIds.push(id)
  }
  // Array.prototype.sort is stable, so equal sizes keep discovery order.
  return islands.map((island) => ({ ...island, hasSupply: island.supplyIds.length > 0 })).sort((a, b) => b.nodeIds.length - a.nodeIds.length)
}

/** Nodes with no edge at all. */
export function findIsolatedNodes(graph: Graph): string[] {
  const isolated: string[] = []
  for (let i = 0; i < graph.nodes.length; i++) {
    if (graph.adjStart[i] === graph.adjStart[i + 1]) isolated.push(graph.nodes[i]!.id)
  }
  return isolated
}

export interface SupplyPath {
  readonly supplyId: string
  readonly hops: number
  /** From the queried node (first) to the supply (last). */
  readonly nodeIds: string[]
  /** `edges[i]` joins `nodeIds[i]` and `nodeIds[i + 1]`. */
  readonly edges: EdgeRef[]
}

/** Supply paths listed at most in one answer. */
export const MAX_SUPPLY_PATHS = 1000
/**
 * Node ids listed at most over all the paths of one answer (supply paths, loops), as many as the default network
 * holds (SITEGRID_NETWORK_MAX_NODES): a chain of n supplies would otherwise list n²/2. The first path or loop is
 * always listed whole, however long.
 */
export const MAX_LISTED_PATH_NODES = 100_000

export interface SupplyPathResult {
  readonly nodeId: string
  readonly isSupplied: boolean
  /**
   * One shortest path per reachable supply, nearest first; empty when the node has no supply. At most
   * `MAX_SUPPLY_PATHS` paths and `MAX_LISTED_PATH_NODES` node ids in all (the nearest path always).
   */
  readonly paths: SupplyPath[]
  /** Only when paths were left out: every supply reachable from the node. */
  readonly supplyCount?: number
  /** Only when paths were left out: true. */
  readonly isTruncated?: true
}

/** `supplySearch`'s `stopAt` for a search that ends at the first (nearest) supply. */
const NEAREST_SUPPLY = -2

/**
 * Breadth-first search from `start` over the whole island, or until node `stopAt` (or with `NEAREST_SUPPLY` any
 * supply) is dequeued: the BFS tree by parent node and edge, the hop count of each node reached, and the supplies in
 * the order dequeued (nearest first). Neighbours are taken in edge order, so among equal-length paths the one through
 * earlier-listed edges wins; stopping early changes no path to a supply already reached.
 */
function supplySearch(graph: Graph, start: number, stopAt = -1) {
  const n = graph.nodes.length
  const { adjStart, adjNode, adjEdge, isSupply } = graph
  const parent = new Int32Array(n).fill(-1)
  const parentEdge = new Int32Array(n).fill(-1)
  const hops = new Int32Array(n)
  const visited = new Uint8Array(n)
  const queue = new Int32Array(n)
  const reached: number[] = []
  let head = 0
  let tail = 0
  queue[tail++] = start
  visited[start] = 1
  while (head < tail) {
    const u = queue[head++]!
    if (isSupply[u] === 1) {
      reached.push(u)
      if (stopAt === NEAREST_SUPPLY) break
    }
    if (u === stopAt) break
    for (let k = adjStart[u]!, end = adjStart[u + 1]!; k < end; k++) {
      const v = adjNode[k]!
      if (visited[v] === 1) continue
      visited[v] = 1
      parent[v] = u
      parentEdge[v] = adjEdge[k]!
      hops[v] = hops[u]! + 1
      queue[tail++] = v
    }
  }
  return { parent, parentEdge, hops, reached }
}

/** The path from the search's start to `supply`, up the BFS tree. */
function pathTo(graph: Graph, parent: Int32Array, parentEdge: Int32Array, supply: number): SupplyPath {
  const nodeIds: string[] = []
  const edges: EdgeRef[] = []
  for (let v = supply; v !== -1; v = parent[v]!) {
    nodeIds.push(graph.nodes[v]!.id)
    if (parentEdge[v] !== -1) edges.push(edgeRef(graph, parentEdge[v]!))
  }
  nodeIds.reverse()
  edges.reverse()
  return { supplyId: graph.nodes[supply]!.id, hops: edges.length, nodeIds, edges }
}

/**
 * Shortest path (by hops, undirected) from a node to every supply in its island, by one BFS.
 * Among equal-length paths the one through earlier-listed edges wins, so answers are deterministic.
 * A path may pass through another supply; a supply queried for itself gets a zero-hop path.
 * Paths are listed nearest first while at most `MAX_SUPPLY_PATHS` paths and `MAX_LISTED_PATH_NODES` node ids in all
 * are listed (the nearest always); when some are left out, `supplyCount` counts every supply and `isTruncated` is true.
 */
export function findSupplyPaths(graph: Graph, nodeId: string): SupplyPathResult {
  const start = graph.indexOf.get(nodeId)
  if (start === undefined) throw new NodeNotInNetwork(nodeId)
  const { parent, parentEdge, hops, reached } = supplySearch(graph, start)
  let listed = 0
  let listedNodes = 0
  for (const supply of reached) {
    const size = hops[supply]! + 1
    if (listed > 0 && (listed >= MAX_SUPPLY_PATHS || listedNodes + size > MAX_LISTED_PATH_NODES)) break
    listed++
    listedNodes += size
  }
  const paths = reached.slice(0, listed).map((supply) => pathTo(graph, parent, parentEdge, supply))
  const result = { nodeId, isSupplied: paths.length > 0, paths }
  return listed < reached.length ? { ...result, supplyCount: reached.length, isTruncated: true } : result
}

/**
 * The one path `findSupplyPaths` lists first (no `supplyId`) or lists to `supplyId`, built alone: the search stops at
 * that supply. Null when the node reaches no supply, or `supplyId` names no supply it reaches.
 */
export function findSupplyPath(graph: Graph, nodeId: string, supplyId?: string): SupplyPath | null {
  const start = graph.indexOf.get(nodeId)
  if (start === undefined) throw new NodeNotInNetwork(nodeId)
  const target = supplyId === undefined ? -1 : (graph.indexOf.get(supplyId) ?? -1)
  if (supplyId !== undefined && (target === -1 || graph.isSupply[target] !== 1)) return null
  const { parent, parentEdge, reached } = supplySearch(graph, start, supplyId === undefined ? NEAREST_SUPPLY : target)
  const supply = supplyId === undefined ? reached[0] : reached.at(-1) === target ? target : undefined
  return supply === undefined ? null : pathTo(graph, parent, parentEdge, supply)
}

export interface Loop {
  /** The edge outside the spanning forest whose presence closes this loop. */
  readonly closingEdge: EdgeRef
  /** Around the loop, from the closing edge's source to its target. */
  readonly nodeIds: string[]
  /** `edges[i]` joins `nodeIds[i]` and `nodeIds[i + 1]`; the last is `closingEdge`, back to the first node. */
  readonly edges: EdgeRef[]
}

export interface LoopReport {
  readonly isRadial: boolean
  /** Independent loops (cyclomatic number m − n + c): one per closing edge. */
  readonly loopCount: number
  readonly loops: Loop[]
  /**
   * True when only the first loops are listed: more than `maxLoops` exist, or listing the next would take the node
   * ids listed over all loops past `MAX_LISTED_PATH_NODES` (the first loop is always listed whole).
   */
  readonly isTruncated: boolean
}

/**
 * Loops that break radiality. A BFS spanning forest is grown from the supplies first, so in a ring main the
 * closing edge lands farthest from the infeed, where an engineer would put the normally-open point.
 * Every edge outside the forest closes exactly one loop; parallel edges close a two-node loop.
 */
export function findLoops(graph: Graph, options: { maxLoops?: number } = {}): LoopReport {
  const maxLoops = options.maxLoops ?? 1000
  if (!Number.isInteger(maxLoops) || maxLoops < 0) throw new TypeError('maxLoops must be a non-negative integer')
  const n = graph.nodes.length
  const { adjStart, adjNode, adjEdge, isSupply, edgeSource, edgeTarget } = graph
  const parent = new Int32Array(n).fill(-1)
  const parentEdge = new Int32Array(n).fill(-1)
  const depth = new Int32Array(n).fill(-1)
  const isTreeEdge = new Uint8Array(graph.edges.length)
  const queue = new Int32Array(n)
  const grow = (root: number): void => {
    if (depth[root] !== -1) return
    depth[root] = 0
    let head = 0
    let tail = 0
    queue[tail++] = root
    while (head < tail) {
      const u = queue[head++]!
      for (let k = adjStart[u]!, end = adjStart[u + 1]!; k < end; k++) {
        const v = adjNode[k]!
        if (depth[v] !== -1) continue
        depth[v] = depth[u]! + 1
        parent[v] = u
        parentEdge[v] = adjEdge[k]!
        isTreeEdge[adjEdge[k]!] = 1
        queue[tail++] = v
      }
    }
  }
  for (let i = 0; i < n; i++) if (isSupply[i] === 1) grow(i)
  for (let i = 0; i < n; i++) grow(i)

  const loops: Loop[] = []
  let loopCount = 0
  let listedNodes = 0
  let full = maxLoops === 0
  for (let e = 0; e < graph.edges.length; e++) {
    if (isTreeEdge[e] === 1) continue
    loopCount++
    if (full) continue
    // 1000 loops of 90 000 nodes each (a long ladder) would list 90 million ids: the node ids listed are bounded too.
    const size = loopSize(edgeSource[e]!, edgeTarget[e]!, parent, depth)
    if (loops.length > 0 && listedNodes + size > MAX_LISTED_PATH_NODES) {
      full = true
      continue
    }
    listedNodes += size
    loops.push(traceLoop(graph, e, edgeSource[e]!, edgeTarget[e]!, parent, parentEdge, depth))
    if (loops.length >= maxLoops) full = true
  }
  return { isRadial: loopCount === 0, loopCount, loops, isTruncated: loopCount > loops.length }
}

/** The nodes on the loop a non-tree edge closes: both ends climbed to their lowest common ancestor, nothing kept. */
function loopSize(source: number, target: number, parent: Int32Array, depth: Int32Array): number {
  let a = source
  let b = target
  let size = 1
  while (depth[a]! > depth[b]!) {
    a = parent[a]!
    size++
  }
  while (depth[b]! > depth[a]!) {
    b = parent[b]!
    size++
  }
  while (a !== b) {
    a = parent[a]!
    b = parent[b]!
    size += 2
  }
  return size
}

function traceLoop(graph: Graph, closing: number, source: number, target: number, parent: Int32Array, parentEdge: Int32Array, depth: Int32Array): Loop {
  // Climb both ends to their lowest common ancestor in the forest.
  const up: number[] = [source]
  const upEdges: number[] = []
  const down: number[] = [target]
  const downEdges: number[] = []
  let a = source
  let b = target
  while (depth[a]! > depth[b]!) {
    upEdges.push(parentEdge[a]!)
    a = parent[a]!
    up.push(a)
  }
  while (depth[b]! > depth[a]!) {
    downEdges.push(parentEdge[b]!)
    b = parent[b]!
    down.push(b)
  }
  while (a !== b) {
    upEdges.push(parentEdge[a]!)
    a = parent[a]!
    up.push(a)
    downEdges.push(parentEdge[b]!)
    b = parent[b]!
    down.push(b)
  }
  down.pop() // the common ancestor is already the last of `up`
  const order = [...up, ...down.reverse()]
  const edgeOrder = [...upEdges, ...downEdges.reverse(), closing]
  return {
    closingEdge: edgeRef(graph, closing),
    nodeIds: order.map((i) => graph.nodes[i]!.id),
    edges: edgeOrder.map((e) => edgeRef(graph, e)),
  }
}
