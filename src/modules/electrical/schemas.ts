import { Type, type Static, type TSchema } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'
import { EDGE_TYPES, NODE_TYPES, openApiEnumAnnotations } from './codes.ts'
import { ACCEPTED_CURVE_NAMES, CURVES } from './protection.ts'

/** Bounds of spec 2.5 / 2.6 and the ones this area adds (tag bindings, metadata, bulk load). */
export const LIMITS = {
  nodeIdMax: 50,
  nameMax: 200,
  cableSizeMax: 100,
  protectionCurveMax: 50,
  descriptionMax: 500,
  edgeEndMax: 50,
  tagBindingsMaxKeys: 200,
  tagKeyMax: 100,
  tagValueMax: 500,
  metadataMaxKeys: 100,
  metadataMaxBytes: 16_384,
} as const

const nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description })

export const NodeTypeCode = Type.Integer({ ...openApiEnumAnnotations(NODE_TYPES), title: 'NodeType' })
export const EdgeTypeCode = Type.Integer({ ...openApiEnumAnnotations(EDGE_TYPES), title: 'EdgeType' })

const NodeId = Type.String({
  minLength: 1,
  maxLength: LIMITS.nodeIdMax,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description:
    "The node's id, 1 to 50 characters (no control characters), unique in the site; chosen by the client (e.g. " +
    'the single-line diagram tag `MSB-1`). Not updatable.',
  examples: ['MSB-1'],
})

const curveDoc =
  `IEC 60255-151 / IEEE C37.112 curve, nullable, 0 to 50 characters. Accepted names (case-insensitive; spaces, '-', '_', '.', '/' interchangeable): ` +
  `${(Object.keys(CURVES) as Array<keyof typeof CURVES>).map((id) => `${id} (${CURVES[id].label})`).join(', ')}, ` +
  `and the spellings ${ACCEPTED_CURVE_NAMES.join(', ')}. ` +
  'An unknown name is refused with a 400 naming `protectionCurve` and listing the accepted names; ' +
  'an empty string means no curve. For DT (definite time) `protectionTms` holds the delay in seconds.'

const physical = (unit: string, what: string) =>
  nullable(Type.Number({ minimum: 0 }), `${what} in ${unit}: a finite number ≥ 0 (negative or non-finite: 400 naming the field); null clears it.`)

const positive = (description: string, extra: Record<string, number> = {}) =>
  Type.Optional(Type.Number({ exclusiveMinimum: 0, ...extra, description: `${description}; finite, > 0.` }))

/**
 * Study parameters (issue 31), per node type (study.ts holds which type takes which; another type's parameter: 400
 * naming it). Units in every name. Nothing is defaulted: a study that needs a missing one answers 422 naming it.
 */
const STUDY_DOC =
  'Study parameters of the node (short circuit, load flow). Per node type: UtilitySupply scPowerMaxMva|scCurrentMaxKa, scPowerMinMva|scCurrentMinKa, rxRatio, ' +
  'voltageSetpointPu, x0x1Ratio, r0x0Ratio; PowerTransformer ratedPowerKva, hvRatedVoltageKv, lvRatedVoltageKv, ukPercent, urPercent|xrRatio, vectorGroup, ' +
  'uk0Percent, ur0Percent, neutralEarthingROhm, neutralEarthingXOhm, tapChanger, offLoadTapPercent; a three-winding PowerTransformer (three connections) ' +
  'instead hvRatedPowerKva, mvRatedPowerKva, lvRatedPowerKva, hvRatedVoltageKv, mvRatedVoltageKv, lvRatedVoltageKv, ukHvMvPercent, ukHvLvPercent, ukMvLvPercent, ' +
  'urHvMvPercent, urHvLvPercent, urMvLvPercent, hvNodeId, mvNodeId, lvNodeId, vectorGroup; Generator ratedPowerKva, ' +
  'ratedVoltageKv, xdSubtransientPercent, rxRatio, powerFactor, activePowerKw, voltageSetpointPu, neutralEarthing, x0Percent, neutralEarthingROhm, ' +
  'neutralEarthingXOhm, voltageRangePercent, unitTransformerId; Motor ratedPowerKw, ratedVoltageKv, powerFactor, ' +
  'efficiencyPercent, lockedRotorRatio, rxRatio; FeederLoad activePowerKw, powerFactor; any node fed by a cable or line rOhmPerKm, xOhmPerKm, ampacityA, ' +
  'r0OhmPerKm, x0OhmPerKm, c0NfPerKm. The zero-sequence parameters are read only by the earth-fault (single-phase-to-earth) currents. ' +
  'A parameter of another type: 400 naming it. ' +
  'In an update the object replaces the stored one whole; null clears it.'

