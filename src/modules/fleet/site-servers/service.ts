import type { Readable } from 'node:stream'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db, SiteServersTable } from '../../../db/schema.ts'
import { lockUntilCommit } from '../../../db/transaction-lock.ts'
import { invalidField, NotFound, Unauthorized } from '../../../errors/domain-error.ts'
import { LAST_ISO_MS } from '../../../http/input-guard.ts'
import { decodeCursor, toPage } from '../../../http/paging.ts'
import type { Actor, Org, Principal } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import { recordAudit } from '../../audit/service.ts'
import { republishPendingCommands } from '../commands/service.ts'
import { backlog, replaceSeedVersions, rowKey, seedVersionSql, type Cursor } from '../outbox/store.ts'
import { LINKED_TABLES, PULLED_TABLES } from '../../../db/link-triggers.ts'
import type { RowVersions } from '../../tenant-transfer/service.ts'
import { MAX_PULL_WAIT_MS } from '../link-service.ts'
import type { SitesService } from '../../sites/service.ts'
import { LinkOrgMismatch, LinkServerMismatch, LinkVersionMismatch, SiteAlreadyLinked } from './errors.ts'
import { LINK_PROTOCOL } from './protocol.ts'
import type { Enrolment, EnrolInput, RegisterSiteServerInput, ReseedAnswer, ReseedInput, SiteServer, SiteServerWithCode } from './schemas.ts'
import { codeHashOf, credentialVerifierOf, ENROLMENT_CODE_PATTERN, newCredential, newEnrolmentCode, newSiteServerId } from './secrets.ts'
import {
  consumeEnrolmentCode,
  findSiteServer,
  findSiteServerByCodeHash,
  insertSiteServer,
  listLiveSiteServers,
  listSiteServersPage,
  reopenRevokedSiteServer,
  replaceEnrolmentCode,
  reseedSiteServer,
  revokeSiteServer,
} from './store.ts'

export const ENROLMENT_CODE_LIFETIME_MS = 24 * 3_600_000

/** The cloud's tables a seed carries, whose rows the site bases its edits on. */
const SEEDED_TABLES = new Map(LINKED_TABLES.filter((t) => t.direction === 'down').map((t) => [t.name, t]))

