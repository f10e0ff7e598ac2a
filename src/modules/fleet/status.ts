import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from 'typebox'
import type { DatabaseHandle } from '../../db/connect.ts'
import { problemResponses } from '../../http/problem.ts'
import { PUSHED_TABLES } from '../../db/link-triggers.ts'
import type { LinkAgent } from './agent/agent.ts'
import { docs } from './docs.ts'
import { ackedCursor, backlog, START } from './outbox/store.ts'
import { CLOUD_PEER } from './sync/apply-pull.ts'
import { CursorSchema } from './sync/schemas.ts'

const Iso = Type.Union([Type.String({ format: 'date-time' }), Type.Null()])

export const LinkStatusSchema = Type.Object(
  {
    enrolled: Type.Boolean(),
    serverId: Type.Union([Type.String(), Type.Null()]),
    cloudUrl: Type.Union([Type.String(), Type.Null()]),
    sites: Type.Array(Type.String()),
    enrolledAt: Iso,
    state: Type.String({ description: 'starting, online, offline, revoked, version, diverged or refused; `stopped` when no agent runs in this process.' }),
    lastContactAt: Iso,
    lastError: Type.Union([Type.String(), Type.Null()]),
    up: Type.Object(
      { items: Type.Integer(), bytes: Type.Integer(), oldestAt: Iso },
      { additionalProperties: false, description: 'Changes made here that the cloud has not acknowledged yet.' },
    ),
    pulledTo: CursorSchema,
    unresolvedConflicts: Type.Integer({ description: 'Conflict records the cloud sent that nobody resolved yet.' }),
  },
  { $id: 'LinkStatus', additionalProperties: false },
)
export type LinkStatus = Static<typeof LinkStatusSchema>

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString())

/** A site server's link, as GET /api/link and `sitegrid link status` show it (the agent's state when one runs here). */
export async function readLinkStatus(handle: DatabaseHandle, orgId: string, agent: LinkAgent | undefined): Promise<LinkStatus> {
  const db = handle.db
  const peer = await db.selectFrom('link_peer').selectAll().where('org_id', '=', orgId).executeTakeFirst()
  const mark = await db.selectFrom('link_marks').select(['tx', 'seq']).where('org_id', '=', orgId).where('peer', '=', CLOUD_PEER).executeTakeFirst()
  const conflicts = await db
    .selectFrom('link_conflicts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .where('resolved_at', 'is', null)
    .executeTakeFirst()
  const sites = peer ? (JSON.parse(peer.sites) as string[]) : []
  const up = peer
    ? await backlog(db, handle.dialect, orgId, ackedCursor(peer), { tables: PUSHED_TABLES, sites: [...sites, ''], origin: { only: '' } })
    : { items: 0, bytes: 0, oldestAt: null }
  const running = agent?.status().find((s) => s.orgId === orgId)
  return {
    enrolled: peer !== undefined,
    serverId: peer?.server_id ?? null,
    cloudUrl: peer?.cloud_url ?? null,
    sites,
    enrolledAt: iso(peer?.enrolled_at),
    state: peer === undefined ? 'unenrolled' : peer.sealed_credential === null ? 'revoked' : (running?.state ?? 'stopped'),
    lastContactAt: iso(peer?.last_contact_at),
    lastError: running?.lastError ?? peer?.last_error ?? null,
    up: { items: up.items, bytes: up.bytes, oldestAt: iso(up.oldestAt) },
    pulledTo: mark ? { tx: Number(mark.tx), seq: Number(mark.seq) } : START,
    unresolvedConflicts: Number(conflicts?.n ?? 0),
  }
}

/** Site mode: GET /api/link, the link's state for the site's console. */
export const linkStatusRoutes: FastifyPluginAsyncTypebox<{ handle: DatabaseHandle; agent: LinkAgent }> = async (app, { handle, agent }) => {
  app.get(
    '/',
    {
      config: { policy: 'member' },
      schema: {
        tags: ['Fleet link'],
        operationId: 'getLinkStatus',
        summary: "This site server's link to its cloud",
        description: docs.linkStatus,
        response: { 200: LinkStatusSchema, ...problemResponses(401, 403, 429) },
      },
    },
    async (request) => readLinkStatus(handle, request.principal.orgId, agent),
  )
}
