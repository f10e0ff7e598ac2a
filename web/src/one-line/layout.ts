// Automatic one-line (single-line) diagram layout. Pure: no DOM, no clock, no randomness, so the same network
// always gives the same drawing and this file runs under node:test.
//
// 1. Connected components (edge direction ignored: an electrical network is drawn from its supplies whichever way
//    the edges were entered).
// 2. Layers: in a component holding supplies (UtilitySupply, Generator, UpsBattery), a node's layer is its distance
//    in hops to the nearest supply (multi-source BFS), so every supply is on the top row and every edge joins two
//    adjacent layers (downward, away from the supplies) or two nodes of one layer (sideways). A component without a
//    supply (an island) is layered the same way from its root: its highest-degree node, lowest id first.
// 3. Order within a layer: BFS discovery order, then barycentre sweeps down and up (each node moves to the mean
//    position of its neighbours in the layer above, then below) to reduce crossings; ties keep the previous order.
// 4. Components side by side: supplied ones first (largest first), then islands, each centred on its widest layer.

import { NODE_TYPES } from '../../../src/modules/electrical/codes.ts'

/** Node type codes whose role is `supply` (src/modules/electrical/codes.ts): UtilitySupply, Generator, UpsBattery. */
export const SUPPLY_NODE_TYPES: ReadonlySet<number> = new Set(NODE_TYPES.filter((t) => t.role === 'supply').map((t) => t.code))

export interface LayoutNodeInput {
  readonly id: string
  readonly nodeType: number
}

export interface LayoutEdgeInput {
  readonly sourceId: string
  readonly targetId: string
  readonly edgeType: number
}

export interface LayoutOptions {
  /** Box size and spacing, in diagram units (SVG user units). */
  nodeWidth?: number
  nodeHeight?: number
  gapX?: number
  gapY?: number
  /** Space between two components. */
  componentGap?: number
  /** Barycentre sweeps (one sweep = down then up). */
  sweeps?: number
}

export interface LayoutNode {
  readonly id: string
  readonly nodeType: number
  readonly isSupply: boolean
  /** Top-left corner of the node's box. */
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  /** Row: hops from the nearest supply (or from the island's root). */
  readonly layer: number
  /** Position within the row of its component, from 0. */
  readonly order: number
  /** Index into `components`. */
  readonly component: number
}

export interface LayoutEdge {
  readonly sourceId: string
  readonly targetId: string
  readonly edgeType: number
  /** `down`: joins two rows; `side`: two nodes of one row. */
  readonly kind: 'down' | 'side'
  /** 0 for the first edge between two nodes, 1, 2… for parallel ones (drawn offset). */
  readonly parallel: number
  /** Polyline from the upper (or left) end to the other, in diagram units. */
  readonly points: ReadonlyArray<readonly [number, number]>
}

