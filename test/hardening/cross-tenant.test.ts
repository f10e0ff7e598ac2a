// Issue 14, cross-tenant access (OWASP API1): every route that takes an id, generated from the OpenAPI document.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { harness, sleep, testDialects, type Credential, type Harness } from '../harness.ts'
import {
  changedRows,
  fillPath,
  label,
  missingLike,
  NO_RATE_LIMIT,
  openApiDocument,
  operations,
  parameterKind,
  pathParams,
  policyOf,
  queryFor,
  queryParams,
  requestFor,
  seedTenant,
  snapshotDiff,
  snapshotOrg,
  snapshotRows,
  stableBody,
  stableHeaders,
  type Operation,
  type TenantIds,
} from './support.ts'
import { LINK_HEADERS } from '../support/fleet-link.ts'

interface Variant {
  name: string
  op: Operation
  url: string
  reference: string
  pathIds: boolean
}

/**
 * The requests of the attack, all generated: (1) every path id the victim's; (2) the attacker's own first id
 * (site or organisation) with the victim's ids below it; (3) each id-valued query parameter the victim's, on
 * the attacker's own path. Each has a reference: the same request with the victim's ids swapped for ids of
 * the same shape that name nothing.
 */
function variants(ops: Operation[], attacker: TenantIds, victim: TenantIds, now: number): Variant[] {
  const out: Variant[] = []
  const missing = Object.fromEntries(Object.entries(victim).map(([k, v]) => [k, missingLike(v)])) as unknown as TenantIds
  const idsOf = (op: Operation, from: (name: string, index: number) => TenantIds) =>
    Object.fromEntries(pathParams(op).map((p, i) => [p.name, from(p.name, i)[parameterKind(op.path, p.name)!]]))
  for (const op of ops) {
    const params = pathParams(op)
    if (params.some((p) => parameterKind(op.path, p.name) === undefined))
      throw new Error(`${label(op)}: no resource kind for a path parameter; add it to PARAMETER_KINDS (or PATH_PARAMETER_KINDS)`)
    const query = queryFor(op, now)
    if (params.length > 0) {
      out.push({
        name: 'victim ids',
        op,
        pathIds: true,
        url:
          fillPath(
            op.path,
            idsOf(op, () => victim),
          ) + query,
        reference:
          fillPath(
            op.path,
            idsOf(op, () => missing),
          ) + query,
      })
      if (params.length > 1) {
        out.push({
          name: 'own parent, victim ids below it',
          op,
          pathIds: true,
          url:
            fillPath(
              op.path,
              idsOf(op, (_n, i) => (i === 0 ? attacker : victim)),
            ) + query,
          reference:
            fillPath(
              op.path,
              idsOf(op, (_n, i) => (i === 0 ? attacker : missing)),
            ) + query,
        })
      }
    }
    for (const q of queryParams(op).filter((p) => parameterKind(op.path, p.name) !== undefined)) {
      const own = fillPath(
        op.path,
        idsOf(op, () => attacker),
      )
      const kind = parameterKind(op.path, q.name)!
      out.push({
        name: `victim ${q.name} in the query`,
        op,
        pathIds: false,
        url: own + queryFor(op, now, { [q.name]: victim[kind] }),
        reference: own + queryFor(op, now, { [q.name]: missing[kind] }),
      })
    }
  }
  return out
}

/**
 * Null when two answers are the same but for date and request id. `swaps` maps each victim id of the request to
 * its stand-in in the reference: an answer that echoes the caller's own input (`"instanceId": "…"`) is compared
 * with the echo swapped, which reveals nothing the caller did not send.
 */
function same(a: LightMyRequestResponse, b: LightMyRequestResponse, swaps: Array<[string, string]> = []): string | null {
  if (a.statusCode !== b.statusCode) return `status ${a.statusCode} vs ${b.statusCode}`
  const echoed = swaps.reduce((body, [from, to]) => body.replaceAll(from, to), a.body)
  if (JSON.stringify(stableBody(echoed)) !== JSON.stringify(stableBody(b.body))) return `body ${a.body.slice(0, 200)} vs ${b.body.slice(0, 200)}`
  if (JSON.stringify(stableHeaders(a.headers)) !== JSON.stringify(stableHeaders(b.headers)))
    return `headers ${JSON.stringify(stableHeaders(a.headers))} vs ${JSON.stringify(stableHeaders(b.headers))}`
  return null
}

