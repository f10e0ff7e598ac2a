import { migrations } from '../../../db/migrations/index.ts'

/** The fleet link's wire protocol version (`Sitegrid-Link-Protocol`); a peer announcing another is refused. */
export const LINK_PROTOCOL = 1
export const PROTOCOL_HEADER = 'sitegrid-link-protocol'
export const SCHEMA_HEADER = 'sitegrid-schema'
export const CURSOR_HEADER = 'sitegrid-link-cursor'

/** This build's schema version: the name of its latest migration (`Sitegrid-Schema`). */
export const SCHEMA_VERSION = Object.keys(migrations).sort().at(-1)!
