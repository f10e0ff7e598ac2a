// The linear solver of the load flow: a sparse LU of a matrix made of 2×2 real blocks whose pattern is the bus graph
// (the Newton–Raphson Jacobian: one block per pair of connected buses). The pattern is ordered once by minimum degree
// (Tinney's scheme 2) and factorised symbolically once; each iteration refills the numbers and solves. Pivots are the
// 2×2 diagonal blocks, inverted exactly; the order is never changed for stability, as power-flow solvers do (the
// Jacobian of a solvable case has non-singular diagonal blocks), and a singular pivot is reported, never divided by.
// The work is bounded (MAX_ELIMINATION_WORK): a pattern whose elimination fills in towards a dense matrix (a heavily
// meshed network) is refused while it is being ordered, before any memory or time of that order is spent.
import { StudyTooMeshed } from '../errors.ts'

/**
 * The elimination work a study accepts: Σ d² over the pivots, d a pivot's later neighbours (fill-in included) when it
 * is eliminated. It counts the ordering's set operations and each factorisation's 2×2 block updates (the sparse
 * inverse's too), and bounds the fill (Σ d ≤ √(buses · work)) the factors hold. Radial networks with rings, as the
 * benches generate them (bench/load-flow.ts, bench/short-circuit.ts), need 1.3–1.5 a bus: 14 000 at 10 000 buses,
 * 145 000 at 100 000 (the network limits). A full 50 × 50 grid needs 1.2 million; a random mesh of average degree 6
 * needs 1.9 million at 500 buses, 15 million at 1 000 and 110 million at 2 000 (the work grows about with the cube of
 * the buses: minutes at a few thousand). 2 million, measured on the development machine: ordering ≈ 0.05 s and a
 * factorisation ≈ 0.1 s at most for an accepted network, a refusal within ≈ 0.05 s for any other.
 */
export const MAX_ELIMINATION_WORK = 2_000_000

/** The fill-in pattern of a bus graph, elimination order and, per bus, the buses after it that it touches. */
export interface BlockPattern {
  readonly size: number
  readonly order: Int32Array
  /** `later[k]`: the neighbours (original indexes) of bus k eliminated after it, fill-in included. */
  readonly later: ReadonlyArray<Int32Array>
  /** `slot[i].get(j)`: where block (i, j) starts in a values array (4 numbers, row-major); the diagonal included. */
  readonly slot: ReadonlyArray<ReadonlyMap<number, number>>
  /** The same for the loops: `below[k][n]` is block (later[k][n], k)'s slot, `right[k][n]` block (k, later[k][n])'s, `diagonal[k]` block (k, k)'s. */
  readonly below: ReadonlyArray<Int32Array>
  readonly right: ReadonlyArray<Int32Array>
  readonly diagonal: Int32Array
  readonly blockCount: number
}

/**
 * Orders `size` nodes joined by `edges` (pairs of indexes, duplicates allowed) by minimum degree, with fill-in. Throws
 * StudyTooMeshed (422, naming `study`) as soon as the elimination work would pass `maxWork` (MAX_ELIMINATION_WORK).
 */
export function orderBlockPattern(
  size: number,
  edges: ReadonlyArray<readonly [number, number]>,
  study = 'study',
  maxWork = MAX_ELIMINATION_WORK,
): BlockPattern {
  const adjacency = Array.from({ length: size }, () => new Set<number>())
  for (const [a, b] of edges) {
    if (a === b) continue
    adjacency[a]!.add(b)
    adjacency[b]!.add(a)
  }
  const order = new Int32Array(size)
  const later: Int32Array[] = new Array(size)
  const done = new Uint8Array(size)
  // A binary heap of (degree, node) with lazy deletion: an entry whose degree is stale is skipped when popped.
  const heap: Array<[number, number]> = []
  const push = (entry: [number, number]) => {
    heap.push(entry)
    for (let c = heap.length - 1; c > 0; ) {
      const p = (c - 1) >> 1
      if (less(heap[p]!, heap[c]!)) break
      ;[heap[p], heap[c]] = [heap[c]!, heap[p]!]
      c = p
    }
  }
  const pop = (): [number, number] => {
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      for (let p = 0; ; ) {
        const [l, r] = [2 * p + 1, 2 * p + 2]
        let m = p
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r
        if (m === p) break
        ;[heap[p], heap[m]] = [heap[m]!, heap[p]!]
        p = m
      }
    }
    return top
  }
  for (let v = 0; v < size; v++) push([adjacency[v]!.size, v])
  let work = 0
  let fill = 0
  for (let step = 0; step < size; ) {
    const [degree, v] = pop()
    if (done[v] || degree !== adjacency[v]!.size) continue
    // Checked before the step: no step, nor the factorisation of an accepted order, does more than maxWork.
    if (work + degree * degree > maxWork) {
      throw new StudyTooMeshed(study, { buses: size, branches: edges.length, eliminated: step, fillBlocks: fill, work: work + degree * degree, maxWork })
    }
    work += degree * degree
    fill += degree
    done[v] = 1
    order[step++] = v
    const neighbours = [...adjacency[v]!]
    later[v] = Int32Array.from(neighbours)
    for (const a of neighbours) {
      const set = adjacency[a]!
      set.delete(v)
      for (const b of neighbours) if (b !== a) set.add(b)
      push([set.size, a])
    }
    adjacency[v]!.clear()
  }
  const slot = Array.from({ length: size }, () => new Map<number, number>())
  const diagonal = new Int32Array(size)
  const below: Int32Array[] = new Array(size)
  const right: Int32Array[] = new Array(size)
  let blockCount = 0
  for (let i = 0; i < size; i++) slot[i]!.set(i, (diagonal[i] = 4 * blockCount++))
  for (let k = 0; k < size; k++) {
    below[k] = new Int32Array(later[k]!.length)
    right[k] = new Int32Array(later[k]!.length)
    later[k]!.forEach((j, n) => {
      slot[k]!.set(j, (right[k]![n] = 4 * blockCount++))
      slot[j]!.set(k, (below[k]![n] = 4 * blockCount++))
    })
  }
  return { size, order, later, slot, below, right, diagonal, blockCount }
}

