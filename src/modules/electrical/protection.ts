import { domainError } from '../../errors/domain-error.ts'
import { NodeType } from './codes.ts'
import type { MissingStudyData } from './errors.ts'
import { buildBuses } from './pandapower.ts'
import type { ElectricalNode, Graph, SupplyPath } from './topology.ts'

/**
 * Inverse-time overcurrent curves.
 * IEC 60255-151 (formerly IEC 60255-3):  t = TMS · k / ((I/Is)^α − 1)
 * IEEE C37.112-1996:                     t = TD · (A / ((I/Is)^p − 1) + B)
 * TD multiplies the standard formula directly; relays whose dial runs 0.5–15 (TD/7 or TD/5 scaling of the
 * older US CO curves) must have their setting converted before it is stored.
 * Definite time (DT): trips after a fixed delay once I > Is; the delay in seconds is stored in `protectionTms`.
 * No curve here is clamped at 20 × Is, as some relays do above that multiple.
 */
export const CURVES = {
  IEC_SI: {
    kind: 'iec',
    label: 'IEC Standard Inverse',
    k: 0.14,
    alpha: 0.02,
    aliases: ['IEC SI', 'IEC NI', 'IEC A', 'IEC STANDARD INVERSE', 'IEC NORMAL INVERSE'],
  },
  IEC_VI: { kind: 'iec', label: 'IEC Very Inverse', k: 13.5, alpha: 1, aliases: ['IEC VI', 'IEC B', 'IEC VERY INVERSE'] },
  IEC_EI: { kind: 'iec', label: 'IEC Extremely Inverse', k: 80, alpha: 2, aliases: ['IEC EI', 'IEC C', 'IEC EXTREMELY INVERSE'] },
  IEC_LTI: { kind: 'iec', label: 'IEC Long-Time Inverse', k: 120, alpha: 1, aliases: ['IEC LTI', 'IEC LI', 'IEC LONG TIME INVERSE', 'IEC LONG INVERSE'] },
  IEEE_MI: { kind: 'ieee', label: 'IEEE Moderately Inverse', a: 0.0515, b: 0.114, p: 0.02, aliases: ['IEEE MI', 'IEEE MODERATELY INVERSE'] },
  IEEE_VI: { kind: 'ieee', label: 'IEEE Very Inverse', a: 19.61, b: 0.491, p: 2, aliases: ['IEEE VI', 'IEEE VERY INVERSE'] },
  IEEE_EI: { kind: 'ieee', label: 'IEEE Extremely Inverse', a: 28.2, b: 0.1217, p: 2, aliases: ['IEEE EI', 'IEEE EXTREMELY INVERSE'] },
  DT: { kind: 'definite', label: 'Definite Time', aliases: ['DT', 'DEFINITE TIME', 'IEC DT'] },
} as const

export type CurveId = keyof typeof CURVES

/** Spellings are compared after upper-casing and treating runs of spaces, '-', '_', '.' and '/' as one space. */
export function normaliseCurveName(raw: string): string {
  return raw
    .toUpperCase()
    .replace(/[\s\-_./]+/g, ' ')
    .trim()
}

const CURVE_BY_ALIAS: ReadonlyMap<string, CurveId> = new Map(
  (Object.keys(CURVES) as CurveId[]).flatMap((id) => CURVES[id].aliases.map((alias) => [alias, id] as const)),
)

/** Every accepted spelling, in normalised form, for documentation and error messages. */
export const ACCEPTED_CURVE_NAMES: readonly string[] = [...CURVE_BY_ALIAS.keys()]

/** A 400 on `/protectionCurve` whose message lists every accepted name (also in the `acceptedCurveNames` extension). */
export class UnknownProtectionCurve extends domainError('ValidationFailed') {
  constructor(readonly curve: string) {
    const message =
      `Unknown protection curve ${JSON.stringify(curve)}. Accepted (case-insensitive; spaces, '-', '_', ` +
      `'.', '/' are interchangeable): ${ACCEPTED_CURVE_NAMES.join(', ')}.`
    super(message, {
      errors: [{ in: 'body', pointer: '/protectionCurve', message }],
      extensions: { acceptedCurveNames: ACCEPTED_CURVE_NAMES },
    })
    this.name = 'UnknownProtectionCurve'
  }
}

/**
 * A 400 naming the unusable setting or study value: a node's `/pickupA` or `/tms` (sent in a body), or the protection
 * reads' query parameters `/faultCurrentA` and `/gradingMarginS` (a number past the largest double reads as Infinity).
 */
