import type { ElectricalEdgesTable, ElectricalNodesTable } from '../../db/schema.ts'
import type { FieldProblem } from '../../errors/domain-error.ts'
import { EDGE_TYPES, NODE_TYPES } from './codes.ts'
import { resolveCurve } from './protection.ts'
import { LIMITS, type CreateNodeInput, type Edge, type Node, type NodeStudyInput, type UpdateNodeInput } from './schemas.ts'
import { studyProblems } from './study.ts'
import type { ElectricalEdge, ElectricalNode } from './topology.ts'

const iso = (ms: number) => new Date(ms).toISOString()

export function toNode(row: ElectricalNodesTable): Node {
  return {
    id: row.id,
    siteId: row.site_code,
    name: row.name,
    nodeType: row.node_type,
    nodeTypeName: NODE_TYPES[row.node_type]?.name ?? 'Unknown',
    ratedVoltageV: row.rated_voltage_v,
    ratedCurrentA: row.rated_current_a,
    ratedPowerKw: row.rated_power_kw,
    impedanceOhms: row.impedance_ohms,
    cableSize: row.cable_size,
    cableLengthM: row.cable_length_m,
    protectionCurve: row.protection_curve,
    protectionPickupA: row.protection_pickup_a,
    protectionTms: row.protection_tms,
    description: row.description,
    tagBindings: JSON.parse(row.tag_bindings) as Record<string, string>,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    study: JSON.parse(row.study) as NodeStudyInput,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  }
}

export function toEdge(row: ElectricalEdgesTable): Edge {
  return {
    sourceId: row.source_id,
    targetId: row.target_id,
    edgeType: row.edge_type,
    edgeTypeName: EDGE_TYPES[row.edge_type]?.name ?? 'Unknown',
    createdAt: iso(row.created_at),
  }
}

type EngineeringRow = Pick<
  ElectricalNodesTable,
  | 'id'
  | 'node_type'
  | 'name'
  | 'rated_voltage_v'
  | 'rated_current_a'
  | 'rated_power_kw'
  | 'impedance_ohms'
  | 'cable_size'
  | 'cable_length_m'
  | 'protection_curve'
  | 'protection_pickup_a'
  | 'protection_tms'
  | 'study'
>
type EdgeTriple = Pick<ElectricalEdgesTable, 'source_id' | 'target_id' | 'edge_type'>

/** What protection and the pandapower export read of a node. */
export function toGraphNode(row: EngineeringRow): ElectricalNode {
  return {
    id: row.id,
    nodeType: row.node_type,
    name: row.name,
    ratedVoltageV: row.rated_voltage_v,
    ratedCurrentA: row.rated_current_a,
    ratedPowerKw: row.rated_power_kw,
    impedanceOhms: row.impedance_ohms,
    cableSize: row.cable_size,
    cableLengthM: row.cable_length_m,
    protectionCurve: row.protection_curve,
    protectionPickupA: row.protection_pickup_a,
    protectionTms: row.protection_tms,
    study: JSON.parse(row.study) as NodeStudyInput,
  }
}

export function toGraphEdge(row: EdgeTriple): ElectricalEdge {
  return { sourceId: row.source_id, targetId: row.target_id, edgeType: row.edge_type }
}

/** Code-unit order, identical on both dialects (database collations differ). */
export const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
export const compareEdges = (a: EdgeTriple, b: EdgeTriple) =>
  compareIds(a.source_id, b.source_id) || compareIds(a.target_id, b.target_id) || a.edge_type - b.edge_type

const NUMBER_FIELDS = ['ratedVoltageV', 'ratedCurrentA', 'ratedPowerKw', 'impedanceOhms', 'cableLengthM', 'protectionPickupA', 'protectionTms'] as const

/**
 * Rules the schema cannot state: doubles finite (JSON `1e999` parses to Infinity) and ≥ 0, a known curve name,
 * the metadata size. Problems carry `prefix` (e.g. `/nodes/3`) before the field's pointer.
 */
export function nodeFieldProblems(input: CreateNodeInput | UpdateNodeInput, prefix = ''): FieldProblem[] {
  const problems: FieldProblem[] = []
  for (const field of NUMBER_FIELDS) {
    const value = input[field]
    if (value === undefined || value === null) continue
    if (!Number.isFinite(value)) problems.push({ in: 'body', pointer: `${prefix}/${field}`, message: 'must be a finite number' })
    else if (value < 0) problems.push({ in: 'body', pointer: `${prefix}/${field}`, message: 'must be >= 0 (a physical quantity that cannot be negative)' })
  }
  const curve = input.protectionCurve
  if (typeof curve === 'string' && curve.trim() !== '') {
    try {
      resolveCurve(curve)
    } catch (err) {
      problems.push({ in: 'body', pointer: `${prefix}/protectionCurve`, message: (err as Error).message })
    }
  }
  // On an update without nodeType the stored type decides (checked by the service against the stored row).
  if (input.study != null && input.nodeType !== undefined) problems.push(...studyProblems(input.study, input.nodeType, prefix))
  const metadata = (input as CreateNodeInput).metadata
  if (metadata !== undefined && Buffer.byteLength(JSON.stringify(metadata)) > LIMITS.metadataMaxBytes) {
    problems.push({ in: 'body', pointer: `${prefix}/metadata`, message: `must be at most ${LIMITS.metadataMaxBytes} bytes as JSON` })
  }
  return problems
}

export function nodeRow(orgId: string, siteCode: string, input: CreateNodeInput, createdAt: number, updatedAt: number): ElectricalNodesTable {
  return {
    org_id: orgId,
    site_code: siteCode,
    id: input.id,
    name: input.name,
    node_type: input.nodeType,
    rated_voltage_v: input.ratedVoltageV ?? null,
    rated_current_a: input.ratedCurrentA ?? null,
    rated_power_kw: input.ratedPowerKw ?? null,
    impedance_ohms: input.impedanceOhms ?? null,
    cable_size: input.cableSize ?? null,
    cable_length_m: input.cableLengthM ?? null,
    protection_curve: input.protectionCurve ?? null,
    protection_pickup_a: input.protectionPickupA ?? null,
    protection_tms: input.protectionTms ?? null,
    description: input.description ?? null,
    tag_bindings: JSON.stringify(input.tagBindings ?? {}),
    metadata: JSON.stringify(input.metadata ?? {}),
    study: JSON.stringify(input.study ?? {}),
    created_at: createdAt,
    updated_at: updatedAt,
  }
}
