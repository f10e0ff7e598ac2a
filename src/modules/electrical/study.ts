import type { FieldProblem } from '../../errors/domain-error.ts'
import { NODE_TYPES, NodeType } from './codes.ts'
import type { NodeStudyInput } from './schemas.ts'

/**
 * Study parameters (issue 31): what the short-circuit study and the load flow read of a node, beside the spec's
 * fields. Every name carries its unit. `rOhmPerKm` / `xOhmPerKm` / `ampacityA` describe the cable or line feeding the
 * node (the node a circuit feeds records its cable, like `cableLengthM`), so any node type may carry them; the others belong to
 * the node types listed here, and a parameter sent for another type is refused (400 naming it).
 */
export const CIRCUIT_FIELDS = ['rOhmPerKm', 'xOhmPerKm', 'ampacityA', 'r0OhmPerKm', 'x0OhmPerKm', 'c0NfPerKm'] as const

/**
 * A transformer with three connections is a three-winding transformer (IEC 60909-0 §6.3.2): these describe it, with
 * hvRatedVoltageKv, lvRatedVoltageKv and vectorGroup; giving any of them makes the transformer three-winding.
 */
export const THREE_WINDING_FIELDS = [
  'hvRatedPowerKva',
  'mvRatedPowerKva',
  'lvRatedPowerKva',
  'mvRatedVoltageKv',
  'ukHvMvPercent',
  'ukHvLvPercent',
  'ukMvLvPercent',
  'urHvMvPercent',
  'urHvLvPercent',
  'urMvLvPercent',
  'hvNodeId',
  'mvNodeId',
  'lvNodeId',
] as const
/** Parameters of a two-winding transformer a three-winding one does not take. */
const TWO_WINDING_ONLY = [
  'ratedPowerKva',
  'ukPercent',
  'urPercent',
  'xrRatio',
  'uk0Percent',
  'ur0Percent',
  'neutralEarthingROhm',
  'neutralEarthingXOhm',
  'tapChanger',
  'offLoadTapPercent',
] as const

export const STUDY_FIELDS_BY_TYPE: Readonly<Partial<Record<number, readonly (keyof NodeStudyInput)[]>>> = {
  [NodeType.UtilitySupply]: ['scPowerMaxMva', 'scPowerMinMva', 'scCurrentMaxKa', 'scCurrentMinKa', 'rxRatio', 'voltageSetpointPu', 'x0x1Ratio', 'r0x0Ratio'],
  [NodeType.PowerTransformer]: ['hvRatedVoltageKv', 'lvRatedVoltageKv', 'vectorGroup', ...TWO_WINDING_ONLY, ...THREE_WINDING_FIELDS],
  [NodeType.Generator]: [
    'ratedPowerKva',
    'ratedVoltageKv',
    'xdSubtransientPercent',
    'rxRatio',
    'powerFactor',
    'activePowerKw',
    'voltageSetpointPu',
    'neutralEarthing',
    'x0Percent',
    'neutralEarthingROhm',
    'neutralEarthingXOhm',
    'voltageRangePercent',
    'unitTransformerId',
  ],
  [NodeType.Motor]: ['ratedPowerKw', 'ratedVoltageKv', 'powerFactor', 'efficiencyPercent', 'lockedRotorRatio', 'rxRatio'],
  [NodeType.FeederLoad]: ['activePowerKw', 'powerFactor'],
}

/** The parameters a node of this type may carry. */
export function studyFieldsOf(nodeType: number): readonly string[] {
  return [...(STUDY_FIELDS_BY_TYPE[nodeType] ?? []), ...CIRCUIT_FIELDS]
}

