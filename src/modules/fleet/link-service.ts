import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import { PULLED_TABLES } from '../../db/link-triggers.ts'
import type { Principal } from '../../identity.ts'
import { backlog, currentCursor, isAfter, readChanges, type Change, type Cursor } from './outbox/store.ts'
import { applyPush } from './sync/apply-push.ts'
import type { PullAnswer, PushAnswer, PushBody } from './sync/schemas.ts'
import { pause } from './wait.ts'

/** The longest a pull waits for a change before answering empty (the site asks again at once). */
export const MAX_PULL_WAIT_MS = 25_000

/**
 * A push or a pull records the server's last contact at most this often per process (the fleet view calls a server
 * online within 60 s of it): a connected server's calls do not each write a row. A heartbeat always writes.
 */
export const CONTACT_EVERY_MS = 10_000

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
  /** Per server: when this process last wrote its contact (the clock of record: it is the value written). */
  const contacted = new Map<string, number>()

  async function touch(principal: Principal, fields?: { backlog: string; peer_versions: string; last_error: string | null }) {
    const now = clock.now()
    const key = `${principal.orgId}/${principal.subject}`
    const last = contacted.get(key)
    if (fields === undefined && last !== undefined && now - last >= 0 && now - last < CONTACT_EVERY_MS) return
    await handle.db
      .updateTable('site_servers')
      .set({ last_contact_at: now, ...fields })
      .where('org_id', '=', principal.orgId)
      .where('id', '=', principal.subject)
      .execute()
    contacted.set(key, now)
  }

  return {
    async push(principal: Principal, body: PushBody): Promise<PushAnswer> {
      const answer = await applyPush(
        { handle, clock },
        { orgId: principal.orgId, serverId: principal.subject, sites: principal.sites ?? [], epoch: body.epoch, after: body.after, changes: body.changes },
      )
      await touch(principal)
      return answer
    },

    /**
     * The cloud's changes after the cursor for the server's sites, not those the server sent itself. Waits up to
     * `waitMs` for one (a long poll: a change reaches a connected site within about `pullPollMs`; each look is one
     * indexed query). When nothing matches, `next` moves past what was readable before the last read, so the next
     * pull skips other sites' changes.
     */
    async pull(principal: Principal, query: PullQuery, signal: AbortSignal): Promise<PullAnswer> {
      const from: Cursor = { tx: query.tx, seq: query.seq }
      // Real elapsed time, not the clock of record: a wait is not an event in the data.
      const deadline = performance.now() + Math.min(query.waitMs, MAX_PULL_WAIT_MS)
      const filter = { tables: PULLED_TABLES, sites: principal.sites ?? [], origin: { not: principal.subject } }
      await touch(principal)
      const read = () => readChanges(handle.db, handle.dialect, principal.orgId, from, { ...filter, limit: query.limit + 1, seededBy: principal.subject })
      const answer = (changes: Change[]): PullAnswer => {
        const page = changes.slice(0, query.limit)
        const last = page.at(-1)!
        return { changes: page, next: { tx: last.tx, seq: last.seq }, more: changes.length > query.limit }
      }
      for (;;) {
        const changes = await read()
        if (changes.length > 0) return answer(changes)
        if (performance.now() >= deadline || signal.aborted) break
        await pause(deps.pullPollMs, signal)
      }
      // Nothing for this server: the cursor of what is readable now, then one more read, so that a change that became
      // readable in between is answered rather than passed over.
      const readable = await currentCursor(handle.db, handle.dialect, principal.orgId)
      const changes = await read()
      if (changes.length > 0) return answer(changes)
      const next = isAfter(readable, from) ? readable : from
      return { changes: [], next, more: false }
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
