import { randomBytes } from 'node:crypto'
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
import { rowKey, START, type Cursor } from '../outbox/store.ts'
import type { LinkHttp } from '../agent/http.ts'
import { LinkOrgMismatch, LinkVersionMismatch } from '../site-servers/errors.ts'
import { CURSOR_HEADER, LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_VERSION } from '../site-servers/protocol.ts'
import type { Enrolment } from '../site-servers/schemas.ts'
import { CloudRefusedEnrolment, EnrolmentCodeRefused, LinkAlreadyEnrolled, LinkCloudUnavailable, NotEnrolled, SeveralOrganisations } from './errors.ts'
import { CLOUD_PEER, findLinkPeer, findMark, insertBases, insertMark, markSeedChanges, newestOutboxSeq, saveLinkPeer, siteRowKeys } from './store.ts'

/** The parts of a one-site tenant package that are tables: the outbox rows a seed import records for them came from the cloud. */
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
    const before = await newestOutboxSeq(db, org.id)
    const body = res.body
    await deps.transfer.importFile(org, actor, () => buffers(body), { force: false, dryRun: false })
    await db.transaction().execute(async (trx) => {
      await markSeedChanges(trx, org.id, site, SEED_PACKAGE_TABLES, before, await newestOutboxSeq(trx, org.id))
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
   * Seeds the sites this server holds no data of, unless it was seeded before (a mark for the cloud exists), and sets
   * the pull's mark to the smallest seed position. A site it already held (brought by a tenant transfer, or an earlier
   * seed that was cut) has no known position: the pull then starts from the beginning (applying is idempotent).
   */
  async function completeSeeding(org: Org, peer: { serverId: string; credential: string; epoch: string; sites: string[] }, http: LinkHttp, actor: Actor) {
    const existing = await findMark(db, org.id, CLOUD_PEER)
    if (existing) return { seeded: [] as string[], mark: { tx: existing.tx, seq: existing.seq } }
    const seeded: string[] = []
    let mark: Cursor | undefined
    for (const site of peer.sites) {
      const held = await holdsSite(org.id, site)
      const cursor = held ? START : await seedSite(org, site, peer.credential, http, actor)
      if (!held) seeded.push(site)
      if (!mark || cursor.tx < mark.tx || (cursor.tx === mark.tx && cursor.seq < mark.seq)) mark = cursor
    }
    const at = mark ?? START
    await insertMark(db, org.id, { peer: CLOUD_PEER, epoch: peer.epoch, tx: at.tx, seq: at.seq, at: clock.now() })
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
      const answer = await exchange(input.http, {
        code: input.code,
        orgId: local?.id ?? null,
        ...(peer ? { serverId: peer.server_id } : {}),
        protocol: LINK_PROTOCOL,
        schema: SCHEMA_VERSION,
      })
      if (local && answer.org.id !== local.id) throw new LinkOrgMismatch(local.id, answer.org.id)
      const org = local ?? (await deps.orgs.provision(answer.org.slug, answer.org.name, answer.org.id))
      const isReenrolment = peer !== undefined && peer.server_id === answer.serverId
      // A fresh epoch on the first enrolment: the cloud's mark of this server's outbox starts anew with it.
      const epoch = isReenrolment ? peer.epoch : randomBytes(16).toString('hex')
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
