// Session 24 (part HQ): a hostile tenant with a valid owner key of organisation A names, in bodies, queries and paths,
// the records of organisation B and those of another site of its own, and edits the cursors it was given. Every such
// request is refused (the uniform 404, or a 422/400 naming the field), answers B's value exactly as it answers a value
// of the same shape that names nothing, and changes no row of A or B.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { multipart } from '../src/modules/historian/test-setup.ts'
import { harness, sleep, testDialects, type Credential, type Harness } from './harness.ts'
import {
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
  type Tenant,
  type TenantIds,
} from './hardening/support.ts'
import { LINK_HEADERS } from './support/fleet-link.ts'

/** The records one probe may name: another organisation's, or those of another site of the caller's own. */
interface Refs {
  site: string
  controller: string
  instance: string
  tag: string
  node: string
  alarm: string
  batch: string
}

/** A second site of A with one of each record a body can name. */
async function seedSecondSite(h: Harness, a: Tenant): Promise<Refs> {
  const call = async (method: string, url: string, payload: unknown, status: number) => {
    const res = await h.inject(a.owner, { method: method as 'POST', url, payload: payload as object })
    if (res.statusCode !== status) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json() as Record<string, unknown>
  }
  const site = 'ATK-S2'
  await call('POST', '/api/sites', { code: site, name: 'Second plant' }, 201)
  const controller = String(
    (
      await call(
        'POST',
        `/api/sites/${site}/controllers`,
        { name: 'S2 PLC', platform: 1, assetNumber: 'S2-A1', connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.2.15' } },
        201,
      )
    ).id,
  )
  const instance = 'ATK-S2-CV-1'
  const tag = 'ATK-S2-TAG'
  await call(
    'POST',
    `/api/sites/${site}/instances`,
    { id: instance, name: 'S2 conveyor', typeId: 'conveyor', assetNumber: 'S2-I1', controllerId: controller, tagMappings: { [tag]: 'N7:1' } },
    201,
  )
  const node = 'ATK-S2-MSB'
  await call('POST', `/api/sites/${site}/electrical/nodes`, { id: node, name: 'S2 switchboard', nodeType: 3 }, 201)
  const events = await call(
    'POST',
    `/api/sites/${site}/alarms/events`,
    {
      events: [
        {
          eventId: 'S2-e1',
          instanceId: instance,
          condition: 'HI_TEMP',
          priority: 'high',
          state: 'active',
          occurredAt: new Date(h.clock.now() - 60_000).toISOString(),
        },
      ],
    },
    200,
  )
  const alarm = String((events.results as Array<{ alarmId: string }>)[0]!.alarmId)
  return { site, controller, instance, tag, node, alarm, batch: a.ids.batch }
}

/** A chunk of one sample of the records named, with its digest (the link's historian chunk body). */
function chunkOf(r: Refs, now: number) {
  const samples = [[r.instance, r.tag, now - 1000, 1, null, 192]]
  return { site: r.site, samples, sha256: createHash('sha256').update(JSON.stringify(samples)).digest('hex') }
}

interface Probe {
  name: string
  /** The request, built from the records it names. */
  request: (r: Refs) => { method: string; url: string; payload?: unknown; headers?: Record<string, string>; credential?: Credential }
  /** The statuses a refusal may take. */
  refused: number[]
  /** A 200 that refuses item by item (a batch of events, of acknowledgements): each item's own status. */
  itemsRefused?: (body: Record<string, unknown>) => boolean
  /** Tables of A that such a refusal still writes, by design (a heartbeat, the answer kept for a resend). */
  records?: string[]
  /** Whether A's own other site is a refusal too (a route that takes any site of the caller's organisation is not). */
  siblingRefused?: boolean
}

const ISO = (ms: number) => new Date(ms).toISOString()

function probes(a: Tenant, now: number): Probe[] {
  const S = a.ids.site
  const link: Credential | undefined = a.link && { org: a.org, bearer: a.link.credential }
  const instanceBody = (r: Refs) => ({ id: 'ATK-NEW-1', name: 'New', typeId: 'conveyor', assetNumber: 'ATK-NEW-A', controllerId: r.controller })
  return [
    { name: 'instance create, controllerId', request: (r) => ({ method: 'POST', url: `/api/sites/${S}/instances`, payload: instanceBody(r) }), refused: [422] },
    {
      name: 'instance update, controllerId',
      request: (r) => ({ method: 'PUT', url: `/api/sites/${S}/instances/${a.ids.instance}`, payload: { controllerId: r.controller } }),
      refused: [422],
    },
    {
      name: 'instances bulk, controllerId',
      request: (r) => ({ method: 'POST', url: `/api/sites/${S}/instances/bulk`, payload: [instanceBody(r)] }),
      refused: [422],
    },
    {
      name: 'electrical edge create, targetId',
      request: (r) => ({ method: 'POST', url: `/api/sites/${S}/electrical/edges`, payload: { sourceId: a.ids.node, targetId: r.node, edgeType: 0 } }),
      refused: [404, 422],
    },
    {
      name: 'electrical edge delete, target',
      request: (r) => ({ method: 'DELETE', url: `/api/sites/${S}/electrical/edges?source=${a.ids.node}&target=${r.node}&type=Cable` }),
      refused: [404],
    },
    {
      name: 'electrical network replace, an edge to the node',
      request: (r) => ({
        method: 'PUT',
        url: `/api/sites/${S}/electrical/network`,
        payload: { nodes: [{ id: a.ids.node, name: 'Main switchboard', nodeType: 3 }], edges: [{ sourceId: a.ids.node, targetId: r.node, edgeType: 0 }] },
      }),
      refused: [422],
    },
    {
      name: 'alarm acknowledge (bulk), alarmIds',
      request: (r) => ({ method: 'POST', url: `/api/sites/${S}/alarms/acknowledge`, payload: { alarmIds: [r.alarm] } }),
      refused: [404, 422],
      itemsRefused: (body) => body.acknowledged === 0 && (body.results as Array<{ status: string }>).every((r) => r.status === 'refused'),
    },
    {
      name: 'alarm events, instanceId',
      request: (r) => ({
        method: 'POST',
        url: `/api/sites/${S}/alarms/events`,
        payload: {
          events: [{ eventId: 'ATK-probe-e', instanceId: r.instance, condition: 'LO_TEMP', priority: 'low', state: 'active', occurredAt: ISO(now - 1000) }],
        },
      }),
      refused: [404, 422],
      itemsRefused: (body) => body.accepted === 0 && (body.results as Array<{ status: string }>).every((r) => r.status === 'refused'),
    },
    {
      name: 'historian series query, series instanceId and tag',
      request: (r) => ({
        method: 'POST',
        url: `/api/sites/${S}/historian/series/query`,
        payload: { series: [{ instanceId: r.instance, tag: r.tag }], mode: 'raw', from: ISO(now - 86_400_000), to: ISO(now) },
      }),
      refused: [404, 422],
      // A series of no instance of this site reads as empty, as one with no samples does.
      itemsRefused: (body) => (body.items as Array<{ samples: unknown[] }>).every((i) => i.samples.length === 0),
    },
    {
      name: 'historian series, instanceId in the query',
      request: (r) => ({
        method: 'GET',
        url: `/api/sites/${S}/historian/series?instanceId=${r.instance}&tag=${r.tag}&mode=raw&from=${ISO(now - 86_400_000)}&to=${ISO(now)}`,
      }),
      refused: [404, 422],
      itemsRefused: (body) => (body.samples as unknown[]).length === 0,
    },
    {
      name: 'historian live samples, instanceId',
      request: (r) => ({
        method: 'POST',
        url: `/api/sites/${S}/historian/samples?batchKey=${encodeURIComponent(`probe-${r.instance}`)}`,
        payload: { samples: [{ instanceId: r.instance, tagKey: r.tag, ts: ISO(now - 1000), value: 1, quality: 192 }] },
      }),
      refused: [404, 422],
      itemsRefused: (body) => body.stored === 0,
      // The push's batch and its answer, kept for a resend of its batch key.
      records: ['historian_batches', 'historian_live_batches'],
    },
    {
      name: 'historian tag mark, instance of the path',
      request: (r) => ({ method: 'PUT', url: `/api/sites/${S}/historian/tags/${r.instance}/${r.tag}`, payload: { interpolation: 'step' } }),
      refused: [404],
    },
    {
      name: 'edge gateway status, controllers controllerId',
      request: (r) => ({
        method: 'PUT',
        url: `/api/sites/${S}/edges/${a.ids.edge}/status`,
        payload: {
          gatewayVersion: '1.0.0',
          faulted: false,
          controllers: [{ controllerId: r.controller, communication: 'ok', lastGoodPollAt: ISO(now - 1000), errorCount: 0 }],
        },
      }),
      refused: [404, 422],
      itemsRefused: (body) => body.accepted === 0,
      // The gateway's heartbeat, recorded whatever its reports.
      records: ['edge_gateways'],
    },
    {
      name: 'controller of the site, by path',
      request: (r) => ({ method: 'PUT', url: `/api/sites/${S}/controllers/${r.controller}`, payload: { name: 'taken' } }),
      refused: [404],
    },
    {
      name: 'alarm of the site, by path',
      request: (r) => ({ method: 'POST', url: `/api/sites/${S}/alarms/${r.alarm}/shelve`, payload: { comment: 'x', until: ISO(now + 3_600_000) } }),
      refused: [404],
    },
    {
      name: 'AI completion, siteId',
      request: (r) => ({ method: 'POST', url: '/api/ai/complete', payload: { prompt: 'Which alarms are open?', siteId: r.site } }),
      // No AI provider is configured here: 503 before the site is looked at, the same for every value.
      refused: [404, 422, 503],
      siblingRefused: false,
    },
    {
      name: 'API key mint, siteId',
      request: (r) => ({
        method: 'POST',
        url: '/api/admin/api-keys',
        payload: { role: 'member', name: 'probe', expiresAt: ISO(now + 86_400_000), siteId: r.site },
      }),
      refused: [400, 404, 422],
      siblingRefused: false,
    },
    // A's site server (it serves A's linked site only): the sites of its link routes are another organisation's, or
    // A's sites it does not serve.
    ...(link
      ? ([
          {
            name: 'site server registration, sites',
            request: (r) => ({ method: 'POST', url: '/api/admin/site-servers', payload: { name: 'probe server', sites: [r.site] } }),
            refused: [400, 404, 422],
            siblingRefused: false,
          },
          {
            name: "site server's historian chunk, site",
            request: (r) => ({
              method: 'PUT',
              url: '/api/link/historian/bat_probe/chunks/0',
              payload: chunkOf(r, now),
              headers: LINK_HEADERS,
              credential: link,
            }),
            refused: [403, 404],
          },
          {
            name: "site server's chunks restart, site",
            request: (r) => ({ method: 'DELETE', url: `/api/link/historian/bat_probe/chunks?site=${r.site}`, headers: LINK_HEADERS, credential: link }),
            refused: [403, 404],
          },
          {
            name: "site server's seed, site",
            request: (r) => ({ method: 'GET', url: `/api/link/seed?site=${r.site}`, headers: LINK_HEADERS, credential: link }),
            refused: [403, 404],
          },
        ] satisfies Probe[])
      : []),
    {
      name: 'tenant export, siteId',
      request: (r) => ({ method: 'GET', url: `/api/admin/orgs/${a.ids.slug}/tenant/export?siteId=${r.site}` }),
      refused: [404, 422],
      siblingRefused: false,
    },
    {
      name: 'historian import, site_id and mapping instance_id',
      request: (r) => {
        const upload = multipart([
          { name: 'site_id', value: r.site },
          { name: 'format', value: 'long' },
          { name: 'mapping_csv', filename: 'mapping.csv', content: `historian_tag,instance_id,tag_key\nT9,${r.instance},${r.tag}\n` },
          { name: 'trend_csv', filename: 'trend.csv', content: 'Timestamp,TagName,Value,Quality\n2024-02-01 00:00:00,T9,2.5,100\n' },
        ])
        return { method: 'POST', url: '/api/historian/import-batches', payload: upload.payload, headers: upload.headers }
      },
      refused: [404, 422],
      // A's other site with that site's instance is a valid import.
      siblingRefused: false,
    },
    {
      name: 'historian import to its own site, mapping instance_id',
      request: (r) => {
        const upload = multipart([
          { name: 'site_id', value: S },
          { name: 'format', value: 'long' },
          { name: 'mapping_csv', filename: 'mapping.csv', content: `historian_tag,instance_id,tag_key\nT9,${r.instance},${r.tag}\n` },
          { name: 'trend_csv', filename: 'trend.csv', content: 'Timestamp,TagName,Value,Quality\n2024-02-01 00:00:00,T9,2.5,100\n' },
        ])
        return { method: 'POST', url: '/api/historian/import-batches', payload: upload.payload, headers: upload.headers }
      },
      refused: [404, 422],
    },
  ]
}

/** An answer with B's values swapped for their stand-ins and its per-request parts left out, for comparison. */
function comparable(res: LightMyRequestResponse, swaps: Array<[string, string]>): string {
  const body = swaps.reduce((text, [from, to]) => text.replaceAll(from, to), res.body)
  return `${res.statusCode} ${JSON.stringify(stableBody(body))}`
}

/** The tables of a snapshot diff (`table: n rows`) outside `allowed`. */
const outside = (diff: string[], allowed: ReadonlySet<string>) => diff.filter((d) => !allowed.has(d.slice(0, d.indexOf(':'))))

const base64url = (value: string) => Buffer.from(value).toString('base64url')

/**
 * Cursors a client could make of the ones it was given (base64url JSON keys, http/paging.ts): another list's or
 * another organisation's position, numbers past what a database column holds, text where a number goes, no JSON.
 */
function editedCursors(foreign: string): Array<[string, string]> {
  return [
    ["B's own next cursor", foreign],
    ['a huge position', base64url('[1e400]')],
    ['a negative position', base64url('[-1]')],
    ['past a safe integer', base64url('[9007199254740993]')],
    ['a fraction', base64url('[1.5]')],
    ['NaN as text', base64url('["NaN"]')],
    ["B's site code", base64url(JSON.stringify(['VIC-SITE']))],
    ['an object', base64url('{"orgId":"x","after":0}')],
    ['not base64url JSON', 'not*a*cursor'],
    ['a NUL', base64url('["\\u0000"]')],
    ['long', base64url(JSON.stringify(['x'.repeat(5000), 1]))],
  ]
}

for (const dialect of testDialects()) {
  // Both modes: the cloud's site servers and link routes, the site server's site users.
  for (const mode of ['cloud', 'site'] as const)
    describe(`${dialect}, ${mode} mode: a hostile tenant names another organisation's records and another site's`, () => {
      it("B's ids and A's other site's ids in bodies, queries and paths are refused (the uniform 404, a 400/422 naming the field, or item by item), B's exactly as an id that names nothing; edited cursors are a 400 naming /cursor or A's own page; a key restricted to A's site gets 404 for the other site and 403 off-site on every route; no row of B changes, none of A but by design, none of A names B", async (t) => {
        const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: mode })
        const a = await seedTenant(h, 'ATK')
        const b = await seedTenant(h, 'VIC')
        const sibling = await seedSecondSite(h, a)
        const foreign: Refs = {
          site: b.ids.site,
          controller: b.ids.controller,
          instance: b.ids.instance,
          tag: b.ids.tag,
          node: b.ids.node,
          alarm: b.ids.alarm,
          batch: b.ids.batch,
        }
        const missing = Object.fromEntries(Object.entries(foreign).map(([k, v]) => [k, missingLike(v)])) as unknown as Refs
        const swaps = Object.values(foreign).map((v) => [v, missingLike(v)] as [string, string])
        // Texts that name B's records: in no answer to A, in no row of A.
        const bTexts = [...new Set([b.org.id, b.org.slug, ...Object.values(b.ids).filter((v) => !v.endsWith('-none'))])]
        const gateway: Credential = {
          org: a.org,
          apiKey: String(
            (
              await h.inject(a.owner, {
                method: 'POST',
                url: '/api/admin/api-keys',
                payload: { role: 'admin', name: 'site A gateway', expiresAt: ISO(h.clock.now() + 86_400_000), siteId: a.ids.site },
              })
            ).json().plaintext,
          ),
        }
        // The keys' lastUsedAt moves with every request: api_keys is compared by its number of keys instead.
        const keyCount = async () => ((await h.inject(a.owner, { url: '/api/admin/api-keys' })).json() as unknown[]).length
        const keysBefore = await keyCount()
        await sleep(200)
        const before = { a: await snapshotOrg(h, a.org.id), b: await snapshotOrg(h, b.org.id) }
        assert.ok(snapshotRows(before.b) >= 15, "the snapshot sees B's seeded rows")
        const findings: string[] = []
        const records = new Set<string>(['api_keys'])
        const leaks = (where: string, res: LightMyRequestResponse) => {
          for (const text of bTexts) if (res.body.includes(text)) findings.push(`${where}: the answer holds B's ${text}`)
        }

        // 1. Ids in bodies, queries and paths.
        const send = (p: Probe, r: Refs) => {
          const req = p.request(r)
          return h.inject(req.credential ?? a.owner, { method: req.method as 'GET', url: req.url, payload: req.payload as object, headers: req.headers })
        }
        for (const p of probes(a, h.clock.now())) {
          for (const table of p.records ?? []) records.add(table)
          const isRefused = (res: LightMyRequestResponse) =>
            p.refused.includes(res.statusCode) ||
            (res.statusCode === 200 && p.itemsRefused !== undefined && p.itemsRefused(res.json() as Record<string, unknown>))
          const asForeign = await send(p, foreign)
          const asMissing = await send(p, missing)
          if (!isRefused(asForeign)) findings.push(`${p.name} (B's): ${asForeign.statusCode} ${asForeign.body.slice(0, 300)}`)
          // The caller's own input echoed back (`no instance VIC-CV-101 in this site`) reveals nothing: compared swapped.
          if (comparable(asForeign, swaps) !== comparable(asMissing, []))
            findings.push(`${p.name}: B's ${comparable(asForeign, swaps).slice(0, 300)} vs none ${comparable(asMissing, []).slice(0, 300)}`)
          if (p.siblingRefused === false) continue
          const asSibling = await send(p, sibling)
          if (!isRefused(asSibling)) findings.push(`${p.name} (A's other site's): ${asSibling.statusCode} ${asSibling.body.slice(0, 300)}`)
        }

        // 2. Edited cursors, on every list of the document that takes one.
        const bAudit = (await h.inject(b.owner, { url: `/api/admin/orgs/${b.ids.slug}/audit?limit=1` })).json() as { nextCursor: string | null }
        assert.ok(bAudit.nextCursor, "B's audit trail has a second page")
        const ops = operations(await openApiDocument(h))
        const lists = ops.filter((op) => op.method === 'GET' && queryParams(op).some((q) => q.name === 'cursor'))
        assert.ok(lists.length >= 12, `${lists.length} lists take a cursor`)
        let cursorRequests = 0
        for (const op of lists) {
          const path = fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, a.ids[parameterKind(op.path, p.name)!]])))
          for (const [what, cursor] of editedCursors(bAudit.nextCursor!)) {
            const url = path + queryFor(op, h.clock.now(), { cursor, limit: '1' }, a.ids)
            const res = await h.inject(a.owner, { url })
            cursorRequests++
            const where = `${label(op)} cursor ${what}`
            leaks(where, res)
            if (res.statusCode === 200) continue // a position among A's own rows: A's own page
            const body = res.json() as { code?: string; errors?: Array<{ pointer: string }> }
            if (res.statusCode !== 400 || body.code !== 'ValidationFailed' || !body.errors?.some((e) => e.pointer === '/cursor'))
              findings.push(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`)
          }
        }

        // 3. A key restricted to A's site, on every route: A's other site is the uniform 404, a route of no site 403.
        const ids = {
          ...a.ids,
          site: sibling.site,
          controller: sibling.controller,
          instance: sibling.instance,
          tag: sibling.tag,
          node: sibling.node,
          alarm: sibling.alarm,
        }
        let restricted = 0
        for (const op of ops) {
          const policy = policyOf(h, op)
          if (policy === 'public') continue
          const url =
            fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, ids[parameterKind(op.path, p.name)!]]))) +
            queryFor(op, h.clock.now(), {}, ids)
          const res = await h.inject(gateway, requestFor(op, url, h.clock.now()))
          restricted++
          const want = op.path === '/api/me' ? 200 : /^\/api\/sites\/\{[A-Za-z]+\}/.test(op.path) ? 404 : 403
          if (res.statusCode !== want)
            findings.push(`${label(op)} with a key restricted to ${a.ids.site}: ${res.statusCode}, expected ${want}: ${res.body.slice(0, 200)}`)
        }

        // 4. Every route of A's site, each other id of its path and query A's other site's: answered exactly as an id
        // that names nothing (the cross-tenant suite does this with another organisation's ids).
        const siblingIds: Partial<Record<keyof TenantIds, string>> = {
          controller: sibling.controller,
          instance: sibling.instance,
          tag: sibling.tag,
          node: sibling.node,
          node2: sibling.node,
          alarm: sibling.alarm,
        }
        const siblingSwaps = Object.values(siblingIds).map((v) => [v, missingLike(v)] as [string, string])
        let siblingRequests = 0
        for (const op of ops.filter((o) => /^\/api\/sites\/\{[A-Za-z]+\}\//.test(o.path))) {
          const named = (name: string) => parameterKind(op.path, name) !== 'site' && siblingIds[parameterKind(op.path, name)!] !== undefined
          if (!pathParams(op).some((p) => named(p.name)) && !queryParams(op).some((q) => named(q.name))) continue
          const build = (pick: (kind: keyof TenantIds) => string) => {
            const value = (name: string) => {
              const kind = parameterKind(op.path, name)!
              return named(name) ? pick(kind) : a.ids[kind]
            }
            const extra = Object.fromEntries(
              queryParams(op)
                .filter((q) => named(q.name))
                .map((q) => [q.name, value(q.name)]),
            )
            return fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, value(p.name)]))) + queryFor(op, h.clock.now(), extra, a.ids)
          }
          const url = build((kind) => siblingIds[kind]!)
          const res = await h.inject(a.owner, requestFor(op, url, h.clock.now()))
          const ref = await h.inject(
            a.owner,
            requestFor(
              op,
              build((kind) => missingLike(siblingIds[kind]!)),
              h.clock.now(),
            ),
          )
          siblingRequests += 2
          if (comparable(res, siblingSwaps) !== comparable(ref, []))
            findings.push(`${label(op)} ${url}: ${comparable(res, siblingSwaps).slice(0, 300)} vs none ${comparable(ref, []).slice(0, 300)}`)
        }

        await sleep(200)
        const after = { a: await snapshotOrg(h, a.org.id), b: await snapshotOrg(h, b.org.id) }
        findings.push(...snapshotDiff(before.b, after.b).map((d) => `B changed: ${d}`))
        findings.push(...outside(snapshotDiff(before.a, after.a), records).map((d) => `A changed: ${d}`))
        // Outside the records kept by design (a live push keeps its answer, which echoes the refused instance id it was sent).
        const tables = (snapshot: string) => Object.entries(JSON.parse(snapshot) as Record<string, string[]>).filter(([table]) => !records.has(table))
        for (const [table, rows] of tables(after.a))
          for (const text of bTexts) if (rows.some((r) => r.includes(text))) findings.push(`a row of A's ${table} names B's ${text}`)
        assert.equal(await keyCount(), keysBefore, 'no key minted by a refused request')
        console.log(
          `# s24 tenant references (${dialect}, ${mode}): ${probes(a, h.clock.now()).length} reference probes, ${cursorRequests} edited cursors on ${lists.length} lists, ${restricted} routes with a site-restricted key, ${siblingRequests} requests naming the other site's records; ${findings.length} findings`,
        )
        for (const f of findings) console.log(`# finding: ${f}`)
        assert.deepEqual(findings, [])
      })
    })
}