export const NodeStudy = Type.Object(
  {
    rOhmPerKm: positive(
      "Any node fed by a Cable or OverheadLine edge: resistance per km of that circuit (its length is `cableLengthM`); without it and xOhmPerKm, a cable takes the cable table's values for a `cableSize` naming size and conductor (`185mm² Cu`)",
    ),
    xOhmPerKm: positive('Any node fed by a Cable or OverheadLine edge: reactance per km of that circuit at the system frequency'),
    ampacityA: positive(
      'Any node fed by a Cable or OverheadLine edge: current-carrying capacity of that circuit as installed (the load flow reports its loading)',
    ),
    r0OhmPerKm: positive(
      'Any node fed by a Cable or OverheadLine edge: zero-sequence resistance per km of that circuit (earth faults; the cable table has no zero-sequence values)',
    ),
    x0OhmPerKm: positive('Any node fed by a Cable or OverheadLine edge: zero-sequence reactance per km of that circuit (earth faults)'),
    c0NfPerKm: positive(
      'Any node fed by a Cable or OverheadLine edge: zero-sequence capacitance per km of that circuit (earth faults, optional: without it the capacitance is neglected, as IEC 60909-0 does; with it, half at each end, as pandapower does)',
    ),
    scPowerMaxMva: positive('UtilitySupply: maximum short-circuit power S″kQmax at the connection point (or scCurrentMaxKa)'),
    scPowerMinMva: positive('UtilitySupply: minimum short-circuit power S″kQmin (or scCurrentMinKa)'),
    scCurrentMaxKa: positive('UtilitySupply: maximum initial short-circuit current I″kQmax at the connection point (or scPowerMaxMva)'),
    scCurrentMinKa: positive('UtilitySupply: minimum initial short-circuit current I″kQmin (or scPowerMinMva)'),
    rxRatio: positive('UtilitySupply: RQ/XQ of the grid; Generator: RG/X″d; Motor: RM/XM'),
    x0x1Ratio: positive('UtilitySupply: X(0)Q/X(1)Q of the grid at the connection point, both cases (earth faults; pandapower x0x_max/x0x_min)'),
    r0x0Ratio: positive('UtilitySupply: R(0)Q/X(0)Q of the grid (earth faults; pandapower r0x0_max/r0x0_min)'),
    ratedPowerKva: positive('PowerTransformer: rated power SrT; Generator: rated power SrG'),
    hvRatedVoltageKv: positive('PowerTransformer: rated voltage of the HV winding UrTHV'),
    lvRatedVoltageKv: positive('PowerTransformer: rated voltage of the LV winding UrTLV'),
    ukPercent: positive('PowerTransformer: short-circuit voltage ukr', { maximum: 100 }),
    urPercent: positive('PowerTransformer: resistive part of the short-circuit voltage uRr (or xrRatio)', { maximum: 100 }),
    xrRatio: positive('PowerTransformer: X/R of the transformer (or urPercent)'),
    vectorGroup: Type.Optional(
      Type.String({
        pattern: '^[YyDdZz][Nn]?[YyDdZz][Nn]?(0|1|2|3|4|5|6|7|8|9|10|11)?([YyDdZz][Nn]?(0|1|2|3|4|5|6|7|8|9|10|11)?)?$',
        description:
          'PowerTransformer: vector group, e.g. `Dyn11`: HV winding then LV winding, Y/y star, D/d delta, Z/z zig-zag, N/n the star point earthed ' +
          '(directly, or through neutralEarthingROhm/XOhm). Earth faults: YNd and Dyn earth their star side, YNyn passes zero sequence through, ' +
          'the others block it; zig-zag windings are not modelled. The phase-shift number is not used. A three-winding transformer has three ' +
          'windings, HV, MV, LV (`YNyn0d5`); earth faults through it are not modelled (the buses it joins are listed in `earthFaults`).',
      }),
    ),
    hvRatedPowerKva: positive('Three-winding PowerTransformer: rated power of the HV winding SrTHV'),
    mvRatedPowerKva: positive('Three-winding PowerTransformer: rated power of the MV winding SrTMV'),
    lvRatedPowerKva: positive('Three-winding PowerTransformer: rated power of the LV winding SrTLV'),
    mvRatedVoltageKv: positive('Three-winding PowerTransformer: rated voltage of the MV winding UrTMV'),
    ukHvMvPercent: positive('Three-winding PowerTransformer: short-circuit voltage HV–MV ukrAB, on the smaller rated power of the two windings', {
      maximum: 100,
    }),
    ukHvLvPercent: positive('Three-winding PowerTransformer: short-circuit voltage HV–LV ukrAC, on the smaller rated power of the two windings', {
      maximum: 100,
    }),
    ukMvLvPercent: positive('Three-winding PowerTransformer: short-circuit voltage MV–LV ukrBC, on the smaller rated power of the two windings', {
      maximum: 100,
    }),
    urHvMvPercent: positive('Three-winding PowerTransformer: resistive part uRrAB of ukHvMvPercent', { maximum: 100 }),
    urHvLvPercent: positive('Three-winding PowerTransformer: resistive part uRrAC of ukHvLvPercent', { maximum: 100 }),
    urMvLvPercent: positive('Three-winding PowerTransformer: resistive part uRrBC of ukMvLvPercent', { maximum: 100 }),
    hvNodeId: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Three-winding PowerTransformer: the id of the neighbouring node its HV winding connects to (one of its three connections; a study names the transformer and this parameter in a 422 when it is not)',
      }),
    ),
    mvNodeId: Type.Optional(
      Type.String({ minLength: 1, description: 'Three-winding PowerTransformer: the id of the neighbouring node its MV winding connects to' }),
    ),
    lvNodeId: Type.Optional(
      Type.String({ minLength: 1, description: 'Three-winding PowerTransformer: the id of the neighbouring node its LV winding connects to' }),
    ),
    tapChanger: Type.Optional(
      Type.String({
        enum: ['onLoad', 'offLoad', 'none'],
        description:
          'PowerTransformer that is the unit transformer of a power station unit (a Generator names it in unitTransformerId): `onLoad` (on-load tap changer: ' +
          'the unit takes KS, IEC 60909-0 §6.7.1), `offLoad` or `none` (KSO, §6.7.2). Required for a unit transformer (422 naming it).',
      }),
    ),
    offLoadTapPercent: positive(
      'PowerTransformer with tapChanger `offLoad`: pT, the off-load tap permanently used, in % (KSO takes 1 − pT); absent: no tap permanently used (1)',
      { maximum: 50 },
    ),
    voltageRangePercent: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 50,
        description:
          'Generator: pG, the range of its terminal voltage regulation above rated voltage, in % (KG and KSO divide by 1 + pG, IEC 60909-0 eq. 18 and 23; pandapower pg_percent); absent: 0; finite, 0 to 50.',
      }),
    ),
    unitTransformerId: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "Generator: the id of its unit transformer (a two-winding PowerTransformer whose LV side is on the generator's bus): the pair is a power station unit, " +
          "corrected by KS or KSO (by the transformer's tapChanger) instead of KG and KT; a fault on the bus between them takes KG alone and the " +
          'transformer uncorrected (as pandapower does). A study answers 422 naming this parameter when the node is not such a transformer.',
      }),
    ),
    uk0Percent: positive(
      'PowerTransformer: zero-sequence short-circuit voltage uk(0) seen from the earthed star winding (earth faults; pandapower vk0_percent)',
      {
        maximum: 100,
      },
    ),
    ur0Percent: positive('PowerTransformer: resistive part of uk(0) (earth faults; pandapower vkr0_percent)', { maximum: 100 }),
    neutralEarthingROhm: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          'PowerTransformer with one earthed star point (YNd, Dyn), Generator with neutralEarthing `earthed`: resistance of the earthing impedance ZN ' +
          'between star point and earth, ohms (3·ZN enters the zero-sequence impedance); absent with neutralEarthingXOhm: directly earthed; finite, ≥ 0.',
      }),
    ),
    neutralEarthingXOhm: Type.Optional(
      Type.Number({ minimum: 0, description: 'Reactance of that earthing impedance ZN (an earthing reactor), ohms; finite, ≥ 0.' }),
    ),
    neutralEarthing: Type.Optional(
      Type.String({
        enum: ['isolated', 'earthed'],
        description:
          'Generator: whether its star point is earthed (earth faults). `earthed` needs x0Percent, and takes neutralEarthingROhm/XOhm as its earthing impedance.',
      }),
    ),
    x0Percent: positive('Generator: zero-sequence reactance X(0)G in % of the rated impedance (earth faults; R(0)G = rxRatio·X(0)G)', { maximum: 1000 }),
    ratedVoltageKv: positive('Generator: rated voltage UrG; Motor: rated voltage UrM'),
    xdSubtransientPercent: positive('Generator: subtransient reactance x″d in % of the rated impedance', { maximum: 1000 }),
    powerFactor: positive('Generator: rated cos φrG; Motor: rated cos φrM; FeederLoad: cos φ (lagging)', { maximum: 1 }),
    ratedPowerKw: positive('Motor: rated mechanical power PrM'),
    efficiencyPercent: positive('Motor: rated efficiency ηrM', { maximum: 100 }),
    lockedRotorRatio: positive('Motor: locked-rotor current over rated current ILR/IrM'),
    activePowerKw: positive(
      "FeederLoad: active power drawn; Generator: active power output held by the load flow (not read where the generator is its island's slack)",
    ),
    voltageSetpointPu: Type.Optional(
      Type.Number({
        minimum: 0.8,
        maximum: 1.2,
        description:
          "UtilitySupply, Generator: voltage the load flow holds at the node, per unit of its bus's nominal voltage (1.0 when not given, stated in the answer); 0.8 to 1.2.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: STUDY_DOC,
  },
)
export type NodeStudyInput = Static<typeof NodeStudy>

/** The nullable fields of spec 2.5 that create and update share. */
const sharedFields = {
  ratedVoltageV: Type.Optional(physical('volts', 'Rated (system) voltage')),
  ratedCurrentA: Type.Optional(physical('amperes', 'Rated current')),
  ratedPowerKw: Type.Optional(physical('kW (kVA for a transformer, kvar for a capacitor bank)', 'Rated power')),
  impedanceOhms: Type.Optional(physical('ohms', 'Impedance')),
  cableSize: Type.Optional(
    nullable(
      Type.String({ maxLength: LIMITS.cableSizeMax }),
      'Cable size as written on the drawing (e.g. `3C+E 185mm² Cu XLPE`), 0 to 100 characters; null clears it.',
    ),
  ),
  cableLengthM: Type.Optional(physical('metres', 'Length of the cable feeding this node')),
  protectionCurve: Type.Optional(nullable(Type.String({ maxLength: LIMITS.protectionCurveMax }), curveDoc)),
  protectionPickupA: Type.Optional(physical('amperes', 'Protection pickup (setting) current Is')),
  protectionTms: Type.Optional(physical('seconds for DT, dimensionless otherwise', 'Time multiplier setting (TMS / time dial TD)')),
  description: Type.Optional(nullable(Type.String({ maxLength: LIMITS.descriptionMax }), 'Free text, 0 to 500 characters; null clears it.')),
  study: Type.Optional(Type.Union([NodeStudy, Type.Null()], { description: STUDY_DOC })),
}

export const TagBindings = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: LIMITS.tagValueMax }), {
  maxProperties: LIMITS.tagBindingsMaxKeys,
  propertyNames: { minLength: 1, maxLength: LIMITS.tagKeyMax },
  description:
    `Create-only. Signal name → historian/instance tag (e.g. \`"current": "MSB1.I_A"\`): ` +
    `up to ${LIMITS.tagBindingsMaxKeys} keys of 1 to ${LIMITS.tagKeyMax} characters, values of 1 to ${LIMITS.tagValueMax}.`,
})

