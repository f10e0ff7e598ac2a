import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { factorBlocks, orderBlockPattern, solveBlocks } from './load-flow-sparse.ts'
import { inverseDiagonal } from './sparse-inverse.ts'

/** A deterministic pseudo-random stream in [0, 1). */
function random(seed: number) {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

describe("sparse inverse: the diagonal of Y⁻¹ by Takahashi's recurrence", () => {
  it('equals the full solve of every unit column, and Y times it is the unit column, on a meshed complex symmetric matrix', () => {
    const next = random(7)
    const size = 300
    // A tree plus 60 meshing branches, each an admittance g + jb; a shunt to ground at some buses keeps Y regular.
    const branches: Array<[number, number, number, number]> = []
    for (let i = 1; i < size; i++) branches.push([Math.floor(next() * i), i, 1 + next(), -5 - 10 * next()])
    for (let m = 0; m < 60; m++) {
      const a = Math.floor(next() * size)
      const b = Math.floor(next() * size)
      if (a !== b) branches.push([a, b, 0.5 + next(), -2 - 5 * next()])
    }
    const pattern = orderBlockPattern(
      size,
      branches.map(([a, b]) => [a, b] as const),
    )
    const dense = Array.from({ length: size }, () => new Float64Array(2 * size)) // re, im per column
    const values = new Float64Array(4 * pattern.blockCount)
    const add = (i: number, j: number, g: number, b: number) => {
      const at = pattern.slot[i]!.get(j)!
      values[at] = values[at]! + g
      values[at + 1] = values[at + 1]! - b
      values[at + 2] = values[at + 2]! + b
      values[at + 3] = values[at + 3]! + g
      dense[i]![2 * j] = dense[i]![2 * j]! + g
      dense[i]![2 * j + 1] = dense[i]![2 * j + 1]! + b
    }
    for (const [a, b, g, bb] of branches) {
      add(a, a, g, bb)
      add(b, b, g, bb)
      add(a, b, -g, -bb)
      add(b, a, -g, -bb)
    }
    for (let i = 0; i < size; i += 17) add(i, i, 0.2, -3)
    const inverses = new Float64Array(4 * size)
    assert.equal(factorBlocks(pattern, values, inverses), -1)
    const diagonal = inverseDiagonal(pattern, values, inverses)
    let worst = 0
    for (let k = 0; k < size; k++) {
      const x = new Float64Array(2 * size)
      x[2 * k] = 1
      solveBlocks(pattern, values, inverses, x)
      const scale = Math.hypot(x[2 * k]!, x[2 * k + 1]!)
      worst = Math.max(worst, Math.hypot(diagonal[2 * k]! - x[2 * k]!, diagonal[2 * k + 1]! - x[2 * k + 1]!) / scale)
      // Y x = e_k, row by row in complex arithmetic (every fifth column: the check is dense).
      for (let i = 0; i < size && k % 5 === 0; i++) {
        let re = 0
        let im = 0
        for (let j = 0; j < size; j++) {
          const [yr, yi] = [dense[i]![2 * j]!, dense[i]![2 * j + 1]!]
          re += yr * x[2 * j]! - yi * x[2 * j + 1]!
          im += yr * x[2 * j + 1]! + yi * x[2 * j]!
        }
        assert.ok(Math.abs(re - (i === k ? 1 : 0)) < 1e-9 && Math.abs(im) < 1e-9, `row ${i} of Y·x for column ${k}: ${re} + j${im}`)
      }
    }
    assert.ok(worst < 1e-12, `the diagonal agrees with the full solves: worst relative difference ${worst}`)
  })
})
