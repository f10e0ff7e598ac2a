// Set-up of the historian chunk tests: a site's SQLite database holding a finished batch, the cloud's side (the real
// service over the application's pool, and its routes in an in-process app on loopback), and an independent read of
// a batch's samples to compare both sides with.
import type { TestContext } from 'node:test'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify from 'fastify'
import { sql } from 'kysely'
import { databaseUrlFor, type Harness } from '../../../../test/harness.ts'
import { connectDatabase, type DatabaseHandle } from '../../../db/connect.ts'
import { migrateToLatest } from '../../../db/migrate.ts'
import type { Db } from '../../../db/schema.ts'
import { enterRequestOrgScope, runInRequestScope, withOrgScope } from '../../../db/tenant-scope.ts'
import { frameworkErrorProblem, installProblemHandlers, ProblemSchema } from '../../../http/problem.ts'
import { installInputGuard } from '../../../http/input-guard.ts'
import { buildSerializer } from '../../../http/serializer.ts'
import { installValidators } from '../../../http/validation.ts'
import type { Org, Principal } from '../../../identity.ts'
import type { OrgId } from '../../../ids.ts'
import type { LinkSample } from '../../historian/link.ts'
import { ensureSeries, mergeStaged, seriesKey } from '../../historian/store/queries.ts'
import { createControllersService } from '../../controllers/service.ts'
import { createInstancesService } from '../../instances/service.ts'
import { createSitesService } from '../../sites/service.ts'
import { historianChunksRoutes } from './routes.ts'
import { createHistorianChunksService, type HistorianChunksService, type LinkPeer } from './service.ts'
import { createLinkHttp, type LinkHttp } from '../agent/http.ts'

export const T0 = Date.UTC(2026, 0, 5, 6, 0, 0)
export const SITE = 'pit-1'

/** A migrated SQLite database standing for the site server, its organisation row the cloud's (same id). */
export async function siteDatabase(t: TestContext, org: Org, url?: string): Promise<DatabaseHandle> {
  const handle = await connectDatabase(url ?? (await databaseUrlFor(t, 'sqlite')), { poolSize: 1 })
  t.after(() => handle.close())
  await migrateToLatest(handle.db)
  await handle.db.insertInto('orgs').values({ id: org.id, slug: org.slug, name: org.slug, created_at: T0 }).execute()
  return handle
}

export interface SeriesSpec {
  instanceId: string
  tagKey: string
  n: number
}

/**
 * A finished batch of these series, written directly: sample i of a series at T0 + i·1000 ms (values with nulls,
 * text states, three qualities), and between them samples of another batch in the same series, so that only the
 * batch_id tells them apart. `coverage: false` records none (tags '[]'), as a batch made before coverage existed.
 */
export async function seedBatch(
  db: Db,
  orgId: string,
  o: { id: string; siteCode: string; series: SeriesSpec[]; coverage?: boolean; status?: string },
): Promise<number> {
  const ids = await ensureSeries(db, orgId as OrgId, o.siteCode, o.series)
  const coverage = []
  let total = 0
  for (const [k, s] of o.series.entries()) {
    const seriesId = ids.get(seriesKey(s.instanceId, s.tagKey))!
    const rows = []
    for (let i = 0; i < s.n; i++) {
      const ts = T0 + i * 1000
      rows.push({
        org_id: orgId,
        series_id: seriesId,
        ts,
        value: i % 11 === 5 ? null : (i * 0.37 + k) / 3,
        text: i % 11 === 5 ? `state «${i % 4}»` : null,
        quality: [192, 64, 0][i % 3]!,
        batch_id: o.id,
      })
      if (i % 3 === 0) rows.push({ org_id: orgId, series_id: seriesId, ts: ts + 500, value: -1, text: null, quality: 192, batch_id: `${o.id}-other` })
    }
    for (let i = 0; i < rows.length; i += 500)
      await db
        .insertInto('historian_points')
        .values(rows.slice(i, i + 500))
        .execute()
    coverage.push({
      historianTag: `${s.instanceId}.${s.tagKey}`,
      instanceId: s.instanceId,
      tagKey: s.tagKey,
      unit: null,
      scale: 1,
      samples: s.n,
      firstTs: T0,
      lastTs: T0 + (s.n - 1) * 1000,
    })
    total += s.n
  }
  const lastTs = T0 + 1000 * Math.max(...o.series.map((s) => s.n))
  await insertBatchRow(db, orgId, { id: o.id, siteCode: o.siteCode, samples: total, lastTs, coverage: o.coverage === false ? [] : coverage, status: o.status })
  return total
}

/** A batch's row as the historian writes it once the batch ended (its samples are the caller's). */
async function insertBatchRow(
  db: Db,
  orgId: string,
  o: { id: string; siteCode: string; samples: number; lastTs: number; coverage: unknown[]; status?: string | undefined; isForced?: boolean },
): Promise<void> {
  await db
    .insertInto('historian_batches')
    .values({
      org_id: orgId,
      site_code: o.siteCode,
      id: o.id,
      format: 'long',
      status: o.status ?? 'complete',
      rows_read: o.samples,
      samples_stored: o.samples,
      rejected_count: 0,
      collision_count: 0,
      replaced_count: 0,
      bytes_read: 0,
      bytes_total: null,
      first_ts: T0,
      last_ts: o.lastTs,
      tags: JSON.stringify(o.coverage),
      report: '{}',
      options: '{}',
      trend_sha256: o.id,
      mapping_sha256: o.id,
      trend_name: null,
      is_forced: o.isForced === true ? 1 : 0,
      error: null,
      created_by: 'test',
      created_at: T0,
      updated_at: T0,
      completed_at: T0,
    })
    .execute()
}