export const NodeMetadata = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: LIMITS.metadataMaxKeys,
  propertyNames: { minLength: 1, maxLength: 100 },
  description:
    `Create-only. Any JSON values: up to ${LIMITS.metadataMaxKeys} top-level keys of 1 to 100 characters, ` +
    `at most ${LIMITS.metadataMaxBytes} bytes as JSON.`,
})

export const CreateNodeBody = Type.Object(
  {
    id: NodeId,
    name: Type.String({
      minLength: 1,
      maxLength: LIMITS.nameMax,
      description: 'Required on create, 1 to 200 characters (an update may later set it to empty or null, spec 2.5).',
    }),
    nodeType: NodeTypeCode,
    ...sharedFields,
    tagBindings: Type.Optional(TagBindings),
    metadata: Type.Optional(NodeMetadata),
  },
  { $id: 'CreateNodeBody', additionalProperties: false },
)
export type CreateNodeInput = Static<typeof CreateNodeBody>

const CREATE_ONLY_NOTE = 'Create-only: any value sent in an update is refused with a 400 naming this field.'

export const UpdateNodeBody = Type.Object(
  {
    id: Type.Optional(Type.Unknown({ description: 'Not updatable: any value is refused with a 400 naming `id`.' })),
    name: Type.Optional(nullable(Type.String({ maxLength: LIMITS.nameMax }), '0 to 200 characters; null clears it.')),
    nodeType: Type.Optional(NodeTypeCode),
    ...sharedFields,
    tagBindings: Type.Optional(Type.Unknown({ description: CREATE_ONLY_NOTE })),
    metadata: Type.Optional(Type.Unknown({ description: CREATE_ONLY_NOTE })),
  },
  {
    $id: 'UpdateNodeBody',
    additionalProperties: false,
    description:
      'Spec 2.5: only the fields present change; a null clears a nullable field. ' +
      '`id` is not updatable (400 if sent); `tagBindings` and `metadata` are create-only (400 naming the field).',
  },
)
export type UpdateNodeInput = Static<typeof UpdateNodeBody>

const NullableNumber = Type.Union([Type.Number(), Type.Null()])
const NullableString = Type.Union([Type.String(), Type.Null()])

export const NodeSchema = Type.Object(
  {
    id: Type.String(),
    siteId: Type.String(),
    name: NullableString,
    nodeType: NodeTypeCode,
    nodeTypeName: Type.String({ description: 'The name of `nodeType`.' }),
    ratedVoltageV: NullableNumber,
    ratedCurrentA: NullableNumber,
    ratedPowerKw: NullableNumber,
    impedanceOhms: NullableNumber,
    cableSize: NullableString,
    cableLengthM: NullableNumber,
    protectionCurve: NullableString,
    protectionPickupA: NullableNumber,
    protectionTms: NullableNumber,
    description: NullableString,
    tagBindings: Type.Record(Type.String(), Type.String()),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    study: NodeStudy,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'ElectricalNode', additionalProperties: false },
)
export type Node = Static<typeof NodeSchema>

