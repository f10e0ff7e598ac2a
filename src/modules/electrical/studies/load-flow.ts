// Newton–Raphson load flow on a bus/branch model (issue 31), in MATPOWER's conventions so that its published cases
// read in unchanged: powers in MW and Mvar on a system base (baseMva), voltages and impedances per unit, the branch as
// a π model with an ideal transformer (off-nominal tap ratio and phase shift) at its from end. Polar formulation:
// unknowns are the angle of every non-slack bus and the magnitude of every PQ bus; the Jacobian is filled as 2×2 blocks
// per pair of connected buses and solved by the sparse block LU of load-flow-sparse.ts, ordered once per case.
import { checkLoadFlowCase, type BusKind, type LoadFlowBranch, type LoadFlowBus, type LoadFlowCase } from './load-flow-case.ts'
import { factorBlocks, orderBlockPattern, solveBlocks } from './load-flow-sparse.ts'

export interface LoadFlowOptions {
  /** Newton steps before giving up (default 20). */
  maxIterations?: number
  /** Largest P or Q mismatch accepted, per unit of baseMva (default 1e-8, as MATPOWER). */
  tolerancePu?: number
}

export interface BusResult {
  id: string
  vPu: number
  angleDeg: number
  /** Generation at the bus: solved at the slack (P, Q) and PV buses (Q), as given elsewhere. */
  pGenMw: number
  qGenMvar: number
  /** Set on a PV bus held at its reactive limit (its voltage is then not its set-point). */
  qLimit?: 'min' | 'max'
}

export interface BranchResult {
  id: string
  /** Power entering the branch at each end (a negative value leaves the branch there). */
  pFromMw: number
  qFromMvar: number
  pToMw: number
  qToMvar: number
  /** Series (I²Z) losses; line charging is not a loss. */
  lossMw: number
  lossMvar: number
  /** The larger end's apparent power against ratingMva, when the branch has one. */
  loadingPercent?: number
}

export type LoadFlowResult =
  | {
      converged: true
      iterations: number
      maxMismatchMva: number
      buses: BusResult[]
      branches: BranchResult[]
      lossMw: number
      lossMvar: number
    }
  | {
      converged: false
      iterations: number
      maxMismatchMva: number
      /** IterationLimit: still off after maxIterations; Diverged: the mismatch grew past any use; SingularJacobian. */
      reason: 'IterationLimit' | 'Diverged' | 'SingularJacobian'
      /** The bus with the largest mismatch at the last step. */
      worstBusId: string
    }

interface Admittances {
  from: number
  to: number
  /** yff, yft, ytf, ytt as re, im pairs. */
  y: Float64Array
}

const DIVERGED_PU = 1e10
const RAD = Math.PI / 180

/**
 * Solves the load flow of `study`. A case it cannot solve as given throws LoadFlowCaseInvalid (naming the bus or
 * branch); a case too meshed for the sparse solver (more than MAX_ELIMINATION_WORK, load-flow-sparse.ts) throws
 * StudyTooMeshed while being ordered, before any factorisation; a case that does not converge answers
 * `converged: false` with the reason, never throws.
 */
