import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { seededRandom } from '../../../../test/support/seeded-random.ts'
import { factorBlocks, orderBlockPattern, solveBlocks } from './load-flow-sparse.ts'

/** A deterministic pseudo-random sequence in [−1, 1), so failures reproduce. */
function random(seed: number): () => number {
  const next = seededRandom(seed)
  return () => 2 * next() - 1
}

/** A 30 × 30 grid of nodes (meshed: ordering it makes fill-in) plus 40 random chords. */
function meshedGraph(next: () => number): { size: number; edges: Array<[number, number]> } {
  const side = 30
  const size = side * side
  const edges: Array<[number, number]> = []
  for (let r = 0; r < side; r++)
    for (let c = 0; c < side; c++) {
      if (c + 1 < side) edges.push([r * side + c, r * side + c + 1])
      if (r + 1 < side) edges.push([r * side + c, (r + 1) * side + c])
    }
  for (let k = 0; k < 40; k++) edges.push([Math.floor(((next() + 1) / 2) * size), Math.floor(((next() + 1) / 2) * size)])
  return { size, edges }
}

describe('sparse 2×2-block LU', () => {
  it('solves a random non-symmetric block system on a meshed 900-node graph to a residual below 1e-10', () => {
    const next = random(31)
    const { size, edges } = meshedGraph(next)
    const pattern = orderBlockPattern(size, edges)
    assert.deepEqual(
      [...pattern.order].sort((a, b) => a - b),
      [...Array(size).keys()],
      'every node is eliminated once',
    )
    const original = new Map<string, number[]>()
    const values = new Float64Array(4 * pattern.blockCount)
    const put = (i: number, j: number, block: number[]) => {
      original.set(`${i},${j}`, block)
      values.set(block, pattern.slot[i]!.get(j)!)
    }
    for (const [a, b] of edges) {
      if (a === b || original.has(`${a},${b}`)) continue
      put(a, b, [next(), next(), next(), next()])
      put(b, a, [next(), next(), next(), next()])
    }
    // A row's off-diagonal numbers lie in [−1, 1), two per neighbour: a diagonal of ±30 keeps the matrix regular.
    for (let i = 0; i < size; i++) put(i, i, [30 + next(), next(), next(), -30 + next()])
    const b = Float64Array.from({ length: 2 * size }, () => next())
    const x = Float64Array.from(b)
    const inverses = new Float64Array(4 * size)
    assert.equal(factorBlocks(pattern, values, inverses), -1)
    solveBlocks(pattern, values, inverses, x)
    const residual = Float64Array.from(b)
    for (const [key, [m0, m1, m2, m3]] of original) {
      const [i, j] = key.split(',').map(Number) as [number, number]
      residual[2 * i] = residual[2 * i]! - m0! * x[2 * j]! - m1! * x[2 * j + 1]!
      residual[2 * i + 1] = residual[2 * i + 1]! - m2! * x[2 * j]! - m3! * x[2 * j + 1]!
    }
    assert.ok(Math.max(...residual.map(Math.abs)) < 1e-10)
    assert.ok(pattern.blockCount > size + 2 * new Set(edges.map(([a, c]) => `${Math.min(a, c)},${Math.max(a, c)}`)).size, 'the grid made fill-in')
  })

  it('a tree is ordered leaves first, so eliminating it adds no block (no fill-in)', () => {
    const edges: Array<[number, number]> = [...Array(99).keys()].map((i) => [Math.floor(i / 3), i + 1])
    assert.equal(orderBlockPattern(100, edges).blockCount, 100 + 2 * 99)
  })

  it('a singular pivot block, exactly or to rounding (determinant 1e-16 of its entries²), is reported by its bus, not divided by', () => {
    for (const pivot of [
      [1, 2, 2, 4],
      [1, 2, 2, 4 + 1e-15],
    ]) {
      const pattern = orderBlockPattern(2, [[0, 1]])
      const values = new Float64Array(4 * pattern.blockCount)
      values.set(pivot, pattern.slot[0]!.get(0)!)
      values.set([1, 0, 0, 1], pattern.slot[1]!.get(1)!)
      assert.equal(factorBlocks(pattern, values, new Float64Array(8)), 0, String(pivot))
    }
  })
})