/** Rules across fields and types the schema cannot state; problems point at `${prefix}/study/<field>`. */
export function studyProblems(study: NodeStudyInput, nodeType: number, prefix = ''): FieldProblem[] {
  const problems: FieldProblem[] = []
  const at = (field: string, message: string) => problems.push({ in: 'body', pointer: `${prefix}/study/${field}`, message })
  const allowed = studyFieldsOf(nodeType)
  const typeName = NODE_TYPES[nodeType]?.name ?? String(nodeType)
  for (const [field, value] of Object.entries(study)) {
    // JSON's 1e400 arrives as Infinity, which the schema's bounds let through: the number rule first, for any field.
    if (typeof value === 'number' && !Number.isFinite(value)) at(field, 'must be a finite number')
    else if (!allowed.includes(field)) at(field, `is not a study parameter of a ${typeName} (its parameters: ${allowed.join(', ')})`)
  }
  if (problems.length > 0) return problems
  if (nodeType === NodeType.PowerTransformer && THREE_WINDING_FIELDS.some((f) => study[f] !== undefined)) {
    threeWindingProblems(study, at)
    return problems
  }
  const pairs = [
    ['scPowerMaxMva', 'scCurrentMaxKa'],
    ['scPowerMinMva', 'scCurrentMinKa'],
    ['urPercent', 'xrRatio'],
  ] as const
  for (const [a, b] of pairs) if (study[a] !== undefined && study[b] !== undefined) at(b, `give either ${a} or ${b}, not both`)
  if (study.hvRatedVoltageKv !== undefined && study.lvRatedVoltageKv !== undefined && !(study.hvRatedVoltageKv > study.lvRatedVoltageKv)) {
    at('lvRatedVoltageKv', 'must be below hvRatedVoltageKv')
  }
  if (study.urPercent !== undefined && study.ukPercent !== undefined && !(study.urPercent < study.ukPercent)) at('urPercent', 'must be below ukPercent')
  if (study.ur0Percent !== undefined && study.uk0Percent !== undefined && !(study.ur0Percent < study.uk0Percent)) at('ur0Percent', 'must be below uk0Percent')
  const earthingImpedance = study.neutralEarthingROhm !== undefined || study.neutralEarthingXOhm !== undefined
  const field = study.neutralEarthingROhm !== undefined ? 'neutralEarthingROhm' : 'neutralEarthingXOhm'
  if (earthingImpedance && nodeType === NodeType.PowerTransformer && earthedStarPoints(study.vectorGroup) !== 1) {
    at(field, 'needs a vectorGroup with exactly one earthed star point (YNd, Dyn, YNy, Yyn)')
  }
  if (earthingImpedance && nodeType === NodeType.Generator && study.neutralEarthing !== 'earthed') at(field, 'needs neutralEarthing `earthed`')
  if (study.offLoadTapPercent !== undefined && study.tapChanger !== 'offLoad') at('offLoadTapPercent', 'needs tapChanger `offLoad`')
  if (windingsOf(study.vectorGroup) === 3)
    at(
      'vectorGroup',
      "names three windings; a two-winding transformer's names two (a three-winding one gives mvRatedVoltageKv and the other per-winding parameters)",
    )
  if (study.scPowerMinMva !== undefined && study.scPowerMaxMva !== undefined && study.scPowerMinMva > study.scPowerMaxMva) {
    at('scPowerMinMva', 'must not exceed scPowerMaxMva')
  }
  if (study.scCurrentMinKa !== undefined && study.scCurrentMaxKa !== undefined && study.scCurrentMinKa > study.scCurrentMaxKa) {
    at('scCurrentMinKa', 'must not exceed scCurrentMaxKa')
  }
  return problems
}

/** How many windings of a vector group (`Dyn11`) have their star point earthed (an N or n); 0 when absent. */
export function earthedStarPoints(vectorGroup: string | undefined): number {
  return vectorGroup === undefined ? 0 : (vectorGroup.match(/n/gi) ?? []).length
}

/** A three-winding transformer's rules: windings ordered by voltage, uR below uk per pair, three distinct neighbours. */
function threeWindingProblems(study: NodeStudyInput, at: (field: string, message: string) => void): void {
  for (const field of TWO_WINDING_ONLY) {
    if (study[field] !== undefined) at(field, "is a two-winding transformer's parameter; a three-winding one takes per-winding rated powers and per-pair uk/uR")
  }
  const { hvRatedVoltageKv: hv, mvRatedVoltageKv: mv, lvRatedVoltageKv: lv } = study
  if (hv !== undefined && mv !== undefined && !(hv > mv)) at('mvRatedVoltageKv', 'must be below hvRatedVoltageKv')
  if (mv !== undefined && lv !== undefined && !(mv >= lv)) at('lvRatedVoltageKv', 'must not exceed mvRatedVoltageKv')
  for (const pair of ['HvMv', 'HvLv', 'MvLv'] as const) {
    const uk = study[`uk${pair}Percent`]
    const ur = study[`ur${pair}Percent`]
    if (uk !== undefined && ur !== undefined && !(ur < uk)) at(`ur${pair}Percent`, `must be below uk${pair}Percent`)
  }
  if (windingsOf(study.vectorGroup) === 2) at('vectorGroup', "names two windings; a three-winding transformer's names three, HV, MV, LV (e.g. YNyn0d5)")
  if (study.mvNodeId !== undefined && study.mvNodeId === study.hvNodeId) at('mvNodeId', 'must name another node than hvNodeId')
  if (study.lvNodeId !== undefined && [study.hvNodeId, study.mvNodeId].includes(study.lvNodeId))
    at('lvNodeId', 'must name another node than hvNodeId and mvNodeId')
}

/** How many windings a vector group names (`YNyn0d5`: 3); 0 when absent. */
function windingsOf(vectorGroup: string | undefined): number {
  return vectorGroup === undefined ? 0 : (vectorGroup.match(/[YDZ]/gi) ?? []).length
}