export class InvalidProtectionInput extends domainError('ValidationFailed') {
  constructor(
    readonly field: string,
    message: string,
  ) {
    const where = field === 'faultCurrentA' || field === 'gradingMarginS' ? 'query' : 'body'
    super(message, { errors: [{ in: where, pointer: `/${field}`, message }] })
    this.name = 'InvalidProtectionInput'
  }
}

/** Maps a stored `protectionCurve` to its curve; throws UnknownProtectionCurve listing the accepted names. */
export function resolveCurve(name: string): CurveId {
  const id = CURVE_BY_ALIAS.get(normaliseCurveName(name))
  if (id === undefined) throw new UnknownProtectionCurve(name)
  return id
}

export interface RelaySetting {
  readonly curve: string
  readonly pickupA: number
  readonly tms: number
}

export type TripOutcome =
  | { readonly curve: CurveId; readonly multiple: number; readonly trips: true; readonly tripTimeS: number }
  | { readonly curve: CurveId; readonly multiple: number; readonly trips: false; readonly tripTimeS: null; readonly reason: 'AtOrBelowPickup' }

function requirePositive(field: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidProtectionInput(field, `${field} must be a finite number greater than 0 (got ${String(value)}).`)
  }
}

/**
 * Operating time of one relay for a fault current. At or below pickup it does not trip: the answer says so
 * with `tripTimeS: null` (never Infinity, which JSON cannot carry). Throws InvalidProtectionInput for a
 * pickup or TMS that is not finite and > 0, or a fault current that is not finite and ≥ 0.
 */
export function tripTime(setting: RelaySetting, faultCurrentA: number): TripOutcome {
  const curve = resolveCurve(setting.curve)
  requirePositive('pickupA', setting.pickupA)
  requirePositive('tms', setting.tms)
  if (typeof faultCurrentA !== 'number' || !Number.isFinite(faultCurrentA) || faultCurrentA < 0) {
    throw new InvalidProtectionInput('faultCurrentA', `faultCurrentA must be a finite number ≥ 0 (got ${String(faultCurrentA)}).`)
  }
  const ratio = faultCurrentA / setting.pickupA
  // Session 25: a stored pickup of 5e-324 A (finite and ≥ 0, as the node's rule asks), or a typed fault current near
  // the largest number, made the ratio Infinity: written as null where the answer declares a number, and the curve's
  // time 0, so a fault far above pickup was reported as not tripping. The ratio stated saturates at the largest
  // finite number; the time is computed from the logarithms, which stay finite.
  const multiple = Math.min(ratio, Number.MAX_VALUE)
  const noTrip = { curve, multiple, trips: false, tripTimeS: null, reason: 'AtOrBelowPickup' } as const
  if (!(ratio > 1)) return noTrip
  const spec = CURVES[curve]
  // expm1(x·ln M) keeps M^x − 1 accurate just above pickup, where plain pow() − 1 cancels to 0.
  const logM = Number.isFinite(ratio) ? Math.log(ratio) : Math.log(faultCurrentA) - Math.log(setting.pickupA)
  let seconds: number
  if (spec.kind === 'iec') seconds = (setting.tms * spec.k) / Math.expm1(spec.alpha * logM)
  else if (spec.kind === 'ieee') seconds = setting.tms * (spec.a / Math.expm1(spec.p * logM) + spec.b)
  else seconds = setting.tms
  if (!Number.isFinite(seconds) || seconds <= 0) return noTrip
  return { curve, multiple, trips: true, tripTimeS: seconds }
}

/** `points` currents spaced evenly on a logarithmic scale from `fromA` to `toA`, both included (0 < fromA < toA, points ≥ 2). */
export function logSpacedCurrents(fromA: number, toA: number, points: number): number[] {
  // Logarithms apart, not log(toA / fromA): that ratio overflows to Infinity for a fromA as small as 5e-324 A.
  const logFrom = Math.log(fromA)
  const step = (Math.log(toA) - logFrom) / (points - 1)
  // The ends are fromA and toA themselves, not exp(log(…)), which can miss them in the last digit.
  return Array.from({ length: points }, (_, i) => (i === 0 ? fromA : i === points - 1 ? toA : Math.exp(logFrom + step * i)))
}

/** A device's time–current curve sampled at these currents: tripTime() of each, null where it does not trip. */
export function sampleCurve(setting: RelaySetting, currentsA: readonly number[]): Array<number | null> {
  return currentsA.map((current) => tripTime(setting, current).tripTimeS)
}

export interface ProtectiveDevice extends RelaySetting {
  readonly id: string
  /** Current this device sees, when it differs from the study's (e.g. I·Vlv/Vhv on a transformer's HV side). */
  readonly faultCurrentA?: number
}