async function setUp(t: Parameters<typeof harness>[0], dialect: 'sqlite' | 'postgres', mode: 'site' | 'cloud') {
  const h: Harness = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: mode })
  const attacker = await seedTenant(h, 'ATK')
  const victim = await seedTenant(h, 'VIC')
  const attackerAdmin: Credential = { org: attacker.org, apiKey: (await h.mintKey(attacker.org, 'admin')).plaintext }
  const ops = operations(await openApiDocument(h))
  await sleep(200) // the seeding keys' lastUsedAt flush (50 ms) lands before the snapshot
  return { h, attacker, victim, attackerAdmin, ops }
}

/**
 * Path ids a caller names in its own namespace: a site server's historian batch ids are its own (`bat_…` of its
 * database), and the chunks of a batch are those this server sent under that name. The victim's batch name from
 * the attacker's site server answers the attacker's own (empty) record of it, 200 like any unknown name: that answer
 * must still equal the missing-id reference byte for byte (the victim's chunk 0 is never shown).
 */
function inCallersNamespace(op: Operation): boolean {
  return pathParams(op).every((p) => ['linkBatch', 'linkChunk'].includes(parameterKind(op.path, p.name) ?? ''))
}

/** The request with the link's headers (protocol, schema) added for a route of policy `link`. */
function withLinkHeaders(h: Harness, op: Operation, request: ReturnType<typeof requestFor>): ReturnType<typeof requestFor> {
  return policyOf(h, op) === 'link' ? { ...request, headers: { ...request.headers, ...LINK_HEADERS } } : request
}

