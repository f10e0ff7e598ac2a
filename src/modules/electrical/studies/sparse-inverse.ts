// Entries of the inverse of a sparse block matrix from its factors (load-flow-sparse.ts), without forming the
// inverse: what the short-circuit study needs of Z = Y⁻¹ is its diagonal (every bus's own impedance) and the columns
// of the buses that hold sources. A complex matrix is solved as 2×2 real blocks [[re, −im], [im, re]]: the first
// column of a block is then (re, im).
import type { BlockPattern } from './load-flow-sparse.ts'

/**
 * For every bus k, the first column of block (k, k) of A⁻¹, two numbers a bus in bus order: for a complex matrix,
 * the diagonal of its inverse. Takahashi's recurrence (Erisman and Tinney, 1975) on the factors A = L·D·Ũ: in
 * reverse elimination order, Z_kj = −Σ Ũ_km·Z_mj and Z_jk = −Σ Z_jm·L_mk for j among k's later neighbours, then
 * Z_kk = D_k⁻¹ − Σ Ũ_km·Z_mk, m over those neighbours. They form a clique of the filled pattern, so every Z entry
 * read was computed before and lies on the pattern: the cost is the factorisation's, whatever the network's shape.
 */
export function inverseDiagonal(pattern: BlockPattern, values: Float64Array, inverses: Float64Array): Float64Array {
  const { size, order, later, slot, below, right, diagonal } = pattern
  const z = new Float64Array(values.length)
  let scaled = new Float64Array(0)
  const sum = new Float64Array(4)
  for (let step = order.length - 1; step >= 0; step--) {
    const k = order[step]!
    const neighbours = later[k]!
    // Ũ_km = D_k⁻¹ · U_km for the neighbours m.
    if (scaled.length < 4 * neighbours.length) scaled = new Float64Array(4 * neighbours.length)
    for (let a = 0; a < neighbours.length; a++) product(inverses, 4 * k, values, right[k]![a]!, scaled, 4 * a, false)
    for (let b = 0; b < neighbours.length; b++) {
      const j = neighbours[b]!
      // Z_kj = −Σ_m Ũ_km · Z_mj
      sum.fill(0)
      for (let a = 0; a < neighbours.length; a++) product(scaled, 4 * a, z, at(slot, diagonal, neighbours[a]!, j), sum, 0, true)
      z.set([-sum[0]!, -sum[1]!, -sum[2]!, -sum[3]!], right[k]![b]!)
      // Z_jk = −Σ_m Z_jm · L_mk
      sum.fill(0)
      for (let a = 0; a < neighbours.length; a++) product(z, at(slot, diagonal, j, neighbours[a]!), values, below[k]![a]!, sum, 0, true)
      z.set([-sum[0]!, -sum[1]!, -sum[2]!, -sum[3]!], below[k]![b]!)
    }
    // Z_kk = D_k⁻¹ − Σ_m Ũ_km · Z_mk
    sum.fill(0)
    for (let a = 0; a < neighbours.length; a++) product(scaled, 4 * a, z, below[k]![a]!, sum, 0, true)
    const d = diagonal[k]!
    for (let e = 0; e < 4; e++) z[d + e] = inverses[4 * k + e]! - sum[e]!
  }
  const out = new Float64Array(2 * size)
  for (let k = 0; k < size; k++) {
    out[2 * k] = z[diagonal[k]!]!
    out[2 * k + 1] = z[diagonal[k]! + 2]!
  }
  return out
}

/** Where block (i, j) of the pattern starts. */
const at = (slot: BlockPattern['slot'], diagonal: Int32Array, i: number, j: number) => (i === j ? diagonal[i]! : slot[i]!.get(j)!)

/** out[oo] = x[xo] · y[yo], or += with `accumulate`: 2×2 row-major blocks. */
function product(x: Float64Array, xo: number, y: Float64Array, yo: number, out: Float64Array, oo: number, accumulate: boolean): void {
  const p0 = x[xo]! * y[yo]! + x[xo + 1]! * y[yo + 2]!
  const p1 = x[xo]! * y[yo + 1]! + x[xo + 1]! * y[yo + 3]!
  const p2 = x[xo + 2]! * y[yo]! + x[xo + 3]! * y[yo + 2]!
  const p3 = x[xo + 2]! * y[yo + 1]! + x[xo + 3]! * y[yo + 3]!
  if (accumulate) {
    out[oo] = out[oo]! + p0
    out[oo + 1] = out[oo + 1]! + p1
    out[oo + 2] = out[oo + 2]! + p2
    out[oo + 3] = out[oo + 3]! + p3
  } else {
    out[oo] = p0
    out[oo + 1] = p1
    out[oo + 2] = p2
    out[oo + 3] = p3
  }
}