export type CoordinationStatus = 'OK' | 'Violation' | 'NotTripping'

export interface CoordinationRow {
  readonly deviceId: string
  readonly curve: CurveId
  readonly curveLabel: string
  readonly pickupA: number
  readonly tms: number
  readonly faultCurrentA: number
  readonly multiple: number
  readonly tripTimeS: number | null
  readonly upstreamDeviceId: string | null
  /** Upstream trip time minus this device's, when both trip. */
  readonly marginS: number | null
  readonly status: CoordinationStatus
}

export interface CoordinationReport {
  readonly faultCurrentA: number
  readonly gradingMarginS: number
  readonly rows: CoordinationRow[]
  readonly isCoordinated: boolean
  readonly violationCount: number
  /** The device that clears the fault (shortest trip time, the most downstream on a tie), if any trips. */
  readonly clearingDeviceId: string | null
}

// Margins equal to the setting up to floating-point noise (0.7 − 0.4 = 0.29999999999999993) count as met.
const MARGIN_TOLERANCE_S = 1e-9

/**
 * Grading check for devices ordered from the fault upstream to the supply: every device that trips must do
 * so at least `gradingMarginS` (default 0.3 s) before the next device upstream, unless that one does not
 * trip at all. A device that does not trip is reported as NotTripping, not as a grading violation.
 */
export function checkCoordination(devices: readonly ProtectiveDevice[], faultCurrentA: number, options: { gradingMarginS?: number } = {}): CoordinationReport {
  const gradingMarginS = options.gradingMarginS ?? 0.3
  if (typeof gradingMarginS !== 'number' || !Number.isFinite(gradingMarginS) || gradingMarginS < 0) {
    throw new InvalidProtectionInput('gradingMarginS', 'gradingMarginS must be a finite number ≥ 0.')
  }
  const outcomes = devices.map((d) => tripTime(d, d.faultCurrentA ?? faultCurrentA))
  const rows = devices.map((device, i): CoordinationRow => {
    const own = outcomes[i]!
    const upstream = outcomes[i + 1]
    const marginS = own.trips && upstream?.trips === true ? upstream.tripTimeS - own.tripTimeS : null
    const status: CoordinationStatus = !own.trips ? 'NotTripping' : marginS !== null && marginS < gradingMarginS - MARGIN_TOLERANCE_S ? 'Violation' : 'OK'
    return {
      deviceId: device.id,
      curve: own.curve,
      curveLabel: CURVES[own.curve].label,
      pickupA: device.pickupA,
      tms: device.tms,
      faultCurrentA: device.faultCurrentA ?? faultCurrentA,
      multiple: own.multiple,
      tripTimeS: own.tripTimeS,
      upstreamDeviceId: devices[i + 1]?.id ?? null,
      marginS,
      status,
    }
  })
  let clearing: CoordinationRow | null = null
  for (const row of rows) {
    if (row.tripTimeS !== null && (clearing === null || row.tripTimeS < clearing.tripTimeS!)) clearing = row
  }
  const violationCount = rows.filter((r) => r.status === 'Violation').length
  return {
    faultCurrentA,
    gradingMarginS,
    rows,
    isCoordinated: violationCount === 0,
    violationCount,
    clearingDeviceId: clearing?.deviceId ?? null,
  }
}

export interface SkippedDevice {
  readonly nodeId: string
  readonly reason: string
}

/**
 * Protective devices among nodes given in path order (fault first): every node with any protection field set.
 * A node whose curve, pickup or TMS is missing or unusable is skipped with the reason, never guessed.
 */
export function devicesFromNodes(nodes: readonly ElectricalNode[]): {
  devices: ProtectiveDevice[]
  skipped: SkippedDevice[]
} {
  const devices: ProtectiveDevice[] = []
  const skipped: SkippedDevice[] = []
  for (const node of nodes) {
    const { protectionCurve: curve, protectionPickupA: pickupA, protectionTms: tms } = node
    const hasCurve = typeof curve === 'string' && curve.trim() !== ''
    if (!hasCurve && pickupA == null && tms == null) continue
    if (!hasCurve) {
      skipped.push({ nodeId: node.id, reason: 'protectionCurve is not set' })
      continue
    }
    if (!CURVE_BY_ALIAS.has(normaliseCurveName(curve))) {
      skipped.push({ nodeId: node.id, reason: `unknown protectionCurve ${JSON.stringify(curve)}` })
      continue
    }
    if (typeof pickupA !== 'number' || !Number.isFinite(pickupA) || pickupA <= 0) {
      skipped.push({ nodeId: node.id, reason: 'protectionPickupA is not a finite number > 0' })
      continue
    }
    if (typeof tms !== 'number' || !Number.isFinite(tms) || tms <= 0) {
      skipped.push({ nodeId: node.id, reason: 'protectionTms is not a finite number > 0' })
      continue
    }
    devices.push({ id: node.id, curve, pickupA, tms })
  }
  return { devices, skipped }
}

