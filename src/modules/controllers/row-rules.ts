import { Type } from 'typebox'
import { recordRules, withoutNulls, type RuleBreak } from '../../http/validation.ts'
import { AssignControllerBody, CreateControllerBody, UpdateControllerBody, type CreateControllerInput } from './schemas.ts'
import { checkAddress, cipRouteOf } from './service.ts'

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
  return controllerRules(
    withoutNulls({
      name: row.name,
      platform: row.platform,
      firmwareVersion: row.firmware_version,
      assetNumber: row.asset_number,
      edgeId: row.edge_id,
      edgePlcId: row.edge_plc_id,
      connection: withoutNulls({
        protocol: row.protocol,
        ipAddress: row.ip_address,
        port: row.port,
        cipPath: row.cip_path,
        pollIntervalMs: row.poll_interval_ms,
        timeoutMs: row.timeout_ms,
        retryDelayMs: row.retry_delay_ms,
        maxRetries: row.max_retries,
      }),
    }),
  )
}
