import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { seal, unseal } from '../../../auth/site-pin/seal.ts'
import { LINKED_TABLES, type LinkedTable } from '../../../db/link-triggers.ts'
import type { Clock } from '../../../clock.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { LinkPeerTable } from '../../../db/schema.ts'
import { invalidField, NotFound } from '../../../errors/domain-error.ts'
import type { Actor, Org } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import type { OrgsService } from '../../orgs/service.ts'
import type { SitesService } from '../../sites/service.ts'
import type { TenantTransferService } from '../../tenant-transfer/service.ts'
import { EXPORTED_TABLES } from '../../tenant-transfer/tables.ts'
import { ackedCursor, currentCursor, isAfter, readChanges, rowKey, START, withApplyOrigin, type Change, type Cursor } from '../outbox/store.ts'
import { PUSHED_TABLES } from '../../../db/link-triggers.ts'
import { recordAudit } from '../../audit/service.ts'
import type { LinkHttp } from '../agent/http.ts'
import { LinkOrgMismatch, LinkVersionMismatch } from '../site-servers/errors.ts'
import { CURSOR_HEADER, LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_VERSION } from '../site-servers/protocol.ts'
import type { Enrolment, ReseedAnswer } from '../site-servers/schemas.ts'
import {
  CloudRefusedEnrolment,
  EnrolmentCodeRefused,
  LinkAlreadyEnrolled,
  LinkCloudUnavailable,
  LinkCredentialRefused,
  NotEnrolled,
  ReseedIncomplete,
  SeveralOrganisations,
} from './errors.ts'
import {
  CLOUD_PEER,
  deleteOutboxRows,
  dropLinkedSites,
  findLinkPeer,
  findMark,
  insertBases,
  insertMark,
  restartLinkPeer,
  saveLinkPeer,
  siteRowKeys,
} from './store.ts'

/** The parts of a one-site tenant package that are tables (a stored part, historian samples, is not). */
const SEED_PACKAGE_TABLES = EXPORTED_TABLES.filter((t) => t.scope === 'site' && t.isStoredPart !== true).map((t) => t.name)

/** The cloud's tables (direction down) a seed brings: each seeded row gets its link_base version. */
const SEEDED_DOWN_TABLES = LINKED_TABLES.filter(
  (t): t is LinkedTable & { siteColumn: string } => t.direction === 'down' && t.siteColumn !== null && SEED_PACKAGE_TABLES.includes(t.name),
)

export interface EnrolmentDeps {
  handle: DatabaseHandle
  clock: Clock
  keySecret: Buffer
  /** Site mode: the organisation this server serves (SITEGRID_SITE_ORG), when several are stored. */
  siteOrgSlug?: string | undefined
  orgs: Pick<OrgsService, 'list' | 'findBySlug' | 'provision'>
  sites: Pick<SitesService, 'require'>
  transfer: Pick<TenantTransferService, 'importFile'>
}

export interface EnrolResult {
  serverId: string
  org: { id: string; slug: string; name: string }
  sites: string[]
  epoch: string
  isReenrolment: boolean
  /** The sites imported from the cloud now (empty when the site server already held them, or on a re-enrolment). */
  seeded: string[]
  /** Where the pull of the cloud's changes starts (link_marks, peer 'cloud'). */
  mark: Cursor
}

export interface ReseedResult {
  serverId: string
  /** The new epoch (the cloud refuses the old one from now on). */
  epoch: string
  /** The local outbox position the new epoch's push continues after. */
  after: Cursor
  /** How many changes made here the cloud never acknowledged were kept in the file (and not sent). */
  unacknowledged: number
  unacknowledgedFile: string | null
  seeded: string[]
  /** Where the pull of the cloud's changes starts. */
  mark: Cursor
}

/** What the link credential is sealed to: this organisation and this server id (a sealed value cannot move rows). */
const sealContext = (orgId: string, serverId: string) => `link:${orgId}:${serverId}`