export interface LayoutComponent {
  readonly nodeIds: readonly string[]
  readonly supplyIds: readonly string[]
  readonly hasSupply: boolean
  /** Bounding box of the component. */
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

export interface Layout {
  readonly nodes: readonly LayoutNode[]
  readonly edges: readonly LayoutEdge[]
  readonly components: readonly LayoutComponent[]
  readonly width: number
  readonly height: number
  /** Edges naming a node that is not in the network (left out of `edges`). */
  readonly droppedEdges: number
}

const DEFAULTS: Required<LayoutOptions> = { nodeWidth: 120, nodeHeight: 44, gapX: 28, gapY: 56, componentGap: 80, sweeps: 4 }

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Lays out a network as a one-line diagram. Deterministic: input order does not matter. */
export function layoutNetwork(nodesIn: readonly LayoutNodeInput[], edgesIn: readonly LayoutEdgeInput[], options: LayoutOptions = {}): Layout {
  const o = { ...DEFAULTS, ...options }
  const pitchX = o.nodeWidth + o.gapX
  const pitchY = o.nodeHeight + o.gapY

  // Index nodes by id in id order (the first of duplicate ids wins).
  const typeOf = new Map<string, number>()
  for (const n of [...nodesIn].sort((a, b) => byText(a.id, b.id))) if (!typeOf.has(n.id)) typeOf.set(n.id, n.nodeType)
  const ids = [...typeOf.keys()]
  const index = new Map(ids.map((id, i) => [id, i]))
  const count = ids.length
  const isSupply = ids.map((id) => SUPPLY_NODE_TYPES.has(typeOf.get(id) ?? -1))

  // Undirected adjacency with neighbours in id order; edges kept in a canonical order.
  const edges = edgesIn
    .filter((e) => index.has(e.sourceId) && index.has(e.targetId) && e.sourceId !== e.targetId)
    .map((e) => ({ ...e, a: index.get(e.sourceId)!, b: index.get(e.targetId)! }))
    .sort((x, y) => byText(x.sourceId, y.sourceId) || byText(x.targetId, y.targetId) || x.edgeType - y.edgeType)
  const droppedEdges = edgesIn.length - edges.length
  const adjacency: number[][] = Array.from({ length: count }, () => [])
  for (const e of edges) {
    adjacency[e.a]!.push(e.b)
    adjacency[e.b]!.push(e.a)
  }
  for (const list of adjacency) {
    list.sort((x, y) => x - y)
    // Parallel edges count once for ordering.
    let w = 0
    for (let r = 0; r < list.length; r++) if (r === 0 || list[r] !== list[r - 1]) list[w++] = list[r]!
    list.length = w
  }

  // Components (BFS in id order).
  const componentOf = new Int32Array(count).fill(-1)
  const members: number[][] = []
  for (let start = 0; start < count; start++) {
    if (componentOf[start] !== -1) continue
    const c = members.length
    const list = [start]
    componentOf[start] = c
    for (let head = 0; head < list.length; head++) {
      for (const m of adjacency[list[head]!]!)
        if (componentOf[m] === -1) {
          componentOf[m] = c
          list.push(m)
        }
    }
    list.sort((x, y) => x - y)
    members.push(list)
  }
  const hasSupply = members.map((list) => list.some((i) => isSupply[i]))
  // Supplied components first, then islands; larger first; ties by lowest id (lists are sorted by id index).
  const componentOrder = members
    .map((_, c) => c)
    .sort((x, y) => Number(hasSupply[y]) - Number(hasSupply[x]) || members[y]!.length - members[x]!.length || members[x]![0]! - members[y]![0]!)

  const layer = new Int32Array(count).fill(-1)
  const position = new Float64Array(count)
  const bary = new Float64Array(count)
  const outNodes: LayoutNode[] = []
  const outComponents: LayoutComponent[] = []
  let offsetX = 0
  let height = 0

  for (const c of componentOrder) {
    const list = members[c]!
    // Layering: multi-source BFS from the supplies, or from the island's root.
    const roots = hasSupply[c] ? list.filter((i) => isSupply[i]) : [rootOf(list, adjacency)]
    const discovered: number[] = []
    for (const r of roots) {
      layer[r] = 0
      discovered.push(r)
    }
    for (let head = 0; head < discovered.length; head++) {
      const v = discovered[head]!
      for (const m of adjacency[v]!)
        if (layer[m] === -1) {
          layer[m] = layer[v]! + 1
          discovered.push(m)
        }
    }
    const rows: number[][] = []
    for (const v of discovered) (rows[layer[v]!] ??= []).push(v)
    const setPositions = (row: number[]) =>
      row.forEach((v, k) => {
        position[v] = k
      })
    rows.forEach(setPositions)

    // Barycentre sweeps; the supplies' row is ordered too (by their children) so feeders do not cross.
    const reorder = (row: number[], reference: number) => {
      for (const v of row) {
        let sum = 0
        let n = 0
        for (const m of adjacency[v]!)
          if (layer[m] === reference) {
            sum += position[m]!
            n++
          }
        bary[v] = n > 0 ? sum / n : position[v]!
      }
      row.sort((x, y) => bary[x]! - bary[y]! || position[x]! - position[y]!)
      setPositions(row)
    }
    for (let s = 0; s < o.sweeps; s++) {
      for (let l = 1; l < rows.length; l++) reorder(rows[l]!, l - 1)
      for (let l = rows.length - 2; l >= 0; l--) reorder(rows[l]!, l + 1)
    }

    const widest = Math.max(...rows.map((r) => r.length))
    const width = widest * pitchX - o.gapX
    rows.forEach((row, l) => {
      const shift = ((widest - row.length) * pitchX) / 2
      row.forEach((v, k) => {
        outNodes.push({
          id: ids[v]!,
          nodeType: typeOf.get(ids[v]!)!,
          isSupply: isSupply[v]!,
          x: offsetX + shift + k * pitchX,
          y: l * pitchY,
          width: o.nodeWidth,
          height: o.nodeHeight,
          layer: l,
          order: k,
          component: outComponents.length,
        })
      })
    })
    const componentHeight = rows.length * pitchY - o.gapY
    outComponents.push({
      nodeIds: list.map((i) => ids[i]!),
      supplyIds: list.filter((i) => isSupply[i]).map((i) => ids[i]!),
      hasSupply: hasSupply[c]!,
      x: offsetX,
      y: 0,
      width,
      height: componentHeight,
    })
    offsetX += width + o.componentGap
    height = Math.max(height, componentHeight)
  }

  outNodes.sort((a, b) => byText(a.id, b.id))
  const placed = new Map(outNodes.map((n) => [n.id, n]))
  const seenPairs = new Map<string, number>()
  const outEdges: LayoutEdge[] = edges.map((e) => {
    const p = placed.get(e.sourceId)!
    const q = placed.get(e.targetId)!
    const pair = p.id < q.id ? `${p.id}\u0000${q.id}` : `${q.id}\u0000${p.id}`
    const parallel = seenPairs.get(pair) ?? 0
    seenPairs.set(pair, parallel + 1)
    return { sourceId: e.sourceId, targetId: e.targetId, edgeType: e.edgeType, parallel, ...route(p, q, parallel, o.gapY) }
  })

  return { nodes: outNodes, edges: outEdges, components: outComponents, width: Math.max(0, offsetX - o.componentGap), height, droppedEdges }
}

/** An island's root: its highest-degree node, the lowest id among equals. */
function rootOf(list: readonly number[], adjacency: readonly number[][]): number {
  let best = list[0]!
  for (const v of list) if (adjacency[v]!.length > adjacency[best]!.length) best = v
  return best
}

/**
 * Orthogonal route: between rows, down from the upper box's bottom centre to mid-gap, across, down to the lower
 * box's top centre; within a row, up from both tops into the gap above the row and across (never through a box).
 * Parallel edges are offset sideways.
 */
function route(p: LayoutNode, q: LayoutNode, parallel: number, gapY: number): Pick<LayoutEdge, 'kind' | 'points'> {
  const shift = parallel === 0 ? 0 : (parallel % 2 === 1 ? 1 : -1) * Math.ceil(parallel / 2) * 8
  if (p.layer !== q.layer) {
    const [up, down] = p.layer < q.layer ? [p, q] : [q, p]
    const x1 = up.x + up.width / 2 + shift
    const x2 = down.x + down.width / 2 + shift
    const y1 = up.y + up.height
    const y2 = down.y
    const mid = (y1 + y2) / 2
    return {
      kind: 'down',
      points:
        x1 === x2
          ? [
              [x1, y1],
              [x2, y2],
            ]
          : [
              [x1, y1],
              [x1, mid],
              [x2, mid],
              [x2, y2],
            ],
    }
  }
  const [left, right] = p.x <= q.x ? [p, q] : [q, p]
  const x1 = left.x + left.width / 2 + shift
  const x2 = right.x + right.width / 2 + shift
  const y = left.y
  const rise = Math.min(gapY / 3, 6 + 4 * (right.order - left.order)) + Math.abs(shift) / 2
  return {
    kind: 'side',
    points: [
      [x1, y],
      [x1, y - rise],
      [x2, y - rise],
      [x2, y],
    ],
  }
}