const less = (a: [number, number], b: [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])

/**
 * Factorises in place the block matrix in `values` (laid out by `pattern.slot`): afterwards block (i, k), i after k,
 * holds L and block (k, j) holds U; `inverses` receives each diagonal block's inverse. Returns -1, or the block (bus)
 * whose pivot is singular or not finite, leaving the numbers half-done.
 */
export function factorBlocks(pattern: BlockPattern, values: Float64Array, inverses: Float64Array): number {
  const l = new Float64Array(4)
  const { later, below, right } = pattern
  for (const k of pattern.order) {
    const d = pattern.diagonal[k]!
    const [a, b, c, e] = [values[d]!, values[d + 1]!, values[d + 2]!, values[d + 3]!]
    const det = a * e - b * c
    const scale = Math.max(Math.abs(a), Math.abs(b), Math.abs(c), Math.abs(e))
    if (!(Math.abs(det) > 1e-14 * scale * scale) || !Number.isFinite(det)) return k
    const o = 4 * k
    inverses[o] = e / det
    inverses[o + 1] = -b / det
    inverses[o + 2] = -c / det
    inverses[o + 3] = a / det
    const neighbours = later[k]!
    for (let a = 0; a < neighbours.length; a++) {
      const slots = pattern.slot[neighbours[a]!]!
      const ik = below[k]![a]!
      multiply(values, ik, inverses, o, l)
      values.set(l, ik)
      for (let b = 0; b < neighbours.length; b++) subtractProduct(values, slots.get(neighbours[b]!)!, l, values, right[k]![b]!)
    }
  }
  return -1
}

/** Solves A x = rhs with the factors of `factorBlocks`; `rhs` (2 per bus) is overwritten by x. */
export function solveBlocks(pattern: BlockPattern, values: Float64Array, inverses: Float64Array, rhs: Float64Array): void {
  const { order } = pattern
  for (const k of order) forwardStep(pattern, values, rhs, k)
  for (let step = order.length - 1; step >= 0; step--) backwardStep(pattern, values, inverses, rhs, order[step]!)
}

/** The forward pass's step at bus k (in elimination order): its part of the right-hand side goes to its later neighbours. */
export function forwardStep(pattern: BlockPattern, values: Float64Array, rhs: Float64Array, k: number): void {
  const neighbours = pattern.later[k]!
  const slots = pattern.below[k]!
  const [r0, r1] = [rhs[2 * k]!, rhs[2 * k + 1]!]
  for (let a = 0; a < neighbours.length; a++) {
    const i = neighbours[a]!
    const s = slots[a]!
    rhs[2 * i] = rhs[2 * i]! - values[s]! * r0 - values[s + 1]! * r1
    rhs[2 * i + 1] = rhs[2 * i + 1]! - values[s + 2]! * r0 - values[s + 3]! * r1
  }
}

/** The backward pass's step at bus k (in reverse elimination order): x_k from its later neighbours' x. */
export function backwardStep(pattern: BlockPattern, values: Float64Array, inverses: Float64Array, rhs: Float64Array, k: number): void {
  const neighbours = pattern.later[k]!
  const slots = pattern.right[k]!
  let [r0, r1] = [rhs[2 * k]!, rhs[2 * k + 1]!]
  for (let a = 0; a < neighbours.length; a++) {
    const j = neighbours[a]!
    const s = slots[a]!
    r0 -= values[s]! * rhs[2 * j]! + values[s + 1]! * rhs[2 * j + 1]!
    r1 -= values[s + 2]! * rhs[2 * j]! + values[s + 3]! * rhs[2 * j + 1]!
  }
  const o = 4 * k
  rhs[2 * k] = inverses[o]! * r0 + inverses[o + 1]! * r1
  rhs[2 * k + 1] = inverses[o + 2]! * r0 + inverses[o + 3]! * r1
}

/** out = x[xo] · y[yo], 2×2 row-major blocks. */
function multiply(x: Float64Array, xo: number, y: Float64Array, yo: number, out: Float64Array): void {
  out[0] = x[xo]! * y[yo]! + x[xo + 1]! * y[yo + 2]!
  out[1] = x[xo]! * y[yo + 1]! + x[xo + 1]! * y[yo + 3]!
  out[2] = x[xo + 2]! * y[yo]! + x[xo + 3]! * y[yo + 2]!
  out[3] = x[xo + 2]! * y[yo + 1]! + x[xo + 3]! * y[yo + 3]!
}

/** target[to] −= l · y[yo], 2×2 row-major blocks. */
function subtractProduct(target: Float64Array, to: number, l: Float64Array, y: Float64Array, yo: number): void {
  target[to] = target[to]! - (l[0]! * y[yo]! + l[1]! * y[yo + 2]!)
  target[to + 1] = target[to + 1]! - (l[0]! * y[yo + 1]! + l[1]! * y[yo + 3]!)
  target[to + 2] = target[to + 2]! - (l[2]! * y[yo]! + l[3]! * y[yo + 2]!)
  target[to + 3] = target[to + 3]! - (l[2]! * y[yo + 1]! + l[3]! * y[yo + 3]!)
}
