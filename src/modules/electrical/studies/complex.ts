/**
 * Dense complex linear algebra for the studies: a matrix is two Float64Arrays (real and imaginary parts, row-major,
 * n × n). LU with partial pivoting, factored once and solved for many right-hand sides (one per faulted bus).
 */
export interface ComplexMatrix {
  readonly n: number
  readonly re: Float64Array
  readonly im: Float64Array
}

export function complexMatrix(n: number): ComplexMatrix {
  return { n, re: new Float64Array(n * n), im: new Float64Array(n * n) }
}

/** Adds (gr + j·gb) at row i, column j. */
export function addAt(m: ComplexMatrix, i: number, j: number, gr: number, gb: number): void {
  m.re[i * m.n + j]! += gr
  m.im[i * m.n + j]! += gb
}

export interface ComplexLu {
  readonly m: ComplexMatrix
  readonly pivot: Int32Array
}

/** Factors `m` in place (PA = LU); throws when the matrix is singular (a part of the network with no path to ground). */
export function factorLu(m: ComplexMatrix): ComplexLu {
  const { n, re, im } = m
  const pivot = new Int32Array(n)
  for (let k = 0; k < n; k++) {
    let best = k
    let bestAbs = -1
    for (let r = k; r < n; r++) {
      const a = Math.hypot(re[r * n + k]!, im[r * n + k]!)
      if (a > bestAbs) {
        bestAbs = a
        best = r
      }
    }
    if (!(bestAbs > 1e-300)) throw new Error('singular matrix')
    pivot[k] = best
    if (best !== k) {
      for (let c = 0; c < n; c++) {
        const t1 = re[k * n + c]!
        re[k * n + c] = re[best * n + c]!
        re[best * n + c] = t1
        const t2 = im[k * n + c]!
        im[k * n + c] = im[best * n + c]!
        im[best * n + c] = t2
      }
    }
    const pr = re[k * n + k]!
    const pi = im[k * n + k]!
    const d = pr * pr + pi * pi
    for (let r = k + 1; r < n; r++) {
      const ar = re[r * n + k]!
      const ai = im[r * n + k]!
      if (ar === 0 && ai === 0) continue
      // l = a / pivot
      const lr = (ar * pr + ai * pi) / d
      const li = (ai * pr - ar * pi) / d
      re[r * n + k] = lr
      im[r * n + k] = li
      for (let c = k + 1; c < n; c++) {
        const ur = re[k * n + c]!
        const ui = im[k * n + c]!
        if (ur === 0 && ui === 0) continue
        re[r * n + c]! -= lr * ur - li * ui
        im[r * n + c]! -= lr * ui + li * ur
      }
    }
  }
  return { m, pivot }
}

/** Solves A x = b for the factored A; `bRe`/`bIm` are overwritten with x. */
export function solveLu({ m, pivot }: ComplexLu, bRe: Float64Array, bIm: Float64Array): void {
  const { n, re, im } = m
  for (let k = 0; k < n; k++) {
    const p = pivot[k]!
    if (p !== k) {
      const t1 = bRe[k]!
      bRe[k] = bRe[p]!
      bRe[p] = t1
      const t2 = bIm[k]!
      bIm[k] = bIm[p]!
      bIm[p] = t2
    }
  }
  for (let r = 1; r < n; r++) {
    let sr = bRe[r]!
    let si = bIm[r]!
    for (let c = 0; c < r; c++) {
      const lr = re[r * n + c]!
      const li = im[r * n + c]!
      sr -= lr * bRe[c]! - li * bIm[c]!
      si -= lr * bIm[c]! + li * bRe[c]!
    }
    bRe[r] = sr
    bIm[r] = si
  }
  for (let r = n - 1; r >= 0; r--) {
    let sr = bRe[r]!
    let si = bIm[r]!
    for (let c = r + 1; c < n; c++) {
      const ur = re[r * n + c]!
      const ui = im[r * n + c]!
      sr -= ur * bRe[c]! - ui * bIm[c]!
      si -= ur * bIm[c]! + ui * bRe[c]!
    }
    const dr = re[r * n + r]!
    const di = im[r * n + r]!
    const d = dr * dr + di * di
    bRe[r] = (sr * dr + si * di) / d
    bIm[r] = (si * dr - sr * di) / d
  }
}