export function solveLoadFlow(study: LoadFlowCase, options: LoadFlowOptions = {}): LoadFlowResult {
  const index = checkLoadFlowCase(study)
  const { buses, baseMva } = study
  const n = buses.length
  const maxIterations = options.maxIterations ?? 20
  const tolerance = options.tolerancePu ?? 1e-8
  const branches = study.branches.map((b) => branchAdmittances(b, index))
  const y = busAdmittances(study, branches)

  const kind = buses.map((b) => b.kind)
  const vm = Float64Array.from(buses, (b) => (b.kind === 'pq' ? 1 : b.vSetPu!))
  const va = Float64Array.from(buses, (b) => (b.kind === 'slack' ? (b.angleDeg ?? 0) * RAD : 0))
  const pSpec = Float64Array.from(buses, (b) => ((b.pGenMw ?? 0) - (b.pLoadMw ?? 0)) / baseMva)
  const qSpec = Float64Array.from(buses, (b) => ((b.qGenMvar ?? 0) - (b.qLoadMvar ?? 0)) / baseMva)

  // The unknowns' blocks: one per non-slack bus, joined where a branch joins two non-slack buses.
  const unknownOf = new Int32Array(n).fill(-1)
  const busOf: number[] = []
  for (let i = 0; i < n; i++) if (kind[i] !== 'slack') unknownOf[i] = busOf.push(i) - 1
  const pattern = orderBlockPattern(
    busOf.length,
    branches.filter((b) => unknownOf[b.from]! >= 0 && unknownOf[b.to]! >= 0).map((b) => [unknownOf[b.from]!, unknownOf[b.to]!] as const),
    'load flow',
  )
  const values = new Float64Array(4 * pattern.blockCount)
  const inverses = new Float64Array(4 * busOf.length)
  const step = new Float64Array(2 * busOf.length)
  const p = new Float64Array(n)
  const q = new Float64Array(n)

  const mismatch = (): { norm: number; worst: number } => {
    powerInjections(y, vm, va, p, q)
    let norm = 0
    let worst = 0
    for (let i = 0; i < n; i++) {
      if (kind[i] === 'slack') continue
      const m = Math.max(Math.abs(p[i]! - pSpec[i]!), kind[i] === 'pq' ? Math.abs(q[i]! - qSpec[i]!) : 0)
      if (Number.isNaN(m)) return { norm: Number.POSITIVE_INFINITY, worst: i }
      if (m > norm) [norm, worst] = [m, i]
    }
    return { norm, worst }
  }

  let { norm, worst } = mismatch()
  let iterations = 0
  const newton = (): Extract<LoadFlowResult, { converged: false }>['reason'] | undefined => {
    while (!(norm <= tolerance)) {
      if (!Number.isFinite(norm) || norm > DIVERGED_PU) return 'Diverged'
      if (iterations === maxIterations) return 'IterationLimit'
      fillJacobian(y, vm, va, p, q, kind, unknownOf, pattern.slot, values)
      if (factorBlocks(pattern, values, inverses) !== -1) return 'SingularJacobian'
      for (let u = 0; u < busOf.length; u++) {
        const i = busOf[u]!
        step[2 * u] = pSpec[i]! - p[i]!
        step[2 * u + 1] = kind[i] === 'pq' ? qSpec[i]! - q[i]! : 0
      }
      solveBlocks(pattern, values, inverses, step)
      for (let u = 0; u < busOf.length; u++) {
        const i = busOf[u]!
        va[i] = va[i]! + step[2 * u]!
        vm[i] = vm[i]! + step[2 * u + 1]!
      }
      iterations++
      ;({ norm, worst } = mismatch())
    }
    return undefined
  }
  // A PV bus past a reactive limit becomes PQ at that limit and the solve goes on from where it is, until none is:
  // a PV and a PQ bus have the same unknowns' block, so the ordered pattern stays valid.
  const qLimit = new Map<number, 'min' | 'max'>()
  for (;;) {
    const reason = newton()
    if (reason !== undefined)
      return {
        converged: false,
        iterations,
        maxMismatchMva: Number.isFinite(norm) ? norm * baseMva : Number.POSITIVE_INFINITY,
        reason,
        worstBusId: buses[worst]!.id,
      }
    const past = pastReactiveLimits(buses, kind, q, baseMva)
    if (past.length === 0) break
    for (const [i, side] of past) {
      const bus = buses[i]!
      kind[i] = 'pq'
      qSpec[i] = ((side === 'max' ? bus.qMaxMvar! : bus.qMinMvar!) - (bus.qLoadMvar ?? 0)) / baseMva
      qLimit.set(i, side)
    }
    ;({ norm, worst } = mismatch())
  }
  return { converged: true, iterations, maxMismatchMva: norm * baseMva, ...results(study, branches, vm, va, p, q, qLimit) }
}

/** The PV buses whose solved reactive generation lies past one of their limits (by more than 1e-6 Mvar). */
function pastReactiveLimits(buses: readonly LoadFlowBus[], kind: readonly BusKind[], q: Float64Array, baseMva: number): Array<[number, 'min' | 'max']> {
  const past: Array<[number, 'min' | 'max']> = []
  buses.forEach((bus, i) => {
    if (kind[i] !== 'pv') return
    const qGenMvar = q[i]! * baseMva + (bus.qLoadMvar ?? 0)
    if (bus.qMaxMvar !== undefined && qGenMvar > bus.qMaxMvar + 1e-6) past.push([i, 'max'])
    else if (bus.qMinMvar !== undefined && qGenMvar < bus.qMinMvar - 1e-6) past.push([i, 'min'])
  })
  return past
}

