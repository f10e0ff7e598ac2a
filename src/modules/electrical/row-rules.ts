import { Type } from 'typebox'
import { recordRules, withoutNulls, type RuleBreak } from '../../http/validation.ts'
import type { ElectricalNodesTable } from '../../db/schema.ts'
import { nodeFieldProblems, toNode } from './rows.ts'
import { CreateNodeBody, EdgeBody, UpdateNodeBody, type CreateNodeInput, type EdgeInput } from './schemas.ts'

/** What a node can hold after its create and updates: an update may set its name empty or clear it (spec 2.5). */
const StoredNode = Type.Object({ ...CreateNodeBody.properties, name: UpdateNodeBody.properties.name }, { additionalProperties: false })

const nodeRules = recordRules<CreateNodeInput>(StoredNode, (node) => nodeFieldProblems(node))
const edgeRules = recordRules<EdgeInput>(EdgeBody, (edge) =>
  edge.sourceId === edge.targetId ? [{ pointer: '/targetId', message: 'must differ from sourceId (an edge joins two nodes)' }] : [],
)

/** The first rule of POST …/electrical/nodes (or of an update) a stored node row breaks, for rows that arrive without a request. */
export function nodeRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  // The row's values fit their columns and its JSON text parses (tenant-transfer/value-rules.ts checks them first).
  const {
    siteId: _siteId,
    nodeTypeName: _nodeTypeName,
    createdAt: _createdAt,
    updatedAt: _updatedAt,
    ...fields
  } = toNode(row as unknown as ElectricalNodesTable)
  return nodeRules(withoutNulls(fields))
}

/** The first rule of POST …/electrical/edges a stored edge row breaks. */
export function edgeRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  return edgeRules({ sourceId: row.source_id, targetId: row.target_id, edgeType: row.edge_type })
}