export function createEnrolment(deps: EnrolmentDeps) {
  const { handle, clock, keySecret } = deps
  const db = handle.db

  /** The organisation whose data this server holds; undefined when it holds none. */
  async function localOrg(): Promise<Org | undefined> {
    const all = await deps.orgs.list()
    const named = deps.siteOrgSlug === undefined ? undefined : all.find((o) => o.slug === deps.siteOrgSlug)
    if (named) return named
    if (all.length > 1) throw new SeveralOrganisations()
    return all[0]
  }

  async function exchange(http: LinkHttp, body: Record<string, unknown>): Promise<Enrolment> {
    const res = await call(http, '/api/link/enrol', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', [PROTOCOL_HEADER]: String(LINK_PROTOCOL) },
    })
    if (res.ok) {
      const answer = (await res.json().catch(() => undefined)) as Enrolment | undefined
      if (!answer || typeof answer.serverId !== 'string' || typeof answer.credential !== 'string' || !Array.isArray(answer.sites) || !answer.org?.id)
        throw new LinkCloudUnavailable(`an enrolment answer without its fields (HTTP ${res.status})`)
      return answer
    }
    throw await refusal(res, body)
  }

  async function seedSite(org: Org, site: string, credential: string, http: LinkHttp, actor: Actor): Promise<Cursor> {
    const res = await call(http, `/api/link/seed?site=${encodeURIComponent(site)}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${credential}`, [PROTOCOL_HEADER]: String(LINK_PROTOCOL) },
    })
    if (!res.ok) throw await refusal(res, {})
    const cursor = parseCursor(res.headers.get(CURSOR_HEADER))
    if (!cursor || !res.body) throw new LinkCloudUnavailable(`a seed of ${site} without its ${CURSOR_HEADER} header or body`)
    const body = res.body
    // The package's rows are recorded in the outbox as the cloud's (so the push does not send them back), in the
    // import's own transaction: a change made here meanwhile stays this server's.
    await deps.transfer.importFile(org, actor, () => buffers(body), { force: false, dryRun: false, origin: CLOUD_PEER })
    await db.transaction().execute(async (trx) => {
      // Each row's cloud version: the position the export was taken at (a change after it reaches us by the pull).
      for (const table of SEEDED_DOWN_TABLES) {
        const keys = await siteRowKeys(trx, org.id, table.name, table.siteColumn, table.key, site)
        await insertBases(
          trx,
          org.id,
          table.name,
          keys.map((k) => rowKey(k)),
          cursor.seq,
        )
      }
    })
    return cursor
  }

  async function holdsSite(orgId: OrgId, site: string): Promise<boolean> {
    try {
      await deps.sites.require(orgId, site)
      return true
    } catch (err) {
      if (err instanceof NotFound) return false
      throw err
    }
  }

  /**
   * Seeds the sites this server holds no data of, unless it was seeded before (a mark for the cloud of this epoch exists), and sets
   * the pull's mark to the smallest seed position. A site it already held (brought by a tenant transfer, or an earlier
   * seed that was cut) has no known position: the pull then starts from the beginning (applying is idempotent).
   */
  async function completeSeeding(org: Org, peer: { serverId: string; credential: string; epoch: string; sites: string[] }, http: LinkHttp, actor: Actor) {
    const existing = await findMark(db, org.id, CLOUD_PEER)
    // A mark of another epoch is not this seeding's: a pull of the previous epoch wrote it during a reseed.
    if (existing && existing.epoch === peer.epoch) return { seeded: [] as string[], mark: { tx: existing.tx, seq: existing.seq } }
    const seeded: string[] = []
    let mark: Cursor | undefined
    for (const site of peer.sites) {
      const held = await holdsSite(org.id, site)
      const cursor = held ? START : await seedSite(org, site, peer.credential, http, actor)
      if (!held) seeded.push(site)
      if (!mark || isAfter(mark, cursor)) mark = cursor
    }
    const at = mark ?? START
    await insertMark(db, org.id, { peer: CLOUD_PEER, epoch: peer.epoch, tx: at.tx, seq: at.seq, at: clock.now() })
    // Seeded: a note left for the operator while it was not (a reseed's) is moot now.
    await db.updateTable('link_peer').set({ last_error: null }).where('org_id', '=', org.id).where('epoch', '=', peer.epoch).execute()
    return { seeded, mark: at }
  }

  return {
    /**
     * Enrols this site server with the cloud at `cloudUrl` using a one-time code: sends its organisation id (null when
     * it holds none), creates the organisation locally when absent (same id, slug and name), stores the link
     * credential sealed, and seeds the sites it holds no data of. Throws LinkAlreadyEnrolled (another cloud),
     * EnrolmentCodeRefused, LinkOrgMismatch, LinkVersionMismatch or LinkCloudUnavailable; nothing is stored before the
     * cloud accepted the code.
     */
    async enrol(input: { cloudUrl: string; code: string; http: LinkHttp; actor: Actor }): Promise<EnrolResult> {
      const cloudUrl = cloudOrigin(input.cloudUrl)
      const local = await localOrg()
      const peer = local && (await findLinkPeer(db, local.id))
      if (peer && peer.cloud_url !== cloudUrl) throw new LinkAlreadyEnrolled(peer.cloud_url)
      // A fresh epoch on the first enrolment (the cloud's mark of this server's outbox starts anew with it); a
      // re-enrolment keeps its own. The cloud stores it and refuses a push of any other epoch until a reseed.
      const epoch = peer ? peer.epoch : randomBytes(16).toString('hex')
      const answer = await exchange(input.http, {
        code: input.code,
        orgId: local?.id ?? null,
        ...(peer ? { serverId: peer.server_id } : {}),
        protocol: LINK_PROTOCOL,
        schema: SCHEMA_VERSION,
        epoch,
      })
      if (local && answer.org.id !== local.id) throw new LinkOrgMismatch(local.id, answer.org.id)
      const org = local ?? (await deps.orgs.provision(answer.org.slug, answer.org.name, answer.org.id))
      const isReenrolment = peer !== undefined && peer.server_id === answer.serverId
      const now = clock.now()
      // Stored before seeding: a seed cut off resumes with this credential, without a new code.
      await saveLinkPeer(db, {
        org_id: org.id,
        server_id: answer.serverId,
        cloud_url: cloudUrl,
        sealed_credential: seal(keySecret, answer.credential, sealContext(org.id, answer.serverId)),
        epoch,
        sites: JSON.stringify(answer.sites),
        enrolled_at: now,
        acked_tx: 0,
        acked_seq: 0,
        last_contact_at: now,
        last_error: null,
        peer_versions: null,
      })
      const { seeded, mark } = await completeSeeding(
        org,
        { serverId: answer.serverId, credential: answer.credential, epoch, sites: answer.sites },
        input.http,
        input.actor,
      )
      return { serverId: answer.serverId, org: { id: org.id, slug: org.slug, name: org.name }, sites: answer.sites, epoch, isReenrolment, seeded, mark }
    },

    /** Finishes a seed that was cut off (the credential stored at enrolment); nothing to do when it completed. Throws NotEnrolled. */
    async resumeSeeding(input: { http: LinkHttp; actor: Actor }) {
      const org = await localOrg()
      const peer = org && (await findLinkPeer(db, org.id))
      const credential = peer && unsealLinkCredential(keySecret, peer)
      if (!org || !peer || credential === undefined) throw new NotEnrolled()
      return completeSeeding(
        org,
        { serverId: peer.server_id, credential, epoch: peer.epoch, sites: JSON.parse(peer.sites) as string[] },
        input.http,
        input.actor,
      )
    },

    /**
     * Reseeds this site server from the cloud after it was restored from an old backup (its push refused as
     * diverged). Run it with the server stopped (the CLI refuses while a `serve` holds the database); a running agent
     * is safe too: it resumes by itself once it sees the new epoch and the seed's mark.
     *
     * 1. A new random epoch, announced to the cloud with the newest readable position of the local outbox (POST
     *    /api/link/reseed): the cloud then refuses the old epoch and continues the new one from that (tx, seq).
     *    Refused or unreachable: nothing here changed (LinkCredentialRefused, LinkCloudUnavailable).
     * 2. One local transaction, as origin 'cloud' (nothing of it goes up): the changes made here that the cloud never
     *    acknowledged are written to `unacknowledgedFile` (JSON lines, one change each: they cannot be applied on top
     *    of the cloud's state, so they are kept for the operator to read, not sent) and leave the outbox; the linked
     *    sites' rows go (with everything they own, the historian's included), their forwarded commands, the row versions
     *    and the pull's mark; the enrolment takes the new epoch and continues its push from the position sent in 1.
     * 3. The seed, as at enrolment: a tenant package of each site, which sets the pull's mark. Cut off: ReseedIncomplete
     *    (the sites are missing until `sitegrid link seed` finishes it; GET /api/link says so meanwhile).
     */
    async reseed(input: { http: LinkHttp; actor: Actor; unacknowledgedFile: string }): Promise<ReseedResult> {
      const org = await localOrg()
      const peer = org && (await findLinkPeer(db, org.id))
      const credential = peer && unsealLinkCredential(keySecret, peer)
      if (!org || !peer || credential === undefined) throw new NotEnrolled()
      const sites = JSON.parse(peer.sites) as string[]
      const epoch = randomBytes(16).toString('hex')
      const after = await currentCursor(db, handle.dialect, org.id)

      const res = await call(input.http, '/api/link/reseed', {
        method: 'POST',
        body: JSON.stringify({ epoch, after }),
        headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', [PROTOCOL_HEADER]: String(LINK_PROTOCOL) },
      })
      if (res.status === 401) throw new LinkCredentialRefused()
      if (!res.ok) throw await refusal(res, {})
      const answer = (await res.json().catch(() => undefined)) as ReseedAnswer | undefined
      if (answer?.mark?.epoch !== epoch || answer.mark.tx !== after.tx || answer.mark.seq !== after.seq)
        throw new LinkCloudUnavailable(`a reseed answer without the new mark (HTTP ${res.status})`)

      const kept = await db.transaction().execute(async (trx) => {
        const unacknowledged: Change[] = []
        for (let from = ackedCursor(peer); ; ) {
          const page = await readChanges(trx, handle.dialect, org.id, from, { tables: PUSHED_TABLES, sites: [...sites, ''], origin: { only: '' }, limit: 1000 })
          unacknowledged.push(...page)
          if (page.length < 1000) break
          from = { tx: page.at(-1)!.tx, seq: page.at(-1)!.seq }
        }
        if (unacknowledged.length > 0) {
          // 'wx': never over another file; a failure here rolls the whole local part back.
          await writeFile(input.unacknowledgedFile, unacknowledged.map((c) => `${JSON.stringify(c)}\n`).join(''), { flag: 'wx', mode: 0o600 })
          await deleteOutboxRows(
            trx,
            org.id,
            unacknowledged.map((c) => c.seq),
          )
        }
        await withApplyOrigin(trx, handle.dialect, CLOUD_PEER, () => dropLinkedSites(trx, org.id, sites))
        await restartLinkPeer(trx, org.id, {
          epoch,
          acked: after,
          note: 'Reseeding from the cloud: the seed has not completed yet. If this stays, run `sitegrid link seed`.',
        })
        // Made here (origin ''): it goes up with the new epoch, so the cloud's audit trail shows it from both sides.
        await recordAudit(trx, clock, org.id, input.actor, {
          action: 'link.reseeded',
          target: peer.server_id,
          detail: { sites, unacknowledged: unacknowledged.length, after },
        })
        return unacknowledged.length
      })

      let seeding: { seeded: string[]; mark: Cursor }
      try {
        seeding = await completeSeeding(org, { serverId: peer.server_id, credential, epoch, sites }, input.http, input.actor)
      } catch (err) {
        throw new ReseedIncomplete(err instanceof Error ? err.message : String(err), { cause: err })
      }
      return { serverId: peer.server_id, epoch, after, unacknowledged: kept, unacknowledgedFile: kept > 0 ? input.unacknowledgedFile : null, ...seeding }
    },

    /** This server's enrolment (the cloud, its server id and sites), or undefined when it is not enrolled. */
    async peer(): Promise<{ orgId: string; serverId: string; cloudUrl: string; sites: string[] } | undefined> {
      const org = await localOrg()
      const row = org && (await findLinkPeer(db, org.id))
      return row && { orgId: row.org_id, serverId: row.server_id, cloudUrl: row.cloud_url, sites: JSON.parse(row.sites) as string[] }
    },

    /** The stored link credential, unsealed (for the link's own client); undefined when not enrolled or revoked here. */
    async credential(orgId: OrgId): Promise<string | undefined> {
      const peer = await findLinkPeer(db, orgId)
      return peer && unsealLinkCredential(keySecret, peer)
    },
  }
}