export interface SiteServersDeps {
  handle: DatabaseHandle
  clock: Clock
  keySecret: Buffer
  sites: Pick<SitesService, 'require'>
  /** The outbox position every change up to which is readable now (the outbox's `currentCursor`). */
  currentCursor: (db: Db, orgId: OrgId) => Promise<Cursor>
  /** One site's tenant package, gzip (the tenant transfer's export), with the seed's row versions. */
  exportSite: (org: Org, site: string, versions: RowVersions) => Promise<Readable>
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
const sitesOf = (row: { sites: string }): string[] => JSON.parse(row.sites) as string[]
const jsonOrNull = (text: string | null) => (text === null ? null : (JSON.parse(text) as Record<string, unknown>))

function statusOf(row: SiteServersTable): SiteServer['status'] {
  if (row.revoked_at !== null) return 'revoked'
  return row.credential_verifier === null ? 'registered' : 'enrolled'
}

/** A site server is online while its last contact is younger than this: two of the longest pulls and a margin (60 s). */
export const ONLINE_WITHIN_MS = 2 * MAX_PULL_WAIT_MS + 10_000

function connectionOf(row: SiteServersTable, now: number): SiteServer['connection'] {
  if (row.last_contact_at === null) return 'never'
  return now - row.last_contact_at < ONLINE_WITHIN_MS ? 'online' : 'offline'
}

/** The outbox position the site server last reported pulling to (its heartbeat), if any. */
function pulledToOf(row: SiteServersTable): Cursor | undefined {
  const reported = jsonOrNull(row.backlog)?.pulledTo as { tx?: unknown; seq?: unknown } | undefined
  if (typeof reported?.tx !== 'number' || typeof reported.seq !== 'number') return undefined
  return { tx: reported.tx, seq: reported.seq }
}

/**
 * What the site server reported at its last heartbeat (`up`: what waits on it to go up, `pulledTo`, `state`), its
 * `up.oldestAt` as a date-time like every instant the API answers (the heartbeat carries epoch ms).
 */
function reportedBacklog(row: SiteServersTable): Record<string, unknown> | null {
  const reported = jsonOrNull(row.backlog)
  const up = reported?.up as { oldestAt?: unknown } | undefined
  if (!reported || typeof up?.oldestAt !== 'number') return reported
  // One stored before the heartbeat's schema bounded it (session 25) reads as the last date it may be.
  return { ...reported, up: { ...up, oldestAt: iso(Math.min(up.oldestAt, LAST_ISO_MS)) } }
}

function toSiteServer(row: SiteServersTable, now: number, down: SiteServer['down'] = null): SiteServer {
  return {
    id: row.id,
    name: row.name,
    sites: sitesOf(row),
    status: statusOf(row),
    createdAt: iso(row.created_at)!,
    enrolledAt: iso(row.enrolled_at),
    revokedAt: iso(row.revoked_at),
    codeExpiresAt: iso(row.code_hash === null ? null : row.code_expires_at),
    lastContactAt: iso(row.last_contact_at),
    lastError: row.last_error,
    peerVersions: jsonOrNull(row.peer_versions),
    backlog: reportedBacklog(row),
    connection: connectionOf(row, now),
    down,
  }
}

/** The actor of what a site server does itself (its enrolment). */
function linkActor(serverId: string): Actor {
  return { kind: 'link', subject: serverId, role: 'member' }
}

export function createSiteServersService(deps: SiteServersDeps) {
  const { handle, clock, keySecret } = deps
  const db = handle.db
  if (keySecret.length < 32) throw new TypeError('the verifier secret must hold at least 32 bytes')

  /** The row with what the cloud holds for it (the fleet view's "down" backlog), from the position it reported. */
  async function view(row: SiteServersTable): Promise<SiteServer> {
    const after = pulledToOf(row)
    if (after === undefined) return toSiteServer(row, clock.now())
    const waiting = await backlog(db, handle.dialect, row.org_id, after, { tables: PULLED_TABLES, sites: sitesOf(row), origin: { not: row.id } })
    return toSiteServer(row, clock.now(), { items: waiting.items, bytes: waiting.bytes, oldestAt: iso(waiting.oldestAt) })
  }

  /** Throws SiteAlreadyLinked when one of `sites` belongs to a live site server other than `except`. */
  async function refuseLinkedSites(trx: Db, orgId: OrgId, sites: readonly string[], except: string | undefined): Promise<void> {
    for (const other of await listLiveSiteServers(trx, orgId)) {
      if (other.id === except) continue
      const taken = sites.find((s) => sitesOf(other).includes(s))
      if (taken !== undefined) throw new SiteAlreadyLinked(taken, other.id)
    }
  }

  return {
    /** Registers a site server and answers its one-time code; throws ValidationFailed (unknown site) or SiteAlreadyLinked. */
    async register(orgId: OrgId, actor: Actor, input: RegisterSiteServerInput): Promise<SiteServerWithCode> {
      for (const [i, site] of input.sites.entries()) {
        try {
          await deps.sites.require(orgId, site)
        } catch (err) {
          if (err instanceof NotFound) throw invalidField(`/sites/${i}`, `no site ${site} in this organisation`)
          throw err
        }
      }
      const now = clock.now()
      const id = newSiteServerId(now)
      const code = newEnrolmentCode()
      const expiresAt = now + ENROLMENT_CODE_LIFETIME_MS
      await db.transaction().execute(async (trx) => {
        // Two registrations of one site at once: the second sees the first's row.
        await lockUntilCommit(trx, handle.dialect, `site-servers:${orgId}`)
        await refuseLinkedSites(trx, orgId, input.sites, undefined)
        await insertSiteServer(trx, {
          org_id: orgId,
          id,
          name: input.name,
          sites: JSON.stringify(input.sites),
          code_hash: codeHashOf(code),
          code_expires_at: expiresAt,
          credential_verifier: null,
          epoch: null,
          created_at: now,
          created_by: actor.subject,
          enrolled_at: null,
          revoked_at: null,
          revoked_by: null,
          last_contact_at: null,
          last_error: null,
          peer_versions: null,
          backlog: null,
        })
        await recordAudit(trx, clock, orgId, actor, { action: 'site_server.registered', target: id, detail: { name: input.name, sites: input.sites } })
      })
      return { id, name: input.name, sites: [...input.sites], status: 'registered', enrolmentCode: code, codeExpiresAt: iso(expiresAt)! }
    },

    async list(orgId: OrgId, query: { limit?: number; cursor?: string }) {
      const limit = query.limit ?? 50
      const after = decodeCursor(query.cursor, ['string'])
      const rows = await listSiteServersPage(db, orgId, { limit: limit + 1, ...(after ? { afterId: after[0] as string } : {}) })
      const page = toPage(
        rows,
        limit,
        (r) => r,
        (r) => [r.id],
      )
      return { ...page, items: await Promise.all(page.items.map(view)) }
    },

    /** The site server or the uniform NotFound. */
    async get(orgId: OrgId, id: string): Promise<SiteServer> {
      const row = await findSiteServer(db, orgId, id)
      if (!row) throw new NotFound()
      return view(row)
    },

    /** Revokes at once in every process sharing the database; absent, foreign or already revoked: NotFound. */
    async revoke(orgId: OrgId, actor: Actor, id: string): Promise<SiteServer> {
      const row = await db.transaction().execute(async (trx) => {
        const result = await revokeSiteServer(trx, orgId, id, clock.now(), actor.subject)
        if (Number(result.numUpdatedRows) === 0) throw new NotFound()
        await recordAudit(trx, clock, orgId, actor, { action: 'site_server.revoked', target: id })
        // As an API-key revoke: the other processes drop their cached credentials once this commits.
        await handle.announceInvalidation(trx)
        return findSiteServer(trx, orgId, id)
      })
      handle.invalidateLocally()
      return view(row!)
    },

    /** A new one-time code for the same site server (its id and marks are kept); NotFound or SiteAlreadyLinked. */
    async issueEnrolmentCode(orgId: OrgId, actor: Actor, id: string): Promise<SiteServerWithCode> {
      const now = clock.now()
      const code = newEnrolmentCode()
      const expiresAt = now + ENROLMENT_CODE_LIFETIME_MS
      const row = await db.transaction().execute(async (trx) => {
        await lockUntilCommit(trx, handle.dialect, `site-servers:${orgId}`)
        const before = await findSiteServer(trx, orgId, id)
        if (!before) throw new NotFound()
        if (before.revoked_at === null) {
          await replaceEnrolmentCode(trx, orgId, id, codeHashOf(code), expiresAt)
        } else {
          // Its sites may have been given to another site server since it was revoked.
          await refuseLinkedSites(trx, orgId, sitesOf(before), id)
          await reopenRevokedSiteServer(trx, orgId, id, codeHashOf(code), expiresAt)
        }
        await recordAudit(trx, clock, orgId, actor, { action: 'site_server.code_issued', target: id })
        return findSiteServer(trx, orgId, id)
      })
      return { id, name: row!.name, sites: sitesOf(row!), status: statusOf(row!), enrolmentCode: code, codeExpiresAt: iso(expiresAt)! }
    },

    /**
     * Exchanges a one-time code for the link credential (the code is used up: of concurrent uses exactly one wins).
     * Throws the uniform Unauthorized (unknown, expired or used code), LinkOrgMismatch, LinkServerMismatch or
     * LinkVersionMismatch; a refusal leaves the code usable.
     */
    async enrol(org: Org, input: EnrolInput): Promise<Enrolment> {
      if (!ENROLMENT_CODE_PATTERN.test(input.code)) throw new Unauthorized()
      const codeHash = codeHashOf(input.code)
      const now = clock.now()
      const row = await findSiteServerByCodeHash(db, org.id, codeHash)
      if (!row || row.code_expires_at === null || row.code_expires_at <= now) throw new Unauthorized()
      if (input.orgId !== null && input.orgId !== org.id) throw new LinkOrgMismatch(input.orgId, org.id)
      if (input.serverId !== undefined && input.serverId !== row.id) throw new LinkServerMismatch(input.serverId)
      if (input.protocol !== LINK_PROTOCOL) throw new LinkVersionMismatch(String(input.protocol), LINK_PROTOCOL)
      const credential = newCredential(row.id)
      await db.transaction().execute(async (trx) => {
        const result = await consumeEnrolmentCode(trx, org.id, row.id, codeHash, now, {
          credentialVerifier: credentialVerifierOf(keySecret, credential),
          peerVersions: JSON.stringify({ protocol: input.protocol, schema: input.schema }),
          epoch: input.epoch,
        })
        if (Number(result.numUpdatedRows) === 0) throw new Unauthorized() // another use won, or it expired meanwhile
        await recordAudit(trx, clock, org.id, linkActor(row.id), {
          action: 'site_server.enrolled',
          target: row.id,
          detail: { reenrolment: row.enrolled_at !== null, protocol: input.protocol, schema: input.schema },
        })
        // A re-enrolment replaced the verifier: the previous credential stops in every process.
        await handle.announceInvalidation(trx)
      })
      handle.invalidateLocally()
      return { serverId: row.id, org: { id: org.id, slug: org.slug, name: org.name }, sites: sitesOf(row), credential }
    },

    /**
     * One of the principal's sites as a tenant package, with the outbox position taken before the export: the pull
     * replays every change after it. Each row of the cloud's tables is read with its version in the same statement;
     * those whose version lies after the position (changed while the seed was taken, or by a transaction still running
     * when the position was taken) are recorded for the server before the package ends (link_seed_versions): the pull
     * answers their older changes as superseded, and a site edit of them is judged from that version, so an edit made
     * on the site before its first pull is neither undone by a replay nor settled as a conflict. The package carries
     * no forwarded commands: the site's pending ones are recorded again after that position, so the pull brings them.
     * A site that is not the principal's is the uniform NotFound.
     */
    async seed(org: Org, principal: Principal, site: string): Promise<{ cursor: Cursor; stream: Readable }> {
      if (principal.kind !== 'link' || !principal.sites?.includes(site)) throw new NotFound()
      const cursor = await deps.currentCursor(db, org.id)
      await db.transaction().execute((trx) => republishPendingCommands(trx, org.id, [site]))
      const found: Array<{ table: string; rowKey: string; version: number }> = []
      const versions: RowVersions = {
        of: (name) => {
          const table = SEEDED_TABLES.get(name)
          return table && seedVersionSql(handle.dialect, table, `"${name}"`, cursor)
        },
        found: (name, row, version) => found.push({ table: name, rowKey: rowKey(SEEDED_TABLES.get(name)!.key.map((c) => row[c])), version }),
        done: () => replaceSeedVersions(db, org.id, principal.subject, site, found),
      }
      return { cursor, stream: await deps.exportSite(org, site, versions) }
    },

    /**
     * A site server restored from an old backup starts its outbox anew (`sitegrid link reseed`): its new epoch is
     * stored, so a push of the old one is refused (409 LinkDiverged, reason epoch), and its mark is replaced by the new
     * epoch's, starting at `after` (its next push continues from there). Audited. The server is the principal's: a
     * revoked one is the uniform 401 before this; one revoked meanwhile is NotFound.
     */
    async reseed(org: Org, principal: Principal, input: ReseedInput): Promise<ReseedAnswer> {
      if (principal.kind !== 'link') throw new NotFound()
      const now = clock.now()
      await db.transaction().execute(async (trx) => {
        if ((await reseedSiteServer(trx, org.id, principal.subject, input.epoch, input.after, now)) === 0) throw new NotFound()
        await recordAudit(trx, clock, org.id, linkActor(principal.subject), {
          action: 'site_server.reseeded',
          target: principal.subject,
          detail: { after: input.after },
        })
      })
      return { mark: { epoch: input.epoch, tx: input.after.tx, seq: input.after.seq } }
    },
  }
}

export type SiteServersService = ReturnType<typeof createSiteServersService>
