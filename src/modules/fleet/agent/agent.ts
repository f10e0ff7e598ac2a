import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import { PUSHED_TABLES } from '../../../db/link-triggers.ts'
import type { LinkPeerTable } from '../../../db/schema.ts'
import type { OrgId } from '../../../ids.ts'
import { withOrgScope, withSystemScope } from '../../../db/tenant-scope.ts'
import { ackedCursor, backlog, readChanges, START, type Change, type Cursor } from '../outbox/store.ts'
import { CLOUD_PEER, applyPull } from '../sync/apply-pull.ts'
import type { PullAnswer, PushAnswer } from '../sync/schemas.ts'
import { pause } from '../wait.ts'
import { fitBatch, PUSH_BATCH } from './batch.ts'
import type { LinkFailure, LinkHttpClient } from './http.ts'

/** The agent's state per enrolment, as `sitegrid link status`, GET /api/link and the heartbeat report it. */
export type LinkState = 'starting' | 'seeding' | 'online' | 'offline' | 'revoked' | 'version' | 'diverged' | 'refused'

export interface LinkTiming {
  /** How often an idle push loop looks for new local changes (one indexed query on the local database). */
  pushIdleMs: number
  /** How long a pull waits at the cloud for a change (a long poll). */
  pullWaitMs: number
  /** How often the agent reports its state and backlog to the cloud. */
  heartbeatMs: number
  /** The longest wait between two attempts while the cloud is unreachable (the backoff doubles from 1 s up to it). */
  backoffMaxMs: number
  /** How often the agent looks for a new or changed enrolment (link_peer). */
  peerCheckMs: number
}

export interface LinkAgentDeps {
  handle: DatabaseHandle
  clock: Clock
  log: FastifyBaseLogger
  timing: LinkTiming
  /** An HTTP client to the enrolment's cloud with its credential; undefined when the credential cannot be unsealed. */
  connect(peer: LinkPeerTable): LinkHttpClient | undefined
  /** Sends a historian batch's samples before the batch row goes up (fleet/historian-chunks). */
  uploadBatch(http: LinkHttpClient, orgId: string, batch: { id: string; siteCode: string }, signal: AbortSignal): Promise<void>
  /** After each applied pull: the forwarded alarm commands that came down are carried out (fleet/commands). */
  afterPull(orgId: OrgId): Promise<void>
}

export interface PeerStatus {
  orgId: string
  state: LinkState
  lastError: string | null
  since: number
}

const PULL_BATCH = 500

/**
 * The site server's end of the fleet link (ARCHITECTURE.md § Fleet link): for each enrolment (link_peer row) two
 * loops run, a push loop that sends the local outbox's changes after the cloud's acknowledged mark (a (tx, seq)
 * cursor, read up to the horizon that is safe on PostgreSQL: outbox/store.ts), and a pull loop
 * that long-polls the cloud and applies its changes. Only this side opens connections. While the cloud is
 * unreachable both back off and the outbox keeps every change; a version mismatch or a diverged outbox stops the
 * loops' traffic until the enrolment changes (upgrade, reseed). A refused credential (revoked, or its organisation
 * suspended by the cell's operator: the same uniform 401) is tried again at the longest back-off, so a resumed
 * organisation's link comes back on its own and a revoked one costs the cloud one refused call a loop a period.
 */