/** The π model's four admittances: yff = (ys + j·b/2)/|t|², yft = −ys/t*, ytf = −ys/t, ytt = ys + j·b/2. */
function branchAdmittances(branch: LoadFlowBranch, index: ReadonlyMap<string, number>): Admittances {
  const z2 = branch.rPu * branch.rPu + branch.xPu * branch.xPu
  const [gs, bs] = [branch.rPu / z2, -branch.xPu / z2]
  const ratio = branch.tapRatio ?? 1
  const shift = (branch.shiftDeg ?? 0) * RAD
  const [tr, ti] = [ratio * Math.cos(shift), ratio * Math.sin(shift)]
  const r2 = ratio * ratio
  const half = (branch.bPu ?? 0) / 2
  // −ys·t/|t|² and −ys·t*/|t|²
  const yft = [-(gs * tr - bs * ti) / r2, -(gs * ti + bs * tr) / r2]
  const ytf = [-(gs * tr + bs * ti) / r2, -(bs * tr - gs * ti) / r2]
  return {
    from: index.get(branch.fromBusId)!,
    to: index.get(branch.toBusId)!,
    y: Float64Array.of(gs / r2, (bs + half) / r2, yft[0]!, yft[1]!, ytf[0]!, ytf[1]!, gs, bs + half),
  }
}

/** The bus admittance matrix as rows of (column, g, b), the diagonal first in each row. */
interface BusAdmittances {
  columns: Int32Array[]
  g: Float64Array[]
  b: Float64Array[]
}

function busAdmittances(study: LoadFlowCase, branches: readonly Admittances[]): BusAdmittances {
  const rows = study.buses.map((bus, i) => new Map([[i, [(bus.gShuntMw ?? 0) / study.baseMva, (bus.bShuntMvar ?? 0) / study.baseMva] as [number, number]]]))
  const add = (i: number, j: number, g: number, b: number) => {
    const entry = rows[i]!.get(j) ?? [0, 0]
    rows[i]!.set(j, [entry[0] + g, entry[1] + b])
  }
  for (const { from, to, y } of branches) {
    add(from, from, y[0]!, y[1]!)
    add(from, to, y[2]!, y[3]!)
    add(to, from, y[4]!, y[5]!)
    add(to, to, y[6]!, y[7]!)
  }
  return {
    columns: rows.map((row) => Int32Array.from(row.keys())),
    g: rows.map((row) => Float64Array.from(row.values(), (v) => v[0]!)),
    b: rows.map((row) => Float64Array.from(row.values(), (v) => v[1]!)),
  }
}

/** p + jq = V·conj(Y·V) at every bus, per unit. */
function powerInjections(y: BusAdmittances, vm: Float64Array, va: Float64Array, p: Float64Array, q: Float64Array): void {
  for (let i = 0; i < vm.length; i++) {
    const [columns, g, b] = [y.columns[i]!, y.g[i]!, y.b[i]!]
    let [ir, ii] = [0, 0]
    for (let k = 0; k < columns.length; k++) {
      const j = columns[k]!
      const [vr, vi] = [vm[j]! * Math.cos(va[j]!), vm[j]! * Math.sin(va[j]!)]
      ir += g[k]! * vr - b[k]! * vi
      ii += g[k]! * vi + b[k]! * vr
    }
    const [vr, vi] = [vm[i]! * Math.cos(va[i]!), vm[i]! * Math.sin(va[i]!)]
    p[i] = vr * ir + vi * ii
    q[i] = vi * ir - vr * ii
  }
}

/**
 * The Jacobian ∂(P, Q)/∂(θ, |V|) in 2×2 blocks (MATPOWER's dSbus_dV, element by element). A PV bus's Q row becomes
 * the identity on its |V| (its step is 0) and its |V| column is left out of the other rows, so every block keeps its
 * place and the pattern stays the one ordered for the case.
 */
