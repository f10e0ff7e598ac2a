import type { IncomingHttpHeaders } from 'node:http'
import { migrations } from '../../../db/migrations/index.ts'
import { LinkSchemaMismatch, LinkVersionMismatch } from './errors.ts'

/**
 * The fleet link's wire protocol version (`Sitegrid-Link-Protocol`); a peer announcing another is refused. 2: the push's
 * `after`, its answer's mark and the reseed's `after` are (tx, seq) cursors (1 sent a seq alone, which loses changes
 * of a site server on PostgreSQL, whose outbox commits out of seq order). 3: a change may be `superseded` (its row's
 * newest change came before it in (tx, seq) order), which the receiver must not apply; a peer of 2 would apply it.
 */
export const LINK_PROTOCOL = 3
export const PROTOCOL_HEADER = 'sitegrid-link-protocol'
export const SCHEMA_HEADER = 'sitegrid-schema'
export const CURSOR_HEADER = 'sitegrid-link-cursor'

/** This build's schema version: the name of its latest migration (`Sitegrid-Schema`). */
export const SCHEMA_VERSION = Object.keys(migrations).sort().at(-1)!

/**
 * The peer's versions from a link request's headers: the same protocol and the same schema as this server, or 409
 * LinkVersionMismatch (the changes of two schemas are not the same rows). Both sides keep working locally meanwhile.
 */
export function checkPeerVersions(headers: IncomingHttpHeaders): { protocol: number; schema: string } {
  const protocol = headers[PROTOCOL_HEADER]
  if (protocol !== String(LINK_PROTOCOL)) throw new LinkVersionMismatch(String(protocol ?? 'none'), LINK_PROTOCOL)
  const schema = headers[SCHEMA_HEADER]
  if (schema !== SCHEMA_VERSION) throw new LinkSchemaMismatch(typeof schema === 'string' ? schema : 'none', SCHEMA_VERSION)
  return { protocol: LINK_PROTOCOL, schema }
}