for (const dialect of testDialects()) {
  // The cloud has the fleet link's routes (site servers, the link's own, whose caller is a site server's credential).
  for (const mode of ['site', 'cloud'] as const)
    describe(`${dialect}, ${mode} mode: cross-tenant access (OWASP API1), every id-taking route from the OpenAPI document`, () => {
      it("at the attacker's own host, the victim's ids answer 0 × 2xx, byte-identical to the attacker's own missing-id answer (404; for a list filter, the same empty page), and change 0 victim rows", async (t) => {
        const { h, attacker, victim, attackerAdmin, ops } = await setUp(t, dialect, mode)
        const before = await snapshotOrg(h, victim.org.id)
        assert.ok(snapshotRows(before) >= 15, "the snapshot sees the victim's seeded rows")
        const list = variants(ops, attacker.ids, victim.ids, h.clock.now())
        // Owner-only routes (tenant transfer) refuse an admin key before any lookup: they get the attacker's owner key;
        // the link's own routes (cloud) the attacker's site server's credential.
        const linkCredential: Credential | undefined = attacker.link && { org: attacker.org, bearer: attacker.link.credential }
        const credentialFor = (op: Operation) =>
          policyOf(h, op) === 'owner' ? attacker.owner : policyOf(h, op) === 'link' && linkCredential ? linkCredential : attackerAdmin
        let successes = 0
        const succeeded: string[] = []
        const differing: string[] = []
        const statuses: Record<number, number> = {}
        const swaps = Object.values(victim.ids).map((id) => [id, missingLike(id)] as [string, string])
        for (const v of list) {
          const res = await h.inject(credentialFor(v.op), withLinkHeaders(h, v.op, requestFor(v.op, v.url, h.clock.now())))
          const ref = await h.inject(credentialFor(v.op), withLinkHeaders(h, v.op, requestFor(v.op, v.reference, h.clock.now())))
          if (v.pathIds && res.statusCode < 300 && !inCallersNamespace(v.op)) {
            successes++
            succeeded.push(`${label(v.op)} ${v.url}: ${res.statusCode} ${res.body.slice(0, 200)}`)
          }
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
          const why = same(res, ref, swaps)
          if (why) differing.push(`${label(v.op)} (${v.name}) ${v.url}: ${why}`)
        }
        await sleep(200)
        const diff = snapshotDiff(before, await snapshotOrg(h, victim.org.id))
        const rows = changedRows(before, await snapshotOrg(h, victim.org.id))
        const routes = new Set(list.map((v) => label(v.op))).size
        console.log(
          `# hardening cross-tenant (${dialect}, ${mode}, attacker's host): ${routes} id-taking operations, ${list.length * 2} requests, ${successes} x 2xx, ${differing.length} differing answers, ${rows} victim rows changed; statuses ${JSON.stringify(statuses)}`,
        )
        assert.ok(routes >= 40, `the document lists ${routes} id-taking operations`)
        assert.deepEqual(succeeded, [])
        assert.equal(successes, 0)
        assert.deepEqual(differing, [])
        assert.deepEqual(diff, [])
      })

      it("at the victim's host, the attacker's admin key gets the documented uniform 401 on every id-taking route, byte-identical to no credential there, and changes 0 victim rows", async (t) => {
        const { h, victim, attackerAdmin, ops } = await setUp(t, dialect, mode)
        const before = await snapshotOrg(h, victim.org.id)
        assert.ok(snapshotRows(before) >= 15, "the snapshot sees the victim's seeded rows")
        const host = `${victim.org.slug}.localhost`
        let successes = 0
        let requests = 0
        const differing: string[] = []
        for (const op of ops.filter((o) => pathParams(o).length > 0 || queryParams(o).some((p) => parameterKind(o.path, p.name) !== undefined))) {
          const ids = Object.fromEntries(pathParams(op).map((p) => [p.name, victim.ids[parameterKind(op.path, p.name)!]]))
          const url =
            fillPath(op.path, ids) +
            queryFor(
              op,
              h.clock.now(),
              Object.fromEntries(
                queryParams(op)
                  .filter((p) => parameterKind(op.path, p.name))
                  .map((p) => [p.name, victim.ids[parameterKind(op.path, p.name)!]]),
              ),
            )
          const res = await h.inject(attackerAdmin, { ...withLinkHeaders(h, op, requestFor(op, url, h.clock.now())), host })
          const ref = await h.inject(undefined, { ...withLinkHeaders(h, op, requestFor(op, url, h.clock.now())), host })
          requests += 2
          if (res.statusCode < 300) successes++
          const why = res.statusCode !== 401 ? `status ${res.statusCode}` : same(res, ref)
          if (why) differing.push(`${label(op)} ${url}: ${why}`)
        }
        await sleep(200)
        const rows = changedRows(before, await snapshotOrg(h, victim.org.id))
        console.log(
          `# hardening cross-tenant (${dialect}, ${mode}, victim's host): ${requests} requests, ${successes} x 2xx, ${differing.length} answers other than the uniform 401, ${rows} victim rows changed`,
        )
        assert.equal(successes, 0)
        assert.deepEqual(differing, [])
        assert.equal(rows, 0)
      })

      if (mode === 'cloud')
        it("at the victim's host, the attacker's site server credential gets the uniform 401 on every link route (push, pull, heartbeat, seed, chunks), byte-identical to no credential there, and changes 0 victim rows", async (t) => {
          const { h, attacker, victim, ops } = await setUp(t, dialect, mode)
          const before = await snapshotOrg(h, victim.org.id)
          const host = `${victim.org.slug}.localhost`
          const linkOps = ops.filter((o) => policyOf(h, o) === 'link')
          const differing: string[] = []
          for (const op of linkOps) {
            const url =
              fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, victim.ids[parameterKind(op.path, p.name)!]]))) +
              queryFor(op, h.clock.now(), {}, victim.ids)
            const request = withLinkHeaders(h, op, requestFor(op, url, h.clock.now()))
            const res = await h.inject({ org: attacker.org, bearer: attacker.link!.credential }, { ...request, host })
            const ref = await h.inject(undefined, { ...request, host })
            const why = res.statusCode !== 401 ? `status ${res.statusCode} ${res.body.slice(0, 200)}` : same(res, ref)
            if (why) differing.push(`${label(op)} ${url}: ${why}`)
          }
          await sleep(200)
          const rows = changedRows(before, await snapshotOrg(h, victim.org.id))
          console.log(
            `# hardening cross-tenant (${dialect}, cloud, a link credential at another organisation's host): ${linkOps.length} link routes, ${differing.length} answers other than the uniform 401, ${rows} victim rows changed`,
          )
          assert.ok(linkOps.length >= 6, `${linkOps.length} link routes`)
          assert.deepEqual(differing, [])
          assert.equal(rows, 0)
        })
    })
}