function fillJacobian(
  y: BusAdmittances,
  vm: Float64Array,
  va: Float64Array,
  p: Float64Array,
  q: Float64Array,
  kind: readonly BusKind[],
  unknownOf: Int32Array,
  slot: ReadonlyArray<ReadonlyMap<number, number>>,
  values: Float64Array,
): void {
  values.fill(0)
  for (let i = 0; i < vm.length; i++) {
    const u = unknownOf[i]!
    if (u < 0) continue
    const [columns, g, b] = [y.columns[i]!, y.g[i]!, y.b[i]!]
    const [vri, vii] = [vm[i]! * Math.cos(va[i]!), vm[i]! * Math.sin(va[i]!)]
    const rowIsPv = kind[i] === 'pv'
    for (let k = 0; k < columns.length; k++) {
      const j = columns[k]!
      const w = unknownOf[j]!
      if (w < 0) continue
      // c = V_i · conj(Y_ij · V_j)
      const [vrj, vij] = [vm[j]! * Math.cos(va[j]!), vm[j]! * Math.sin(va[j]!)]
      const [yr, yi] = [g[k]! * vrj - b[k]! * vij, g[k]! * vij + b[k]! * vrj]
      const [cr, ci] = [vri * yr + vii * yi, vii * yr - vri * yi]
      let block: [number, number, number, number]
      if (j === i) {
        // ∂S/∂θ_i = j(S_i − c), ∂S/∂|V_i| = (S_i + c)/|V_i|
        block = [-(q[i]! - ci), (p[i]! + cr) / vm[i]!, p[i]! - cr, (q[i]! + ci) / vm[i]!]
      } else {
        // ∂S/∂θ_j = −j·c, ∂S/∂|V_j| = c/|V_j|
        block = [ci, cr / vm[j]!, -cr, ci / vm[j]!]
      }
      if (kind[j] === 'pv' && j !== i) block[1] = block[3] = 0
      if (rowIsPv) [block[2], block[3]] = j === i ? [0, 1] : [0, 0]
      values.set(block, slot[u]!.get(w)!)
    }
  }
}

function results(
  study: LoadFlowCase,
  branches: readonly Admittances[],
  vm: Float64Array,
  va: Float64Array,
  p: Float64Array,
  q: Float64Array,
  qLimit: ReadonlyMap<number, 'min' | 'max'>,
) {
  const base = study.baseMva
  const buses: BusResult[] = study.buses.map((bus, i) => ({
    id: bus.id,
    vPu: vm[i]!,
    angleDeg: va[i]! / RAD,
    pGenMw: bus.kind === 'slack' ? p[i]! * base + (bus.pLoadMw ?? 0) : (bus.pGenMw ?? 0),
    qGenMvar: bus.kind === 'pq' ? (bus.qGenMvar ?? 0) : q[i]! * base + (bus.qLoadMvar ?? 0),
    ...(qLimit.has(i) ? { qLimit: qLimit.get(i)! } : {}),
  }))
  let [lossMw, lossMvar] = [0, 0]
  const branchResults = study.branches.map((branch, k): BranchResult => {
    const { from, to, y } = branches[k]!
    const [fr, fi] = [vm[from]! * Math.cos(va[from]!), vm[from]! * Math.sin(va[from]!)]
    const [tr, ti] = [vm[to]! * Math.cos(va[to]!), vm[to]! * Math.sin(va[to]!)]
    // S = V · conj(y_self·V + y_other·W), with y_self, y_other at `self` and `other` in y
    const end = (self: number, other: number, vr: number, vi: number, wr: number, wi: number): [number, number] => {
      const cr = y[self]! * vr - y[self + 1]! * vi + y[other]! * wr - y[other + 1]! * wi
      const ci = y[self]! * vi + y[self + 1]! * vr + y[other]! * wi + y[other + 1]! * wr
      return [(vr * cr + vi * ci) * base, (vi * cr - vr * ci) * base]
    }
    const [pFromMw, qFromMvar] = end(0, 2, fr, fi, tr, ti)
    const [pToMw, qToMvar] = end(6, 4, tr, ti, fr, fi)
    // I²Z = |V_f/t − V_t|² · z/|z|²
    const ratio = branch.tapRatio ?? 1
    const angle = (branch.shiftDeg ?? 0) * RAD
    const [dr, di] = [(fr * Math.cos(angle) + fi * Math.sin(angle)) / ratio - tr, (fi * Math.cos(angle) - fr * Math.sin(angle)) / ratio - ti]
    const scale = ((dr * dr + di * di) / (branch.rPu * branch.rPu + branch.xPu * branch.xPu)) * base
    const result: BranchResult = { id: branch.id, pFromMw, qFromMvar, pToMw, qToMvar, lossMw: branch.rPu * scale, lossMvar: branch.xPu * scale }
    lossMw += result.lossMw
    lossMvar += result.lossMvar
    if (branch.ratingMva !== undefined) result.loadingPercent = (100 * Math.max(Math.hypot(pFromMw, qFromMvar), Math.hypot(pToMw, qToMvar))) / branch.ratingMva
    return result
  })
  return { buses, branches: branchResults, lossMw, lossMvar }
}