export function createLinkAgent(deps: LinkAgentDeps) {
  const { handle, clock, log, timing } = deps
  const db = handle.db
  const running = new Map<string, { stop: () => Promise<void>; status: PeerStatus }>()
  const stopping = new AbortController()
  let scanner: Promise<void> | undefined

  const readPeer = (orgId: string) => db.selectFrom('link_peer').selectAll().where('org_id', '=', orgId).executeTakeFirst()
  const pullMark = async (orgId: string): Promise<Cursor> => {
    const mark = await db.selectFrom('link_marks').select(['tx', 'seq']).where('org_id', '=', orgId).where('peer', '=', CLOUD_PEER).executeTakeFirst()
    return mark === undefined ? START : { tx: Number(mark.tx), seq: Number(mark.seq) }
  }

  function runPeer(orgId: OrgId) {
    const abort = new AbortController()
    const status: PeerStatus = { orgId, state: 'starting', lastError: null, since: clock.now() }
    let http: LinkHttpClient | undefined
    let credentialSeen: string | null = null
    let blockedUntilChange: string | null = null // the enrolment (credential and epoch) a blocking failure was met with
    let blockedRetryAt = Infinity // when a refused credential is asked again (performance.now(), as the timers run)
    // A reseed keeps the credential and changes the epoch: either lifts a block.
    const enrolmentOf = (peer: LinkPeerTable) => `${peer.sealed_credential}\n${peer.epoch}`

    const setState = async (state: LinkState, error: string | null) => {
      if (status.state !== state) {
        log.info({ event: 'link.state', orgId, from: status.state, to: state, error }, `fleet link ${state}`)
        status.since = clock.now()
      }
      status.state = state
      status.lastError = error
      await db
        .updateTable('link_peer')
        .set(state === 'online' ? { last_contact_at: clock.now(), last_error: null } : { last_error: error })
        .where('org_id', '=', orgId)
        .execute()
    }

    /**
     * The enrolment as it is now, with a client for it; undefined while the loops must wait: not enrolled, revoked
     * here, not seeded yet (the seed writes the pull's mark when it completes; `sitegrid link seed` finishes a cut
     * one), or blocked by a refusal that only a new enrolment lifts.
     */
    async function current(): Promise<{ peer: LinkPeerTable; http: LinkHttpClient } | undefined> {
      const peer = await readPeer(orgId)
      if (!peer || peer.sealed_credential === null) return undefined
      const seeded = await db.selectFrom('link_marks').select('seq').where('org_id', '=', orgId).where('peer', '=', CLOUD_PEER).executeTakeFirst()
      if (!seeded) {
        // Enrolled, not seeded (a cut enrolment or a reseed under way): said so, with the enrolment's note if any.
        if (status.state !== 'seeding') Object.assign(status, { state: 'seeding', lastError: peer.last_error, since: clock.now() })
        return undefined
      }
      if (peer.sealed_credential !== credentialSeen) {
        await http?.close()
        http = deps.connect(peer)
        credentialSeen = peer.sealed_credential
      }
      if (blockedUntilChange !== null && (blockedUntilChange !== enrolmentOf(peer) || performance.now() >= blockedRetryAt)) blockedUntilChange = null
      if (!http || blockedUntilChange === enrolmentOf(peer)) return undefined
      return { peer, http }
    }

    const backoff = { push: 0, pull: 0 }
    async function failed(loop: 'push' | 'pull', client: LinkHttpClient, failure: unknown, peer: LinkPeerTable): Promise<void> {
      if (abort.signal.aborted) return
      const f: LinkFailure = await client.describeFailure(failure)
      if (f.kind === 'aborted') return
      if (f.kind === 'version' || f.kind === 'diverged') {
        // Nothing changes by retrying: wait for a reseed (a new epoch) or a restart after an upgrade. The enrolment the
        // failed call was made with: one changed meanwhile is not blocked.
        blockedUntilChange = enrolmentOf(peer)
        blockedRetryAt = Infinity
        await setState(f.kind, f.message)
        log.warn({ event: `link.${f.kind}`, orgId, loop }, f.message)
        return
      }
      if (f.kind === 'unauthorized') {
        // Revoked (a new enrolment lifts the block at once) or suspended (a resume does not show but by asking): the
        // same 401, so the loops wait for a new enrolment and ask again at the longest back-off; said once.
        if (status.state !== 'revoked') log.warn({ event: 'link.unauthorized', orgId, loop }, f.message)
        blockedUntilChange = enrolmentOf(peer)
        blockedRetryAt = performance.now() + timing.backoffMaxMs
        await setState('revoked', f.message)
        return
      }
      await setState(f.kind === 'refused' ? 'refused' : 'offline', f.message)
      backoff[loop] = Math.min(timing.backoffMaxMs, Math.max(1000, backoff[loop] * 2))
      const retryAfter = 'retryAfterMs' in f && f.retryAfterMs !== undefined ? f.retryAfterMs : 0
      const wait = Math.max(retryAfter, backoff[loop] / 2 + Math.random() * (backoff[loop] / 2))
      log.warn({ event: 'link.retry', orgId, loop, kind: f.kind, waitMs: Math.round(wait) }, f.message)
      await pause(wait, abort.signal)
    }

    async function pushOnce(peer: LinkPeerTable, client: LinkHttpClient): Promise<boolean> {
      const sites = JSON.parse(peer.sites) as string[]
      const after = ackedCursor(peer)
      const changes: Change[] = fitBatch(
        await readChanges(db, handle.dialect, orgId, after, {
          tables: PUSHED_TABLES,
          sites: [...sites, ''],
          origin: { only: '' },
          limit: PUSH_BATCH,
        }),
      )
      if (changes.length === 0) return false
      for (const change of changes) {
        // A batch's samples go before its row: the row makes them visible in the cloud.
        if (change.table === 'historian_batches' && change.op === 'upsert' && change.row.status === 'complete') {
          await deps.uploadBatch(client, orgId, { id: String(change.row.id), siteCode: change.site }, abort.signal)
        }
      }
      const res = await client.request('/api/link/push', {
        method: 'POST',
        body: { epoch: peer.epoch, after, changes },
        signal: abort.signal,
      })
      if (!res.ok) throw res
      const answer = (await res.json()) as PushAnswer
      await db
        .updateTable('link_peer')
        .set({ acked_tx: answer.mark.tx, acked_seq: answer.mark.seq, last_contact_at: clock.now(), last_error: null })
        .where('org_id', '=', orgId)
        .where('epoch', '=', peer.epoch) // a reseed meanwhile restarted the count: an answer of the old epoch is void
        .execute()
      return true
    }

    /** A loop that fails outside a link call (its own database) logs, waits and starts again: the link never dies silently. */
    async function guarded(loop: 'push' | 'pull', body: () => Promise<void>): Promise<void> {
      while (!abort.signal.aborted) {
        try {
          await body()
        } catch (err) {
          if (abort.signal.aborted) return
          log.error({ err, orgId, loop }, 'fleet link: the loop failed; starting it again')
          await pause(timing.backoffMaxMs, abort.signal)
        }
      }
    }

    async function pushLoop(): Promise<void> {
      let lastBeat = -Infinity
      while (!abort.signal.aborted) {
        const now = await current()
        if (!now) {
          await pause(timing.peerCheckMs, abort.signal)
          continue
        }
        try {
          const sent = await pushOnce(now.peer, now.http)
          backoff.push = 0
          if (status.state !== 'online') await setState('online', null)
          // Real elapsed time, not the clock of record (which stamps the data).
          if (performance.now() - lastBeat >= timing.heartbeatMs) {
            await heartbeat(now.peer, now.http)
            lastBeat = performance.now()
          }
          if (!sent) await pause(timing.pushIdleMs, abort.signal)
        } catch (err) {
          await failed('push', now.http, err, now.peer)
        }
      }
    }

    async function heartbeat(peer: LinkPeerTable, client: LinkHttpClient): Promise<void> {
      const sites = JSON.parse(peer.sites) as string[]
      const waiting = await backlog(db, handle.dialect, orgId, ackedCursor(peer), { tables: PUSHED_TABLES, sites: [...sites, ''], origin: { only: '' } })
      const res = await client.request('/api/link/heartbeat', {
        method: 'PUT',
        body: { state: status.state, lastError: status.lastError, backlog: waiting, pulledTo: await pullMark(orgId) },
        signal: abort.signal,
      })
      if (!res.ok) throw res
    }

    async function pullLoop(): Promise<void> {
      while (!abort.signal.aborted) {
        const now = await current()
        if (!now) {
          await pause(timing.peerCheckMs, abort.signal)
          continue
        }
        try {
          const from = await pullMark(orgId)
          const query = new URLSearchParams({ tx: String(from.tx), seq: String(from.seq), limit: String(PULL_BATCH), waitMs: String(timing.pullWaitMs) })
          const res = await now.http.request(`/api/link/pull?${query}`, { method: 'GET', signal: abort.signal, timeoutMs: timing.pullWaitMs + 30_000 })
          if (!res.ok) throw res
          const answer = (await res.json()) as PullAnswer
          // A reseed while the pull waited: its answer belongs to the previous epoch (the seed brings what it held).
          if ((await readPeer(orgId))?.epoch !== now.peer.epoch) continue
          const sites = JSON.parse(now.peer.sites) as string[]
          await applyPull({ handle, clock }, { orgId, serverId: now.peer.server_id, sites, epoch: now.peer.epoch, changes: answer.changes, next: answer.next })
          backoff.pull = 0
          if (status.state !== 'online') await setState('online', null)
          if (answer.changes.length > 0) await deps.afterPull(orgId)
        } catch (err) {
          await failed('pull', now.http, err, now.peer)
        }
      }
    }

    // In the enrolment's organisation scope: row-level security (a site server on PostgreSQL) shows it only its rows.
    const loops = withOrgScope(orgId, () => Promise.all([guarded('push', pushLoop), guarded('pull', pullLoop)]))
    return {
      status,
      stop: async () => {
        abort.abort()
        await loops
        await http?.close()
      },
    }
  }

  async function scan(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        const peers = await withSystemScope(() => db.selectFrom('link_peer').select('org_id').execute()) // every enrolment of this server
        for (const { org_id } of peers) if (!running.has(org_id)) running.set(org_id, runPeer(org_id as OrgId))
      } catch (err) {
        log.error({ err }, 'fleet link: reading the enrolments failed')
      }
      await pause(timing.peerCheckMs, stopping.signal)
    }
  }

  return {
    start(): void {
      scanner ??= scan()
    },
    async stop(): Promise<void> {
      stopping.abort()
      await scanner
      await Promise.all([...running.values()].map((r) => r.stop()))
      running.clear()
    },
    /** The agent's view of each enrolment it runs. */
    status(): PeerStatus[] {
      return [...running.values()].map((r) => ({ ...r.status }))
    },
  }
}

export type LinkAgent = ReturnType<typeof createLinkAgent>
