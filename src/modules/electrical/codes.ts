/**
 * Meaning of the integer codes in spec 2.5 (`nodeType`, 0 to 13) and 2.6 (`edgeType`, 0 to 4).
 * The spec leaves them open (2.7); these tables fix them. A code's meaning never changes once shipped:
 * stored networks and API clients depend on it, so add codes, never renumber.
 *
 * Roles, used by topology and protection:
 * - `supply`: a source of energy. UtilitySupply (0), Generator (1) and UpsBattery (13). A UPS counts as a
 *   supply because it keeps its downstream loads alive when everything upstream is lost; its charger
 *   connection is an ordinary edge.
 * - `switching`: a device that opens a circuit. CircuitBreaker (5), FuseSwitch (6), Disconnector (7).
 *   Protection settings (curve, pickup, TMS) belong on these, though nothing forbids them elsewhere.
 */

export type NodeRole = 'supply' | 'conversion' | 'busbar' | 'switching' | 'load' | 'compensation' | 'earthing'

export interface CodeInfo {
  readonly code: number
  readonly name: string
  readonly label: string
  readonly description: string
}

export interface NodeTypeInfo extends CodeInfo {
  readonly role: NodeRole
}

export const NODE_TYPES = [
  {
    code: 0,
    name: 'UtilitySupply',
    role: 'supply',
    label: 'Utility supply / grid infeed',
    description: 'Point of connection to the public grid (incomer, PCC); the usual source of energy.',
  },
  { code: 1, name: 'Generator', role: 'supply', label: 'Generator', description: 'On-site generator (diesel standby, gas turbine, steam turbine set).' },
  {
    code: 2,
    name: 'PowerTransformer',
    role: 'conversion',
    label: 'Power transformer',
    description: 'Two-winding transformer between two voltage levels (e.g. 33/6.6 kV, 6.6/0.415 kV).',
  },
  {
    code: 3,
    name: 'Switchboard',
    role: 'busbar',
    label: 'Switchboard / bus',
    description: 'Busbar section of an MV or LV switchboard, substation bus or distribution board.',
  },
  {
    code: 4,
    name: 'MotorControlCentre',
    role: 'busbar',
    label: 'Motor control centre (MCC)',
    description: 'LV busbar assembly feeding motor starters and drives.',
  },
  {
    code: 5,
    name: 'CircuitBreaker',
    role: 'switching',
    label: 'Circuit breaker',
    description: 'Breaker (VCB, ACB, MCCB) that can interrupt fault current; carries relay settings.',
  },
  {
    code: 6,
    name: 'FuseSwitch',
    role: 'switching',
    label: 'Fuse-switch',
    description: 'Fuse-switch or switch-fuse unit; the fuse clears faults, the switch isolates.',
  },
  {
    code: 7,
    name: 'Disconnector',
    role: 'switching',
    label: 'Disconnector / isolator',
    description: 'Off-load isolator or earth-switch-isolator; opens only without load current.',
  },
  { code: 8, name: 'Motor', role: 'load', label: 'Motor', description: 'Induction or synchronous motor (conveyor, crusher, pump, fan drive).' },
  {
    code: 9,
    name: 'VariableSpeedDrive',
    role: 'conversion',
    label: 'Variable speed drive (VSD)',
    description: 'Frequency converter between its supply bus and the motor it drives.',
  },
  {
    code: 10,
    name: 'FeederLoad',
    role: 'load',
    label: 'Feeder / load',
    description: 'Outgoing feeder to a lumped load not modelled further (lighting, heating, a remote plant).',
  },
  { code: 11, name: 'CapacitorBank', role: 'compensation', label: 'Capacitor bank', description: 'Power-factor correction capacitors (fixed or stepped).' },
  {
    code: 12,
    name: 'EarthingPoint',
    role: 'earthing',
    label: 'Earthing / neutral point',
    description: 'Neutral earthing resistor, earthing transformer or neutral point of a system.',
  },
  {
    code: 13,
    name: 'UpsBattery',
    role: 'supply',
    label: 'UPS / battery',
    description: 'UPS or battery system sustaining critical loads when the upstream supply fails.',
  },
] as const satisfies readonly NodeTypeInfo[]

export const EDGE_TYPES = [
  { code: 0, name: 'Cable', label: 'Cable', description: 'Power cable; its length and size are recorded on the node it feeds (cableLengthM, cableSize).' },
  { code: 1, name: 'OverheadLine', label: 'Overhead line', description: 'Overhead line, e.g. a pole line to a remote pit, pump station or conveyor head.' },
  { code: 2, name: 'BusbarLink', label: 'Busbar link', description: 'Zero-length busbar or busduct connection (device to its switchboard bus).' },
  {
    code: 3,
    name: 'TransformerWinding',
    label: 'Transformer winding connection',
    description: 'Direct connection of a transformer winding terminal to a bus (cable box or bus duct).',
  },
  {
    code: 4,
    name: 'BusTie',
    label: 'Bus tie / switched link',
    description: 'Bus coupler or bus tie between two bus sections, switched by a device not modelled as a node.',
  },
] as const satisfies readonly CodeInfo[]

export type NodeTypeCode = (typeof NODE_TYPES)[number]['code']
export type EdgeTypeCode = (typeof EDGE_TYPES)[number]['code']
export type NodeTypeName = (typeof NODE_TYPES)[number]['name']
export type EdgeTypeName = (typeof EDGE_TYPES)[number]['name']

/** Named codes, so code reads `NodeType.CircuitBreaker` rather than `5`. */
export const NodeType = Object.freeze(Object.fromEntries(NODE_TYPES.map((t) => [t.name, t.code]))) as {
  readonly [T in (typeof NODE_TYPES)[number] as T['name']]: T['code']
}
export const EdgeType = Object.freeze(Object.fromEntries(EDGE_TYPES.map((t) => [t.name, t.code]))) as {
  readonly [T in (typeof EDGE_TYPES)[number] as T['name']]: T['code']
}

export function isNodeTypeCode(value: unknown): value is NodeTypeCode {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) < NODE_TYPES.length
}

export function isEdgeTypeCode(value: unknown): value is EdgeTypeCode {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) < EDGE_TYPES.length
}

export function nodeRole(code: NodeTypeCode): NodeRole {
  return NODE_TYPES[code].role
}

export function isSupplyNodeType(code: number): boolean {
  return isNodeTypeCode(code) && NODE_TYPES[code].role === 'supply'
}

export function isSwitchingNodeType(code: number): boolean {
  return isNodeTypeCode(code) && NODE_TYPES[code].role === 'switching'
}

/** `0 = UtilitySupply (Utility supply / grid infeed), 1 = …`: for an OpenAPI `description`. */
export function describeCodes(table: readonly CodeInfo[]): string {
  return table.map((t) => `${t.code} = ${t.name} (${t.label})`).join(', ')
}

/**
 * Annotations for an integer enum in OpenAPI: `x-enum-varnames` (read by openapi-generator and others to
 * name the constants) and `x-enum-descriptions`, index-aligned with `enum`.
 */
export function openApiEnumAnnotations(table: readonly CodeInfo[]): {
  enum: number[]
  description: string
  'x-enum-varnames': string[]
  'x-enum-descriptions': string[]
} {
  return {
    enum: table.map((t) => t.code),
    description: describeCodes(table),
    'x-enum-varnames': table.map((t) => t.name),
    'x-enum-descriptions': table.map((t) => `${t.label}: ${t.description}`),
  }
}