/**
 * A forced import (force=true) completing on the site: batch `id` stages `n` samples of one series at the times of
 * samples 0…n−1 of seedBatch (T0 + i·1000 ms), from `from`, and merges them with the historian's own statement
 * (mergeStaged), which takes those samples over from whatever batch held them. The sample set of that batch shrinks:
 * its later samples move to earlier positions of its order.
 */
export async function seedForcedBatch(
  db: Db,
  orgId: string,
  o: { id: string; siteCode: string; instanceId: string; tagKey: string; from: number; n: number },
): Promise<void> {
  const ids = await ensureSeries(db, orgId as OrgId, o.siteCode, [o])
  const seriesId = ids.get(seriesKey(o.instanceId, o.tagKey))!
  const rows = Array.from({ length: o.n }, (_, i) => ({
    org_id: orgId,
    batch_id: o.id,
    series_id: seriesId,
    ts: T0 + (o.from + i) * 1000,
    value: 777 + i,
    text: null,
    quality: 192,
  }))
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('historian_staging')
      .values(rows.slice(i, i + 500))
      .execute()
  await mergeStaged(db, orgId as OrgId, o.id)
  const firstTs = T0 + o.from * 1000
  const lastTs = T0 + (o.from + o.n - 1) * 1000
  const coverage = [
    { historianTag: `${o.instanceId}.${o.tagKey}`, instanceId: o.instanceId, tagKey: o.tagKey, unit: null, scale: 1, samples: o.n, firstTs, lastTs },
  ]
  await insertBatchRow(db, orgId, { id: o.id, siteCode: o.siteCode, samples: o.n, lastTs, coverage, isForced: true })
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** Every stored sample of the batch in one site, read by a plain join and put in (instance, tag, ts) byte order here. */
export async function samplesOfBatch(db: Db, orgId: string, siteCode: string, batchId: string): Promise<LinkSample[]> {
  const { rows } = await sql<{ instance_id: string; tag_key: string; ts: unknown; value: unknown; text: string | null; quality: unknown }>`
    select s.instance_id, s.tag_key, p.ts, p.value, p.text, p.quality from historian_points p
    join historian_series s on s.org_id = p.org_id and s.id = p.series_id
    where p.org_id = ${orgId} and s.site_code = ${siteCode} and p.batch_id = ${batchId}`.execute(db)
  return rows
    .map((r): LinkSample => [r.instance_id, r.tag_key, Number(r.ts), r.value === null ? null : Number(r.value), r.text, Number(r.quality)])
    .sort((a, b) => byteOrder(a[0], b[0]) || byteOrder(a[1], b[1]) || a[2] - b[2])
}

export async function countRows(db: Db, orgId: string): Promise<{ points: number; chunks: number; series: number }> {
  const n = async (table: 'historian_points' | 'link_chunks' | 'historian_series') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', orgId)
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { points: await n('historian_points'), chunks: await n('link_chunks'), series: await n('historian_series') }
}

/** The cloud's chunk service as app.ts would build it, over the application's pool (row-level security on PostgreSQL). */
export function cloudService(h: Harness): HistorianChunksService {
  const handle = h.appHandle
  const sites = createSitesService({ handle, clock: h.clock, dependents: [] })
  const controllers = createControllersService({
    handle,
    clock: h.clock,
    sites,
    load: (db, orgId, site, ids) => instances.controllerLoad(db, orgId, site, ids),
  })
  const instances = createInstancesService({ handle, clock: h.clock, sites, controllers })
  return createHistorianChunksService({ handle, clock: h.clock, instances })
}

/** Runs a service call in the organisation's scope, as a request does. */
export const asOrg = <T>(org: Org, fn: () => Promise<T>): Promise<T> => withOrgScope(org.id, fn)

/**
 * The chunk routes alone in an in-process app on loopback, with what the real app puts before them (validation, the
 * input guard, problems, the serializer). A hook stands in for the link validator: every request is the `link`
 * principal of `peer` in `org`, in that organisation's scope (historian-chunks-link.test.ts goes through buildApp with
 * an enrolled server's real credential instead).
 */
export async function startCloud(t: TestContext, service: HistorianChunksService, org: Org, peer: LinkPeer): Promise<{ url: string; http: LinkHttp }> {
  const app = Fastify({
    frameworkErrors: frameworkErrorProblem,
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.addSchema(ProblemSchema)
  installValidators(app)
  installInputGuard(app)
  app.decorateRequest('principal', null as unknown as Principal)
  app.decorateRequest('org', null as unknown as Org)
  app.addHook('onRequest', (_request, _reply, done) => {
    runInRequestScope(done)
  })
  app.addHook('onRequest', async (request) => {
    enterRequestOrgScope(org.id)
    request.org = org
    request.principal = {
      orgId: org.id,
      kind: 'link',
      role: 'member',
      subject: peer.serverId,
      isPlatformAdmin: false,
      sites: peer.sites,
    } as unknown as Principal
  })
  installProblemHandlers(app)
  await app.register(historianChunksRoutes, { prefix: '/api/link/historian', chunks: service })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.after(() => app.close())
  return { url, http: linkClient(t, url) }
}

/** The site's real link client (fleet/agent/http.ts) towards the app at `url`, closed after the test. */
export function linkClient(t: TestContext, url: string): LinkHttp {
  const client = createLinkHttp({ cloudUrl: url, credential: 'slk_srv_pit_testcredential', env: {}, timeoutMs: 60_000 })
  t.after(() => client.close())
  return client
}
