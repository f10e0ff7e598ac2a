/** What the sync engine uses of the outbox (modules/fleet/outbox, db/link-triggers.ts), in one place. */
export { LINKED_TABLES, type LinkedTable } from '../../../db/link-triggers.ts'
export { isAfter, latestChange, rowKey, seedVersion, withApplyOrigin, type Change, type Cursor } from '../outbox/store.ts'
