import { Type } from 'typebox'
import { recordRules, withoutNulls, type RuleBreak } from '../../http/validation.ts'
import { nodeFieldProblems } from './rows.ts'
import { CreateNodeBody, EdgeBody, UpdateNodeBody, type CreateNodeInput, type EdgeInput } from './schemas.ts'

/** What a node can hold after its create and updates: an update may set its name empty or clear it (spec 2.5). */
const StoredNode = Type.Object({ ...CreateNodeBody.properties, name: UpdateNodeBody.properties.name }, { additionalProperties: false })

const nodeRules = recordRules<CreateNodeInput>(StoredNode, (node) => nodeFieldProblems(node))
const edgeRules = recordRules<EdgeInput>(EdgeBody, (edge) =>
  edge.sourceId === edge.targetId ? [{ pointer: '/targetId', message: 'must differ from sourceId (an edge joins two nodes)' }] : [],
)

/** The first rule of POST …/electrical/nodes (or of an update) a stored node row breaks, for rows that arrive without a request. */
export function nodeRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  return nodeRules(
    withoutNulls({
      id: row.id,
      name: row.name,
      nodeType: row.node_type,
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
      // The JSON columns' text parses (tenant-transfer/value-rules.ts checks it first).
      tagBindings: JSON.parse(row.tag_bindings as string),
      metadata: JSON.parse(row.metadata as string),
      study: JSON.parse(row.study as string),
    }),
  )
}

/** The first rule of POST …/electrical/edges a stored edge row breaks. */
export function edgeRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  return edgeRules({ sourceId: row.source_id, targetId: row.target_id, edgeType: row.edge_type })
}