export const NodePage = Page(NodeSchema, 'Nodes of the site ordered by id.')

export const ListNodesQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }),
    nodeType: Type.Optional(NodeTypeCode),
  },
  { additionalProperties: false },
)
export type ListNodesQueryInput = Static<typeof ListNodesQuery>

export const EdgeBody = Type.Object(
  {
    sourceId: Type.String({ maxLength: LIMITS.edgeEndMax, description: 'Id of a node of the site, 0 to 50 characters (a string that names no node: 422).' }),
    targetId: Type.String({
      maxLength: LIMITS.edgeEndMax,
      description: 'Id of another node of the site, 0 to 50 characters (no node: 422; equal to sourceId: 422).',
    }),
    edgeType: EdgeTypeCode,
  },
  { $id: 'EdgeBody', additionalProperties: false },
)
export type EdgeInput = Static<typeof EdgeBody>

export const EdgeSchema = Type.Object(
  {
    sourceId: Type.String(),
    targetId: Type.String(),
    edgeType: EdgeTypeCode,
    edgeTypeName: Type.String({ description: 'The name of `edgeType`.' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'ElectricalEdge', additionalProperties: false },
)
export type Edge = Static<typeof EdgeSchema>

export const EdgePage = Page(EdgeSchema, 'Edges ordered by (sourceId, targetId, edgeType).')

export const ListEdgesQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 500, maxLimit: 5000 }),
    nodeId: Type.Optional(Type.String({ maxLength: LIMITS.edgeEndMax, description: 'Only the edges touching this node (as source or target).' })),
  },
  { additionalProperties: false },
)
export type ListEdgesQueryInput = Static<typeof ListEdgesQuery>

export const DeleteEdgeQuery = Type.Object(
  {
    source: Type.String({ maxLength: LIMITS.edgeEndMax, description: "Required: the edge's sourceId." }),
    target: Type.String({ maxLength: LIMITS.edgeEndMax, description: "Required: the edge's targetId." }),
    type: Type.String({
      maxLength: 50,
      description: "Required: the edge's edgeType, as its code (`0`…`4`) or its name (`Cable`, case-insensitive). Anything else: 400 naming `type`.",
    }),
  },
  { additionalProperties: false },
)
export type DeleteEdgeQueryInput = Static<typeof DeleteEdgeQuery>

