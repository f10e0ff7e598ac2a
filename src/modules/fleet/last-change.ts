import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { DatabaseHandle } from '../../db/connect.ts'
import { LINKED_TABLES } from '../../db/link-triggers.ts'
import { invalidField } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import type { OrgId } from '../../ids.ts'
import { latestChange } from './outbox/store.ts'
import { findSiteServer } from './site-servers/store.ts'

/**
 * "Which side last changed it" (issue 26, consoles): the origin and time of a record's latest change, from the outbox.
 * One call answers a page of keys of one table (a console lists 25 controllers at a time: one call, not 25).
 * The audit trail and the conflict records are left out: members cannot read them.
 */
const READABLE_TABLES = LINKED_TABLES.filter((t) => t.name !== 'audit_events' && t.name !== 'link_conflicts')
const MAX_KEYS = 100

const docs = {
  lastChange:
    "Issue 26, the fleet link. Which side last changed each of these records of one linked table, and when, from this server's outbox: " +
    "`here` (this server), `cloud` (a site server: the cloud's change, pulled) or `siteServer` (the cloud: a site server's change, pushed; " +
    'with its id and name). `change` is null when no change of the record is recorded (made before the link existed). `key` is the ' +
    'record\'s primary key after the organisation, as a JSON array (e.g. `["S1","ctl_…"]`); repeat it for up to 100 records. ' +
    'A key that is not a JSON array of the table’s key length is a 400 naming it.',
}

const KeyValue = Type.Union([Type.String(), Type.Number()])

export const LastChangeQuery = Type.Object(
  {
    table: Type.Union(
      READABLE_TABLES.map((t) => Type.Literal(t.name)),
      { description: 'A linked table a member may read.' },
    ),
    key: Type.Array(Type.String({ minLength: 2, maxLength: 1000 }), {
      minItems: 1,
      maxItems: MAX_KEYS,
      description: 'The primary key after org_id, as a JSON array; repeat for several records.',
    }),
  },
  { additionalProperties: false },
)

export const LastChangeSchema = Type.Object(
  {
    origin: Type.Union([Type.Literal('here'), Type.Literal('cloud'), Type.Literal('siteServer')], {
      description: '`here`: made on this server; `cloud`: pulled from the cloud (on a site server); `siteServer`: pushed by a site server (in the cloud).',
    }),
    serverId: Type.Union([Type.String(), Type.Null()], { description: '`siteServer`: which one.' }),
    serverName: Type.Union([Type.String(), Type.Null()], { description: '`siteServer`: its name, when it is still registered.' }),
    op: Type.Union([Type.Literal('upsert'), Type.Literal('delete')]),
    at: Type.String({ format: 'date-time', description: "When, by the database's clock of the server that recorded it." }),
  },
  { $id: 'LastChange', additionalProperties: false },
)
export type LastChange = Static<typeof LastChangeSchema>

export const LastChangesSchema = Type.Object(
  {
    table: Type.String(),
    items: Type.Array(Type.Object({ key: Type.Array(KeyValue), change: Type.Union([LastChangeSchema, Type.Null()]) }, { additionalProperties: false }), {
      description: 'One per key asked, in the order asked.',
    }),
  },
  { $id: 'LastChanges', additionalProperties: false },
)
export type LastChanges = Static<typeof LastChangesSchema>

function parseKey(text: string, length: number, index: number): Array<string | number> {
  let key: unknown
  try {
    key = JSON.parse(text)
  } catch {
    throw invalidField(`/key/${index}`, 'must be a JSON array', 'query')
  }
  if (!Array.isArray(key) || key.length !== length || !key.every((v) => typeof v === 'string' || typeof v === 'number')) {
    throw invalidField(`/key/${index}`, `must be a JSON array of ${length} strings or numbers (the table's key after the organisation)`, 'query')
  }
  return key as Array<string | number>
}

/** The latest recorded change of each record; ValidationFailed naming `/key/{i}` for a malformed key. */
export async function readLastChanges(handle: DatabaseHandle, orgId: OrgId, table: string, keys: readonly string[]): Promise<LastChanges> {
  const linked = READABLE_TABLES.find((t) => t.name === table)
  if (!linked) throw invalidField('/table', 'must be a linked table', 'query')
  const parsed = keys.map((k, i) => parseKey(k, linked.key.length, i))
  const names = new Map<string, string | null>()
  const nameOf = async (serverId: string) => {
    if (!names.has(serverId)) names.set(serverId, (await findSiteServer(handle.db, orgId, serverId))?.name ?? null)
    return names.get(serverId)!
  }
  const items = []
  for (const key of parsed) {
    const change = await latestChange(handle.db, orgId, table, key, { afterSeq: 0 })
    if (!change) {
      items.push({ key, change: null })
      continue
    }
    const at = new Date(change.at).toISOString()
    if (change.origin === '') items.push({ key, change: { origin: 'here' as const, serverId: null, serverName: null, op: change.op, at } })
    else if (change.origin === 'cloud') items.push({ key, change: { origin: 'cloud' as const, serverId: null, serverName: null, op: change.op, at } })
    else items.push({ key, change: { origin: 'siteServer' as const, serverId: change.origin, serverName: await nameOf(change.origin), op: change.op, at } })
  }
  return { table, items }
}

/** GET /api/link/last-change, both modes. */
export const lastChangeRoutes: FastifyPluginAsyncTypebox<{ handle: DatabaseHandle }> = async (app, { handle }) => {
  app.get(
    '/last-change',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Fleet link'],
        operationId: 'getLastChange',
        summary: 'Which side last changed these records',
        description: docs.lastChange,
        querystring: LastChangeQuery,
        response: { 200: LastChangesSchema, ...problemResponses(400, 401, 403, 429) },
      },
    },
    async (request) => readLastChanges(handle, request.principal.orgId, request.query.table, request.query.key),
  )
}
