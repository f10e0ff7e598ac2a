import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { LINKED_TABLES } from '../../db/link-triggers.ts'
import type { Principal } from '../../identity.ts'
import { backlog, currentCursor, readChanges, type Cursor } from './outbox/store.ts'
import { applyPush } from './sync/apply-push.ts'
import type { PullAnswer, PushAnswer, PushBody } from './sync/schemas.ts'
import { pause } from './wait.ts'

/** What the cloud sends down: its own tables, and the forwarded commands (ARCHITECTURE.md § Fleet link). */
export const PULLED_TABLES: readonly string[] = LINKED_TABLES.filter((t) => t.direction !== 'up').map((t) => t.name)

/** The longest a pull waits for a change before answering empty (the site asks again at once). */
export const MAX_PULL_WAIT_MS = 25_000

export interface LinkServiceDeps {
  handle: DatabaseHandle
  clock: Clock
  /** How often a waiting pull looks for new changes (each look is one indexed query). */
  pullPollMs: number
}

export interface PullQuery {
  tx: number
  seq: number
  limit: number
  waitMs: number
}

export interface Heartbeat {
  state: string
  lastError: string | null
  backlog: { items: number; bytes: number; oldestAt: number | null }
  pulledTo: Cursor
  versions: { protocol: number; schema: string }
}

/**
 * The cloud's end of the link (the site server's agent is agent/agent.ts): a site server pushes its changes, pulls
 * the cloud's for its sites, and reports its state. The organisation, the server and its sites come from the link
 * principal, never from the body.
 */
export function createLinkService(deps: LinkServiceDeps) {
  const { handle, clock } = deps

  async function touch(principal: Principal, fields: { backlog?: string; peer_versions?: string; last_error?: string | null }) {
    await handle.db
      .updateTable('site_servers')
      .set({ last_contact_at: clock.now(), ...fields })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', principal.subject)
      .execute()
  }

  return {
    async push(principal: Principal, body: PushBody): Promise<PushAnswer> {
      const answer = await applyPush(
        { handle, clock },
        { orgId: principal.orgId, serverId: principal.subject, sites: principal.sites ?? [], epoch: body.epoch, after: body.after, changes: body.changes },
      )
      await touch(principal, {})
      return answer
    },

    /**
     * The cloud's changes after the cursor for the server's sites, not those the server sent itself. Waits up to
     * `waitMs` for one (a long poll: a change reaches a connected site within about `pullPollMs`). When nothing
     * matches, `next` moves past what was readable before the read, so the next pull skips other sites' changes.
     */
    async pull(principal: Principal, query: PullQuery, signal: AbortSignal): Promise<PullAnswer> {
      const from: Cursor = { tx: query.tx, seq: query.seq }
      // Real elapsed time, not the clock of record: a wait is not an event in the data.
      const deadline = performance.now() + Math.min(query.waitMs, MAX_PULL_WAIT_MS)
      const filter = { tables: PULLED_TABLES, sites: principal.sites ?? [], origin: { not: principal.subject } }
      await touch(principal, {})
      for (;;) {
        const readable = await currentCursor(handle.db, handle.dialect, principal.orgId)
        const changes = await readChanges(handle.db, handle.dialect, principal.orgId, from, { ...filter, limit: query.limit + 1 })
        if (changes.length > 0) {
          const page = changes.slice(0, query.limit)
          const last = page.at(-1)!
          return { changes: page, next: { tx: last.tx, seq: last.seq }, more: changes.length > query.limit }
        }
        const next = readable.tx > from.tx || (readable.tx === from.tx && readable.seq > from.seq) ? readable : from
        if (performance.now() >= deadline || signal.aborted) return { changes: [], next, more: false }
        await pause(deps.pullPollMs, signal)
      }
    },

    /** What the site server reports: its state, what waits to go up, how far it pulled. Kept for the fleet view. */
    async heartbeat(principal: Principal, beat: Heartbeat): Promise<void> {
      await touch(principal, {
        backlog: JSON.stringify({ up: beat.backlog, pulledTo: beat.pulledTo, state: beat.state }),
        peer_versions: JSON.stringify(beat.versions),
        last_error: beat.lastError,
      })
    },

    /** What the cloud holds for a server after the cursor it last pulled to (the fleet view's "down" backlog). */
    waitingFor(orgId: string, serverId: string, sites: readonly string[], after: Cursor) {
      return backlog(handle.db, handle.dialect, orgId, after, { tables: PULLED_TABLES, sites, origin: { not: serverId } })
    },
  }
}

export type LinkService = ReturnType<typeof createLinkService>