/** The protective devices met walking a supply path from its node (the fault) to the supply. */
/**
 * Devices on a supply path whose currents and zone-end checks the short-circuit study gives (coordination, protection
 * curves): each costs a walk of the network and a solve. Supply paths of plants hold a handful; a longer list is a
 * 422 unless `faultCurrentA` is typed (the devices then take the referral by ratios and no minimum-fault check).
 */
export const MAX_STUDIED_DEVICES = 100

export function devicesOnSupplyPath(graph: Graph, path: SupplyPath): ReturnType<typeof devicesFromNodes> {
  return devicesFromNodes(path.nodeIds.map((id) => graph.nodes[graph.indexOf.get(id)!]!))
}

/**
 * Fault currents along a supply path (issue 31). The path runs from the faulted node (first) to the supply; a device
 * on it sees the current at the fault referred through every transformer between them by the transformer's rated
 * voltage ratio, from the side the fault is on to the other (I·UrLV/UrHV on the HV side of an LV fault, I·UrHV/UrLV
 * on the LV side of an HV fault): the current each winding carries, whatever the buses' nominal voltages. A
 * transformer node's own device measures on its supply side (the side towards the path's supply), and a fault at a
 * transformer node is a fault at its supply-side terminals. The side a fault is on is the winding whose rated voltage
 * is nearer (by ratio) the fault's nominal voltage, then the rated voltage of the winding last crossed.
 */
export interface PathCurrents {
  /** `ratios[k]`: the current at path node k over the current at the fault; NaN past the devices asked for. */
  readonly ratios: number[]
  /** Transformer ratings (and the fault's nominal voltage) the referral needs and the network lacks. */
  readonly missing: MissingStudyData[]
}

const isTransformer = (node: ElectricalNode) => node.nodeType === NodeType.PowerTransformer

/** The current ratio of each path node up to index `through` (the last device met); the rest NaN. */
export function pathCurrentRatios(graph: Graph, path: SupplyPath, through: number): PathCurrents {
  const nodes = path.nodeIds.map((id) => graph.nodes[graph.indexOf.get(id)!]!)
  const missing: MissingStudyData[] = []
  const ratios = nodes.map(() => Number.NaN)
  let ratio = 1
  let faultKv: number | null | undefined
  let sideKv: number | null = null
  for (let k = 0; k <= through && k < nodes.length; k++) {
    const node = nodes[k]!
    if (k > 0 && isTransformer(node) && node.study?.mvRatedVoltageKv !== undefined) {
      // A three-winding transformer: the rated voltage of the winding towards the fault over that of the winding
      // towards the supply, each found by the neighbour its hvNodeId / mvNodeId / lvNodeId names.
      const windingKv = (neighbour: ElectricalNode | undefined) => {
        const winding = (['hv', 'mv', 'lv'] as const).find((w) => neighbour !== undefined && node.study?.[`${w}NodeId`] === neighbour.id)
        const kv = winding === undefined ? undefined : node.study?.[`${winding}RatedVoltageKv`]
        if (typeof kv !== 'number') {
          // No winding names that neighbour: the parameter naming none of the transformer's neighbours is wrong.
          const i = graph.indexOf.get(node.id)!
          const around = new Set(Array.from(graph.adjNode.subarray(graph.adjStart[i]!, graph.adjStart[i + 1]!), (j) => graph.nodes[j]!.id))
          const unnamed = (['hvNodeId', 'mvNodeId', 'lvNodeId'] as const).find((p) => !around.has(node.study?.[p] as string)) ?? 'hvNodeId'
          missing.push({
            nodeId: node.id,
            parameter: winding === undefined ? unnamed : `${winding}RatedVoltageKv`,
            reason: `the winding towards ${neighbour?.id ?? 'the supply'} and its rated voltage, to refer the fault current through this transformer`,
          })
        }
        return typeof kv === 'number' ? kv : Number.NaN
      }
      const [towardsFault, towardsSupply] = [windingKv(nodes[k - 1]), windingKv(nodes[k + 1])]
      ratio *= towardsFault / towardsSupply
      faultKv ??= towardsFault
      sideKv = Number.isNaN(towardsSupply) ? null : towardsSupply
    } else if (k > 0 && isTransformer(node)) {
      if (faultKv === undefined) {
        // The nominal voltage of the fault's bus (the export's buses: ratings propagate through lines and switches).
        const faultAt = graph.indexOf.get(path.nodeIds[isTransformer(nodes[0]!) ? 1 : 0]!)!
        const model = buildBuses(graph, () => undefined)
        faultKv = model.vn[model.busesByNodeIndex[faultAt]![0]!] ?? null
        sideKv = faultKv
        if (faultKv === null) {
          missing.push({
            nodeId: graph.nodes[faultAt]!.id,
            parameter: 'ratedVoltageV',
            reason: `the nominal voltage at the fault, to tell the sides of transformer ${node.id} apart`,
          })
        }
      }
      const hv = node.study?.hvRatedVoltageKv
      const lv = node.study?.lvRatedVoltageKv
      const reason = 'the rated voltage ratio that refers the fault current to the devices beyond this transformer'
      if (typeof hv !== 'number') missing.push({ nodeId: node.id, parameter: 'hvRatedVoltageKv', reason })
      if (typeof lv !== 'number') missing.push({ nodeId: node.id, parameter: 'lvRatedVoltageKv', reason })
      if (typeof hv === 'number' && typeof lv === 'number' && sideKv !== null) {
        const faultOnHv: boolean = Math.abs(Math.log(sideKv / hv)) < Math.abs(Math.log(sideKv / lv))
        ratio *= faultOnHv ? hv / lv : lv / hv
        sideKv = faultOnHv ? lv : hv
      } else ratio = Number.NaN
    }
    ratios[k] = ratio
  }
  return { ratios, missing }
}