export const DeleteNodeQuery = Type.Object(
  {
    cascade: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: also delete the edges touching the node. false (default): a node with edges is refused with 409 `Conflict` (`edgeCount` says how many).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const SiteParams = Type.Object({ siteId: Type.String({ maxLength: 200 }) }, { additionalProperties: false })
export const NodeParams = Type.Object({ siteId: Type.String({ maxLength: 200 }), nodeId: Type.String({ maxLength: 200 }) }, { additionalProperties: false })

/** A node of a bulk load: the create body of spec 2.5. */
export const NetworkBody = Type.Object(
  {
    nodes: Type.Array(CreateNodeBody, { description: 'Node create bodies (up to SITEGRID_NETWORK_MAX_NODES); ids unique.' }),
    edges: Type.Array(EdgeBody, {
      description: 'Edges between listed nodes (up to SITEGRID_NETWORK_MAX_EDGES); no self-loop, no repeated triple. May come before `nodes`.',
    }),
  },
  { $id: 'NetworkBody', additionalProperties: false },
)
export type NetworkInput = Static<typeof NetworkBody>

export const NetworkSchema = Type.Object(
  {
    siteId: Type.String(),
    nodeCount: Type.Integer(),
    edgeCount: Type.Integer(),
    nodes: Type.Array(NodeSchema, { description: 'Ordered by id.' }),
    edges: Type.Array(EdgeSchema, { description: 'Ordered by (sourceId, targetId, edgeType).' }),
  },
  { $id: 'Network', additionalProperties: false },
)

export const NetworkReplacedSchema = Type.Object(
  {
    siteId: Type.String(),
    nodeCount: Type.Integer(),
    edgeCount: Type.Integer(),
    nodesAdded: Type.Integer({ description: 'Ids not in the previous network.' }),
    nodesRemoved: Type.Integer({ description: 'Ids of the previous network not in this one.' }),
    nodesKept: Type.Integer({ description: 'Ids in both (their createdAt is kept).' }),
  },
  { $id: 'NetworkReplaced', additionalProperties: false },
)

// Topology answers.
const EdgeRefSchema = Type.Object(
  {
    index: Type.Integer({ description: "Position in the network's edge order (sourceId, targetId, edgeType)." }),
    sourceId: Type.String(),
    targetId: Type.String(),
    edgeType: Type.Integer(),
  },
  { additionalProperties: false },
)

export const IslandsSchema = Type.Object(
  {
    islandCount: Type.Integer(),
    unsuppliedIslandCount: Type.Integer({ description: 'Islands holding no supply (UtilitySupply, Generator, UpsBattery): dead when energised from nowhere.' }),
    islands: Type.Array(
      Type.Object(
        {
          nodeCount: Type.Integer(),
          hasSupply: Type.Boolean(),
          supplyIds: Type.Array(Type.String()),
          nodeIds: Type.Array(Type.String()),
        },
        { additionalProperties: false },
      ),
      { description: 'Largest first; ties keep the order of their lowest node id.' },
    ),
  },
  { additionalProperties: false },
)

export const SupplyPathsSchema = Type.Object(
  {
    nodeId: Type.String(),
    isSupplied: Type.Boolean(),
    paths: Type.Array(
      Type.Object(
        {
          supplyId: Type.String(),
          hops: Type.Integer(),
          nodeIds: Type.Array(Type.String(), { description: 'From the queried node (first) to the supply (last).' }),
          edges: Type.Array(EdgeRefSchema, { description: '`edges[i]` joins `nodeIds[i]` and `nodeIds[i+1]`.' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'One shortest path (by hops, direction ignored) per reachable supply, nearest first: at most 1000 paths and 100000 node ids in all (the nearest path always).',
      },
    ),
    supplyCount: Type.Optional(Type.Integer({ description: 'Only when paths were left out: every supply reachable from the node.' })),
    isTruncated: Type.Optional(Type.Boolean({ description: 'True, only when paths were left out (the nearest are listed).' })),
  },
  { additionalProperties: false },
)

export const LoopsQuery = Type.Object(
  {
    maxLoops: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        default: 1000,
        description: 'Loops listed at most (0 to 10000, default 1000), and 100000 node ids in all over the loops listed; `loopCount` counts them all.',
      }),
    ),
  },
  { additionalProperties: false },
)

export const LoopsSchema = Type.Object(
  {
    isRadial: Type.Boolean(),
    loopCount: Type.Integer({ description: 'Independent loops (edges − nodes + islands).' }),
    isTruncated: Type.Boolean(),
    loops: Type.Array(
      Type.Object(
        {
          closingEdge: EdgeRefSchema,
          nodeIds: Type.Array(Type.String()),
          edges: Type.Array(EdgeRefSchema),
        },
        { additionalProperties: false },
      ),
      { description: 'Each closing edge lies outside a spanning forest grown from the supplies: in a ring main, the candidate normally-open point.' },
    ),
  },
  { additionalProperties: false },
)

export const IsolatedSchema = Type.Object(
  {
    count: Type.Integer(),
    nodeIds: Type.Array(Type.String(), { description: 'Nodes with no edge, ordered by id.' }),
  },
  { additionalProperties: false },
)

/** The short-circuit study's options the protection reads pass on to it. */
const ConductorEndTemperatureC = Type.Optional(
  Type.Number({
    minimum: 20,
    maximum: 250,
    default: 20,
    description:
      'Conductor temperature at the end of the short circuit for the minimum case (°C, 20 to 250, default 20): IEC 60909-0 §7.1.2 takes the ' +
      'resistances of cables and lines (positive and zero sequence) at it, RL = (1 + 0.004/K·(θe − 20 °C))·RL20, for minimum currents ' +
      '(IEC TR 60909-4 uses 80 °C). The default leaves them at 20 °C, which states the minimum on the high side; the maximum case always uses 20 °C.',
  }),
)

const LvTolerancePercent = Type.Optional(
  Type.Integer({
    enum: [6, 10],
    default: 10,
    description: 'Voltage tolerance of the networks up to 1 kV (IEC 60909-0 Table 1): 6 → cmax 1.05, 10 (default) → cmax 1.10.',
  }),
)

// Protection answers.
const typedFaultCurrent = (where: string) =>
  Type.Optional(
    Type.Number({
      minimum: 0,
      description:
        `The fault current at ${where}, in amperes, finite and ≥ 0; it wins over the computed one. Default: the short-circuit study's ` +
        'I″k max at the node (with `lvTolerancePercent`); when the study lacks data, 422 `StudyDataMissing` naming each node and parameter.',
    }),
  )
const FaultCurrentSource = Type.String({
  enum: ['typed', 'shortCircuitStudy'],
  description: '`typed`: the `faultCurrentA` of the query; `shortCircuitStudy`: I″k max of the bus at the node (`faultBusId`).',
})
const FaultBusId = Type.Union([Type.String(), Type.Null()], {
  description: 'The short-circuit study bus the fault is on (a transformer node: its supply side); null when the study did not run.',
})
const CurrentRatio = Type.Number({
  description:
    'The current this device sees over the current at the fault. Computed fault current: its branch current in the study’s fault state over ' +
    'I″k (below 1 where a motor or other source feeds the fault from the fault’s side of it; on the HV side of a transformer the HV current). ' +
    'Typed fault current: 1 on the fault’s voltage level, times the rated voltage ratio of each transformer between (I·UrLV/UrHV on the HV side ' +
    'of an LV fault). A device on a transformer node measures on its supply side.',
})

export const TripTimeQuery = Type.Object(
  { faultCurrentA: typedFaultCurrent('the node'), lvTolerancePercent: LvTolerancePercent, conductorEndTemperatureC: ConductorEndTemperatureC },
  { additionalProperties: false },
)
export type TripTimeQueryInput = Static<typeof TripTimeQuery>

export const TripTimeSchema = Type.Object(
  {
    nodeId: Type.String(),
    curve: Type.String({ description: 'The curve id the stored `protectionCurve` resolved to (e.g. `IEC_SI`).' }),
    curveLabel: Type.String(),
    pickupA: Type.Number(),
    tms: Type.Number(),
    faultCurrentA: Type.Number(),
    faultCurrentSource: FaultCurrentSource,
    faultBusId: FaultBusId,
    multiple: Type.Number({ description: 'faultCurrentA / pickupA (at most 1.7976931348623157e308: a larger ratio is given as that).' }),
    trips: Type.Boolean(),
    tripTimeS: Type.Union([Type.Number(), Type.Null()], { description: 'Seconds; null when the current is at or below pickup (the device never trips).' }),
    formula: Type.String({ description: 'The curve formula used, with its constants.' }),
  },
  { additionalProperties: false },
)

export const CoordinationQuery = Type.Object(
  {
    faultCurrentA: typedFaultCurrent('the node (each device on the path sees it referred through the transformers between)'),
    lvTolerancePercent: LvTolerancePercent,
    conductorEndTemperatureC: ConductorEndTemperatureC,
    gradingMarginS: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 10,
        default: 0.3,
        description: 'Required margin between a device and the next one upstream, 0 to 10 s (default 0.3).',
      }),
    ),
    supplyId: Type.Optional(
      Type.String({
        maxLength: LIMITS.nodeIdMax,
        description: "Which supply's path to check; default the nearest. A supply not reachable from the node: 422.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type CoordinationQueryInput = Static<typeof CoordinationQuery>

export const CoordinationSchema = Type.Object(
  {
    nodeId: Type.String(),
    supplyId: Type.String(),
    pathNodeIds: Type.Array(Type.String(), { description: 'From the faulted node to the supply.' }),
    faultCurrentA: Type.Number({ description: 'The current at the faulted node, typed or computed.' }),
    faultCurrentSource: FaultCurrentSource,
    faultBusId: FaultBusId,
    gradingMarginS: Type.Number(),
    isCoordinated: Type.Boolean(),
    violationCount: Type.Integer(),
    clearingDeviceId: Type.Union([Type.String(), Type.Null()], { description: 'The device that clears the fault first, if any trips.' }),
    rows: Type.Array(
      Type.Object(
        {
          deviceId: Type.String(),
          curve: Type.String(),
          curveLabel: Type.String(),
          pickupA: Type.Number(),
          tms: Type.Number(),
          faultCurrentA: Type.Number({ description: 'The current this device sees: the fault current × `currentRatio`.' }),
          currentRatio: CurrentRatio,
          multiple: Type.Number({ description: 'faultCurrentA / pickupA (at most 1.7976931348623157e308: a larger ratio is given as that).' }),
          tripTimeS: Type.Union([Type.Number(), Type.Null()]),
          upstreamDeviceId: Type.Union([Type.String(), Type.Null()]),
          marginS: Type.Union([Type.Number(), Type.Null()], { description: 'Upstream trip time minus this one, when both trip.' }),
          status: Type.String({ enum: ['OK', 'Violation', 'NotTripping'] }),
          zoneEndBusId: Type.Union([Type.String(), Type.Null()], {
            description:
              "The end of the device's protected zone: the bus of the next device towards the fault (which protects the rest), or the faulted " +
              "node's bus for the device nearest the fault; null when the study has no level there.",
          }),
          zoneEndMinFaultA: Type.Union([Type.Number(), Type.Null()], {
            description:
              'The least fault at the zone end: the line-to-line I″k2 min (IEC 60909 minimum case, √3/2 of the three-phase I″k min), in amperes as this ' +
              "device carries it: its share of that fault from the study's minimum-case fault state (less where a generator on the fault's side of it feeds part).",
          }),
          pickupAboveMinFault: Type.Union([Type.Boolean(), Type.Null()], {
            description: 'Flag: the pickup exceeds `zoneEndMinFaultA`, so the device misses the least fault at the end of its zone.',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'Protective devices on the path, fault end first.' },
    ),
    minimumFaultCheck: Type.Object(
      {
        checked: Type.Boolean({ description: 'false when a typed current stands and the short-circuit study cannot run.' }),
        detail: Type.Union([Type.String(), Type.Null()], { description: "Why not: the study's own problem detail." }),
        missing: Type.Array(Type.Object({ nodeId: Type.String(), parameter: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
          description: 'The study parameters it lacks (as its 422 lists them).',
        }),
      },
      { additionalProperties: false },
    ),
    pickupAboveMinFaultCount: Type.Integer({ description: 'Rows flagged `pickupAboveMinFault`.' }),
    skipped: Type.Array(Type.Object({ nodeId: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
      description: 'Nodes on the path with incomplete or unusable protection settings: not guessed, listed.',
    }),
  },
  { additionalProperties: false },
)

export const ProtectionCurvesQuery = Type.Object(
  {
    supplyId: Type.Optional(
      Type.String({
        maxLength: LIMITS.nodeIdMax,
        description: "Which supply's path to draw; default the nearest (as for the coordination). A supply not reachable from the node: 422.",
      }),
    ),
    faultCurrentA: typedFaultCurrent('the node, marked on the plot'),
    lvTolerancePercent: LvTolerancePercent,
    conductorEndTemperatureC: ConductorEndTemperatureC,
    fromA: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1e9,
        description: "Lowest current sampled, in amperes at the fault (> 0); default the lowest pickup on the path, referred to the fault's side.",
      }),
    ),
    toA: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1e9,
        description: 'Highest current sampled, in amperes; must exceed `fromA` (400 naming `toA` otherwise); default 30 × the highest pickup on the path.',
      }),
    ),
    points: Type.Optional(
      Type.Integer({ minimum: 2, maximum: 500, default: 100, description: 'Currents sampled, log-spaced from `fromA` to `toA` (2 to 500, default 100).' }),
    ),
  },
  { additionalProperties: false },
)
export type ProtectionCurvesQueryInput = Static<typeof ProtectionCurvesQuery>

export const ProtectionCurvesSchema = Type.Object(
  {
    nodeId: Type.String(),
    supplyId: Type.String(),
    pathNodeIds: Type.Array(Type.String(), { description: 'From the node (the fault) to the supply.' }),
    faultCurrentA: Type.Number({ description: 'The current at the faulted node, typed or computed: the mark on the plot.' }),
    faultCurrentSource: FaultCurrentSource,
    faultBusId: FaultBusId,
    fromA: Type.Union([Type.Number(), Type.Null()], {
      description: 'The range sampled; null (with no currents) when the path has no device and none was given.',
    }),
    toA: Type.Union([Type.Number(), Type.Null()]),
    currentsA: Type.Array(Type.Number(), {
      description: "The currents at the fault sampled, ascending, log-spaced; shared by every device (the plot's current axis, at the fault's voltage).",
    }),
    devices: Type.Array(
      Type.Object(
        {
          deviceId: Type.String(),
          curve: Type.String(),
          curveLabel: Type.String(),
          pickupA: Type.Number(),
          tms: Type.Number(),
          currentRatio: CurrentRatio,
          faultCurrentA: Type.Number({ description: 'The current this device sees for the fault: `faultCurrentA` × `currentRatio`.' }),
          timesS: Type.Array(Type.Union([Type.Number(), Type.Null()]), {
            description:
              'Trip time for `currentsA[i]` at the fault in seconds: the trip-time read at `currentsA[i]` × `currentRatio`; null at or below pickup (no trip).',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'Protective devices on the path, fault end first (the rows of the coordination).' },
    ),
    skipped: Type.Array(Type.Object({ nodeId: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
      description: 'Nodes on the path with incomplete or unusable protection settings: not drawn, listed.',
    }),
  },
  { additionalProperties: false },
)

export const PandapowerQuery = Type.Object(
  {
    fHz: Type.Optional(Type.Integer({ enum: [50, 60], default: 50, description: 'System frequency written to `f_hz` (50 or 60, default 50).' })),
    snMva: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100_000, default: 1, description: 'Reference power `sn_mva` (default 1).' })),
    envelope: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'false (default): the body is the pandapower file itself. true: `{ net, notes }` with the approximations applied.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type PandapowerQueryInput = Static<typeof PandapowerQuery>

export const PandapowerSchema = Type.Object(
  {},
  { additionalProperties: true, description: 'A pandapower network as `pandapower.to_json` writes it; load it with `pandapower.from_json(path)`.' },
)

// Studies (issue 31).
export const ShortCircuitQuery = Type.Object(
  {
    lvTolerancePercent: LvTolerancePercent,
    conductorEndTemperatureC: ConductorEndTemperatureC,
    fHz: Type.Optional(
      Type.Integer({ enum: [50, 60], default: 50, description: 'System frequency (50 or 60, default 50): the equivalent frequency of κ method C.' }),
    ),
    contributions: Type.Optional(
      Type.Union([Type.Literal('none'), Type.Literal('largest'), Type.Literal('all')], {
        default: 'largest',
        description:
          "How much of each bus's source contributions the answer lists: `largest` (the default) the 5 largest, `none` none, `all` every source " +
          '(a network of 5 000 buses and 200 motors: 1 000 000 entries). `contributionCount` always says how many there are.',
      }),
    ),
    busId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Only this bus: a busId of the answer or the id of any node on the bus (a node on no energised bus: no bus listed; an id that is no node ' +
          'or bus of the network: 404).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ShortCircuitQueryInput = Static<typeof ShortCircuitQuery>

/** The load flow takes no parameter: an unknown one is refused by name, as the other studies refuse theirs. */
export const LoadFlowQuery = Type.Object({}, { additionalProperties: false })

export const ShortCircuitSchema = Type.Object(
  {
    siteId: Type.String(),
    faultTypes: Type.Array(Type.String({ enum: ['threePhase', 'twoPhase', 'singlePhaseToEarth'] }), {
      description:
        'The faults computed: three-phase and line-to-line (two-phase) always; `singlePhaseToEarth` when at least one bus has a complete, earthed ' +
        'zero-sequence network (`earthFaults` names the buses without one and the data they lack).',
    }),
    method: Type.String(),
    assumed: Type.Object(
      {
        lvTolerancePercent: Type.Integer(),
        fHz: Type.Integer(),
        cFactors: Type.Object(
          {
            lv: Type.Object({ max: Type.Number(), min: Type.Number() }, { additionalProperties: false }),
            mvHv: Type.Object({ max: Type.Number(), min: Type.Number() }, { additionalProperties: false }),
          },
          { additionalProperties: false, description: 'c-factors used for Un ≤ 1 kV (`lv`) and above (`mvHv`).' },
        ),
        correctionFactors: Type.Array(
          Type.Object(
            { nodeId: Type.String(), factor: Type.String({ enum: ['KT', 'KG', 'KTAB', 'KTAC', 'KTBC', 'KS', 'KSO'] }), value: Type.Number() },
            { additionalProperties: false },
          ),
          {
            description:
              'The impedance correction factors applied: KT to each two-winding transformer, KTAB, KTAC and KTBC to each pair of windings of a ' +
              'three-winding one (HV A, MV B, LV C), KG to each generator; KS (on-load tap changer) or KSO to both the generator and the ' +
              'transformer of a power station unit, in place of KG and KT.',
          },
        ),
        notModelled: Type.Array(Type.Object({ nodeId: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
          description: 'Nodes the study left out or read with a choice (a UPS, a bus whose nodes disagree on ratedVoltageV).',
        }),
        conductorTemperatureC: Type.Number({ description: 'Cable and line resistances are taken as given, at this temperature, in the maximum case.' }),
        minCaseConductorTemperatureC: Type.Number({
          description: "The minimum case takes cable and line resistances at this temperature (the query's `conductorEndTemperatureC`).",
        }),
        cablesFromSize: Type.Array(
          Type.Object({ nodeId: Type.String(), cableSize: Type.String(), rOhmPerKm: Type.Number(), xOhmPerKm: Type.Number() }, { additionalProperties: false }),
          {
            description:
              'Cables whose per-km values came from the cable table (studies/cable-table.ts: IEC 60228 class 2 R at 20 °C for Cu/Al 1.5–630 mm², X 0.08 Ω/km) ' +
              'because the fed node has a readable cableSize and no rOhmPerKm/xOhmPerKm.',
          },
        ),
      },
      { additionalProperties: false },
    ),
    buses: Type.Array(
      Type.Object(
        {
          busId: Type.String({
            description: 'The first node on the bus (nodes joined by busbar links, winding connections, closed switching devices, bus ties).',
          }),
          nodeIds: Type.Array(Type.String()),
          nominalVoltageKv: Type.Number(),
          ikssMaxKa: Type.Number({ description: 'Maximum initial symmetrical short-circuit current I″k max, kA.' }),
          ikssMinKa: Type.Number({ description: 'Minimum I″k min (cmin, the grid minimum, no motors), kA.' }),
          ikssTwoPhaseMaxKa: Type.Number({
            description:
              'Line-to-line fault, maximum case: I″k2 = c·Un / |Z(1) + Z(2)| with Z(2) = Z(1) (IEC 60909-0 §7.2; exact far from generators, where ' +
              "a machine's X(2) is taken as its x″d), i.e. √3/2 of I″k max, kA.",
          }),
          ikssTwoPhaseMinKa: Type.Number({
            description: "Line-to-line fault, minimum case (√3/2 of I″k min), kA: usually the smallest current a protection device's zone must see.",
          }),
          ikssEarthMaxKa: Type.Union([Type.Number(), Type.Null()], {
            description:
              'Line-to-earth fault, maximum case: I″k1 = √3·c·Un / |Z(1) + Z(2) + Z(0)| with Z(2) = Z(1) (IEC 60909-0 §7.1.2), kA; null where ' +
              '`earthFaults` lists the bus (zero-sequence data missing, or no path to earth).',
          }),
          ikssEarthMinKa: Type.Union([Type.Number(), Type.Null()], {
            description: 'Line-to-earth fault, minimum case (cmin, the grid minimum and its Z(0), no motors), kA; null as ikssEarthMaxKa.',
          }),
          ipKa: Type.Number({ description: 'Peak short-circuit current ip = κ·√2·I″k max, kA.' }),
          kappa: Type.Number(),
          kappaMethod: Type.String({ enum: ['radial', 'C'], description: '`radial`: κ from the R/X at the fault; `C`: IEC method C (meshed part).' }),
          xrRatio: Type.Number({ description: 'X/R of the short-circuit impedance at the bus (maximum case).' }),
          skssMaxMva: Type.Number({ description: 'S″k max = √3·Un·I″k max, MVA.' }),
          contributionCount: Type.Integer({ description: 'How many sources contribute to a fault at this bus (all of them are computed).' }),
          contributions: Type.Array(
            Type.Object(
              { sourceId: Type.String(), sourceType: Type.String({ enum: ['UtilitySupply', 'Generator', 'Motor'] }), ikssKa: Type.Number() },
              { additionalProperties: false },
            ),
            {
              description:
                "Each source's current into the fault (maximum case), kA referred to the bus's voltage, largest first: the 5 largest, all or none " +
                'as the `contributions` query asks.',
            },
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'Every bus of a part of the network with a utility supply or a generator, in bus order.' },
    ),
    unsuppliedBusIds: Type.Array(Type.String(), { description: 'Buses of parts with no utility supply or generator: no fault current.' }),
    earthFaults: Type.Object(
      {
        incompleteBusIds: Type.Array(Type.String(), {
          description: 'Buses whose zero-sequence part (the buses lines and YNyn transformers join) lacks data: no earth-fault current.',
        }),
        missing: Type.Array(Type.Object({ nodeId: Type.String(), parameter: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
          description: 'Each node and zero-sequence parameter those buses lack, the first 100. Missing zero-sequence data never fails the study (no 422).',
        }),
        missingCount: Type.Integer({ description: 'How many missing zero-sequence parameters there are in all.' }),
        unearthedBusIds: Type.Array(Type.String(), {
          description:
            'Buses whose zero-sequence part has no path to earth (behind a delta or unearthed star winding, no earthed source): their earth-fault ' +
            'current is capacitive, outside IEC 60909-0.',
        }),
      },
      {
        additionalProperties: false,
        description:
          'Earth faults where the data allows: a bus without ikssEarthMaxKa is in exactly one of these lists. Zero-sequence parameters: UtilitySupply ' +
          'x0x1Ratio, r0x0Ratio; PowerTransformer vectorGroup, uk0Percent, ur0Percent (and neutralEarthingROhm/XOhm); Generator neutralEarthing ' +
          '(x0Percent when earthed); cables and lines r0OhmPerKm, x0OhmPerKm (c0NfPerKm optional).',
      },
    ),
  },
  { additionalProperties: false },
)

const kw = (description: string) => Type.Number({ description })

export const LoadFlowSchema = Type.Object(
  {
    siteId: Type.String(),
    method: Type.String(),
    converged: Type.Boolean({ description: 'false: no solution was found; `note` says why and where, `buses` and `branches` are empty.' }),
    iterations: Type.Integer({ description: 'Newton steps taken.' }),
    maxMismatchKva: Type.Union([Type.Number(), Type.Null()], { description: 'Largest P or Q mismatch at the last step, kVA (null: not finite).' }),
    note: Type.Optional(
      Type.String({ description: 'Present when converged is false: the reason (IterationLimit, Diverged, SingularJacobian) and the worst bus.' }),
    ),
    assumed: Type.Object(
      {
        baseMva: Type.Number({ description: 'Per-unit power base.' }),
        maxIterations: Type.Integer(),
        tolerancePu: Type.Number({ description: 'Largest mismatch accepted, per unit of baseMva.' }),
        sources: Type.Array(
          Type.Object(
            {
              nodeId: Type.String(),
              busKind: Type.String({ enum: ['slack', 'pv'] }),
              voltageSetpointPu: Type.Number(),
              setpointGiven: Type.Boolean({ description: 'false: the node has no voltageSetpointPu and 1.0 pu was assumed.' }),
            },
            { additionalProperties: false },
          ),
          { description: 'Each utility supply (a slack) and generator (PV, or the slack of a part with no utility supply) with the voltage it holds.' },
        ),
        notModelled: Type.Array(Type.Object({ nodeId: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
          description:
            'Nodes the load flow left out or read with a choice (a UPS taken idle, a drive taken as a bus, a bus whose nodes disagree on ratedVoltageV).',
        }),
        cablesFromSize: Type.Array(
          Type.Object({ nodeId: Type.String(), cableSize: Type.String(), rOhmPerKm: Type.Number(), xOhmPerKm: Type.Number() }, { additionalProperties: false }),
          { description: "Cables whose per-km values came from the cable table (as in the short-circuit study's `assumed`)." },
        ),
      },
      { additionalProperties: false },
    ),
    buses: Type.Array(
      Type.Object(
        {
          busId: Type.String({ description: "The bus's name, as in the short-circuit study; a three-winding transformer's star point is `<id>/star`." }),
          nodeIds: Type.Array(Type.String()),
          nominalVoltageKv: Type.Number(),
          busKind: Type.String({ enum: ['slack', 'pv', 'pq'] }),
          voltagePu: Type.Number({ description: 'Voltage magnitude, per unit of the nominal voltage.' }),
          voltageV: Type.Number({ description: 'Voltage magnitude (line to line), V.' }),
          angleDeg: Type.Number({ description: "Voltage angle against the slack's, degrees." }),
          pGenKw: kw('Generation at the bus, kW (solved at a slack).'),
          qGenKvar: kw('Reactive generation at the bus, kvar (solved at slack and PV buses).'),
          pLoadKw: kw('Demand of the loads and motors on the bus, kW.'),
          qLoadKvar: kw('Reactive demand of the loads and motors on the bus, kvar.'),
        },
        { additionalProperties: false },
      ),
      { description: 'Every bus of a part of the network with a utility supply or a generator, in bus order.' },
    ),
    branches: Type.Array(
      Type.Object(
        {
          branchId: Type.String({
            description:
              '`<sourceId>>{targetId}` for a cable or line, the node id for a transformer; `<id>/hv`, `<id>/mv`, `<id>/lv` for the windings of a ' +
              'three-winding one (each from its star point, rated by the winding’s power).',
          }),
          kind: Type.String({ enum: ['Cable', 'OverheadLine', 'PowerTransformer'] }),
          nodeId: Type.String({ description: "The node holding the branch's parameters: the fed node of a cable or line, the transformer." }),
          fromBusId: Type.String({ description: "A cable's source side; a transformer's HV side (a three-winding one's star point)." }),
          toBusId: Type.String(),
          pFromKw: kw('Active power entering the branch at its from end, kW (negative: leaving).'),
          qFromKvar: kw('Reactive power entering the branch at its from end, kvar.'),
          pToKw: kw('Active power entering the branch at its to end, kW.'),
          qToKvar: kw('Reactive power entering the branch at its to end, kvar.'),
          currentFromA: kw('Current at the from end, A.'),
          currentToA: kw('Current at the to end, A.'),
          lossKw: kw('Series (I²R) losses, kW.'),
          lossKvar: kw('Series (I²X) reactive losses, kvar.'),
          loadingPercent: Type.Union([Type.Number(), Type.Null()], {
            description:
              "A cable's or line's larger end current against the fed node's ampacityA; a transformer's larger √3·I·Ur against its ratedPowerKva; " +
              'null where the data holds no rating.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    lossKw: kw('Total series losses, kW.'),
    lossKvar: kw('Total series reactive losses, kvar.'),
    unsuppliedBusIds: Type.Array(Type.String(), { description: 'Buses of parts with no utility supply or generator: not solved.' }),
  },
  { additionalProperties: false },
)