export type EnrolmentService = ReturnType<typeof createEnrolment>

/** An enrolment's link credential, unsealed; undefined when revoked here or sealed under another verifier secret. */
export function unsealLinkCredential(keySecret: Buffer, peer: Pick<LinkPeerTable, 'org_id' | 'server_id' | 'sealed_credential'>): string | undefined {
  return peer.sealed_credential === null ? undefined : unseal(keySecret, peer.sealed_credential, sealContext(peer.org_id, peer.server_id))
}

/** The cloud's origin (`https://acme.cloud.example`), the one form stored and compared. */
function cloudOrigin(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw invalidField('/cloud', 'must be the URL of the cloud cell, e.g. https://acme.cloud.example')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidField('/cloud', 'must be an http(s) URL')
  return url.origin
}

async function call(http: LinkHttp, path: string, init: Parameters<LinkHttp['request']>[1]): Promise<Response> {
  try {
    return await http.request(path, init)
  } catch (err) {
    throw new LinkCloudUnavailable('no answer (the network, the proxy or the URL)', { cause: err })
  }
}

/** A refusal from the cloud, as the domain error it stands for; the enrolment body is used to name both organisations. */
async function refusal(res: Response, sent: Record<string, unknown>): Promise<Error> {
  const problem = (await res.json().catch(() => undefined)) as { code?: unknown; detail?: unknown; siteOrgId?: unknown; cloudOrgId?: unknown } | undefined
  const code = typeof problem?.code === 'string' ? problem.code : undefined
  if (res.status === 401) return new EnrolmentCodeRefused()
  if (code === 'LinkOrgMismatch') return new LinkOrgMismatch(String(problem?.siteOrgId ?? sent.orgId), String(problem?.cloudOrgId ?? 'unknown'))
  if (code === 'LinkVersionMismatch') return new LinkVersionMismatch(res.headers.get(PROTOCOL_HEADER) ?? 'unknown', LINK_PROTOCOL)
  if (code === 'Conflict' && typeof problem?.detail === 'string') return new CloudRefusedEnrolment(problem.detail.slice(0, 500))
  return new LinkCloudUnavailable(`HTTP ${res.status}${code ? ` ${code}` : ''}`)
}

function parseCursor(text: string | null): Cursor | undefined {
  const match = text === null ? null : /^(\d{1,20})\.(\d{1,20})$/.exec(text)
  return match ? { tx: Number(match[1]), seq: Number(match[2]) } : undefined
}

async function* buffers(body: ReadableStream<Uint8Array>): AsyncGenerator<Buffer> {
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
}