/** A bus's fault levels from the short-circuit study, by a node on it. */
export interface FaultLevel {
  readonly busId: string
  readonly ikssMaxKa: number
  readonly ikssMinKa: number
  /** The least fault the study computes there: line-to-line, minimum case (I″k2 min = √3/2 · I″k min). */
  readonly ikssTwoPhaseMinKa: number
}

/** For each path node, the bus a fault at it sits on (a transformer: the next node's towards the supply), or null. */
export function faultLevelsAlong(graph: Graph, path: SupplyPath, levelOf: (nodeId: string) => FaultLevel | undefined): (FaultLevel | null)[] {
  return path.nodeIds.map((_, k) => levelOf(path.nodeIds[faultIndexAlong(graph, path, k)]!) ?? null)
}

/** The path index a fault at path node `k` is taken at: a transformer node's at the next node towards the supply. */
export function faultIndexAlong(graph: Graph, path: SupplyPath, k: number): number {
  let at = k
  while (at < path.nodeIds.length - 1 && isTransformer(graph.nodes[graph.indexOf.get(path.nodeIds[at]!)!]!)) at++
  return at
}

export interface MinimumFaultCheck {
  /** Where the device's zone ends: the bus of the next device towards the fault, or the faulted node's for the first. */
  readonly zoneEndBusId: string | null
  /** The least fault at the zone's end (I″k2 min), in amperes as the device sees it (referred through the transformers between). */
  readonly zoneEndMinFaultA: number | null
  /** The pickup exceeds that current: the device does not see the least fault at the end of its zone. */
  readonly pickupAboveMinFault: boolean | null
}

/**
 * The minimum-fault check of each device (`deviceIndex`: its place on the path, fault end first). A device's
 * protected zone runs from it towards the fault as far as the next device (which protects the rest), so its end is
 * that device's location, or the faulted node for the device nearest the fault. Null where the study has no level there.
 * `shares`: per device, the part of the zone end's fault current it carries (the study's branch current for that fault,
 * minimum case, over the bus's I″k min; a generator on the fault's side of it feeds the rest), else null: the ratios.
 */
export function minimumFaultChecks(
  deviceIndex: readonly number[],
  pickupsA: readonly number[],
  ratios: readonly number[],
  levels: readonly (FaultLevel | null)[],
  shares: readonly (number | null)[],
): MinimumFaultCheck[] {
  return deviceIndex.map((k, d) => {
    const end = d === 0 ? 0 : deviceIndex[d - 1]!
    const level = levels[end]
    if (!level) return { zoneEndBusId: null, zoneEndMinFaultA: null, pickupAboveMinFault: null }
    const seenA = level.ikssTwoPhaseMinKa * 1000 * (shares[d] ?? ratios[k]! / ratios[end]!)
    return { zoneEndBusId: level.busId, zoneEndMinFaultA: seenA, pickupAboveMinFault: pickupsA[d]! > seenA }
  })
}
