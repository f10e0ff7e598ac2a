import { Type } from 'typebox'
import { recordRules, withoutNulls, type RuleBreak } from '../../http/validation.ts'
import { AssignControllerBody, CreateControllerBody, UpdateControllerBody, type CreateControllerInput } from './schemas.ts'
import type { ControllersTable } from '../../db/schema.ts'
import { checkAddress, cipRouteOf, NO_LOAD, toController } from './service.ts'

/** What a controller can hold after its create, updates and assignment: an update may clear its name. */
const StoredController = Type.Object(
  {
    ...CreateControllerBody.properties,
    name: UpdateControllerBody.properties.name,
    edgeId: Type.Optional(Type.String({ ...AssignControllerBody.properties.edgeId, minLength: 1 })),
    edgePlcId: AssignControllerBody.properties.edgePlcId,
  },
  { additionalProperties: false },
)

const controllerRules = recordRules<CreateControllerInput>(StoredController, ({ connection }) => {
  checkAddress(connection.ipAddress)
  cipRouteOf(connection.protocol, connection.cipPath ?? null)
  return []
})

/** The first rule of the controller endpoints a stored controller row breaks, for rows that arrive without a request. */
export function controllerRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  // The row's values fit their columns (tenant-transfer/value-rules.ts checks them first): it reads as a stored one.
  const {
    id: _id,
    siteId: _siteId,
    platformName: _platformName,
    cipRoute: _cipRoute,
    pollBudget: _pollBudget,
    createdAt: _createdAt,
    updatedAt: _updatedAt,
    connection,
    ...fields
  } = toController(row as unknown as ControllersTable, NO_LOAD)
  return controllerRules(withoutNulls({ ...fields, connection: withoutNulls(connection) }))
}
