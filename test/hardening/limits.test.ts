// Resource limits (issue 14, OWASP API4): every size limit takes exactly its limit and refuses limit + 1 with a
// 413 or 400 that names it; refused uploads leave no temporary file; slow clients do not starve a healthy one.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { FIELD_NAMES } from '../../src/modules/historian/service/form.ts'
import { multipart, plant, type Part } from '../../src/modules/historian/test-setup.ts'
import { INSTANCE_LIMITS } from '../../src/modules/instances/limits.ts'
import { harness, testDialects } from '../harness.ts'
import { chunkDigest } from '../../src/modules/fleet/historian-chunks/wire.ts'
import { linkRequest, linkTableCounts, outboxSettled } from '../support/fleet-link.ts'
import {
  NO_RATE_LIMIT,
  snapshotDiff,
  snapshotOrg,
  fillPath,
  openApiDocument,
  operations,
  parameterKind,
  pathParams,
  queryParams,
  seedTenant,
  label,
  type Schema,
} from './support.ts'

// This process's temporary files go to a directory of their own, so that other test processes cannot blur the count.
process.env.TMPDIR = mkdtempSync(join(tmpdir(), 'sitegrid-limits-tmp-'))

const BODY_LIMIT = 65_536
const MiB = 1024 * 1024
const FILE_LIMIT = 4096

/** Every file and directory under `dir`, relative, sorted. */
function listTree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const rel = join(prefix, e.name)
      return e.isDirectory() ? [rel + '/', ...listTree(join(dir, e.name), rel)] : [rel]
    })
    .sort()
}

interface Problem {
  status: number
  detail?: string
  errors?: Array<{ pointer: string; message: string }>
}
const problemOf = (body: string) => JSON.parse(body) as Problem

/** `length` bytes of valid JSON: the object, then whitespace (insignificant in JSON). */
function paddedJson(value: unknown, length: number): string {
  const text = JSON.stringify(value)
  assert.ok(text.length <= length)
  return text + ' '.repeat(length - text.length)
}

/** A long-format trend CSV of exactly `bytes` bytes (the last value carries trailing zeros). */
function trendCsvOf(bytes: number): string {
  let text = 'Timestamp,TagName,Value,Quality\n'
  for (let i = 0; text.length + 40 < bytes; i += 1)
    text += `2024-01-01 00:${String(i % 60).padStart(2, '0')}:${String(Math.floor(i / 60) % 60).padStart(2, '0')},T1,1.5,100\n`
  const last = '2024-01-02 00:00:00,T1,2.'
  const tail = ',100\n'
  return text + last + '5'.padEnd(bytes - text.length - last.length - tail.length, '0') + tail
}

const MAPPING = 'historian_tag,instance_id,tag_key\nT1,ins_pump,t0\n'

for (const dialect of testDialects()) {
  test(`${dialect}: every size limit accepts exactly its limit and refuses limit + 1 naming it; refused uploads leave no file`, async (t) => {
    const h = await harness(t, dialect, {
      ...NO_RATE_LIMIT,
      SITEGRID_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      SITEGRID_HISTORIAN_MAX_FILE_BYTES: String(FILE_LIMIT),
    })
    const { owner, siteCode } = await plant(h)
    const figures: string[] = []
    const tmpBefore = listTree(tmpdir())
    const dataBefore = listTree(h.config.dataDir)

    // JSON body: exactly the limit is a created site; one byte more is 413 naming the limit.
    const site = (code: string) => ({ code, name: 'Limit plant' })
    const atLimit = await h.inject(owner, {
      method: 'POST',
      url: '/api/sites',
      headers: { 'content-type': 'application/json' },
      payload: paddedJson(site('LIM-A'), BODY_LIMIT),
    })
    assert.equal(atLimit.statusCode, 201, atLimit.body)
    const over = await h.inject(owner, {
      method: 'POST',
      url: '/api/sites',
      headers: { 'content-type': 'application/json' },
      payload: paddedJson(site('LIM-B'), BODY_LIMIT + 1),
    })
    assert.equal(over.statusCode, 413, over.body)
    assert.match(problemOf(over.body).detail ?? '', new RegExp(`${BODY_LIMIT} bytes`))
    assert.equal((await h.handle.db.selectFrom('sites').select('code').where('org_id', '=', owner.org.id).where('code', '=', 'LIM-B').execute()).length, 0)
    figures.push(`JSON body ${BODY_LIMIT} B: 201 at limit, ${over.statusCode} at limit+1`)

    // Historian upload: file size and number of parts.
    const upload = (parts: Part[]) => {
      const m = multipart(parts)
      return h.inject(owner, { method: 'POST', url: '/api/historian/import-batches', payload: m.payload, headers: m.headers })
    }
    const files = (trend: string): Part[] => [
      { name: 'mapping_csv', filename: 'mapping.csv', content: MAPPING },
      { name: 'trend_csv', filename: 'trend.csv', content: trend },
    ]
    const dry: Part[] = [
      { name: 'site_id', value: siteCode },
      { name: 'format', value: 'long' },
      { name: 'dryRun', value: 'true' },
    ]
    const fileAt = await upload([...dry, ...files(trendCsvOf(FILE_LIMIT))])
    assert.equal(fileAt.statusCode, 200, fileAt.body)
    const fileOver = await upload([...dry, ...files(trendCsvOf(FILE_LIMIT + 1))])
    assert.equal(fileOver.statusCode, 413, fileOver.body)
    assert.match(problemOf(fileOver.body).detail ?? '', new RegExp(String(FILE_LIMIT)))
    // The buffered path: trend_csv before mapping_csv waits in a temporary file, which must go too.
    const bufferedOver = await upload([...dry, ...files(trendCsvOf(FILE_LIMIT + 1)).reverse()])
    assert.equal(bufferedOver.statusCode, 413, bufferedOver.body)
    figures.push(`historian file ${FILE_LIMIT} B: ${fileAt.statusCode} at limit, ${fileOver.statusCode} at limit+1 (streamed and buffered)`)

    const allFields: Record<string, string> = {
      site_id: siteCode,
      format: 'long',
      force: 'false',
      dryRun: 'true',
      timezone: 'UTC',
      separator: ',',
      decimal: '.',
      dateOrder: 'ymd',
      qualityScale: 'percent',
      sentinels: '-9999',
      maxRejections: '10',
    }
    assert.deepEqual(Object.keys(allFields).sort(), [...FIELD_NAMES].sort(), 'every known field once')
    const fieldParts: Part[] = FIELD_NAMES.map((name) => ({ name, value: allFields[name]! }))
    const partsAt = await upload([...fieldParts, ...files(trendCsvOf(200))])
    assert.equal(partsAt.statusCode, 200, partsAt.body)
    const partsOver = await upload([...fieldParts, { name: 'format', value: 'long' }, ...files(trendCsvOf(200))])
    assert.equal(partsOver.statusCode, 413, partsOver.body)
    assert.match(problemOf(partsOver.body).detail ?? '', /more (parts|fields)/)
    figures.push(`historian parts ${FIELD_NAMES.length + 2}: ${partsAt.statusCode} at limit, ${partsOver.statusCode} at limit+1`)
    assert.equal(
      Number(
        (
          await h.handle.db
            .selectFrom('historian_batches')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('org_id', '=', owner.org.id)
            .executeTakeFirstOrThrow()
        ).n,
      ),
      0,
      'dry runs and refusals stored no batch',
    )

    // Instance bulk CSV: exactly bulkMaxItems lines are checked (dry run), one more is a 400 naming the limit.
    const max = INSTANCE_LIMITS.bulkMaxItems
    const csv = (lines: number) =>
      ['id,name,typeId,assetNumber,controllerId', ...Array.from({ length: lines }, (_, i) => `bulk-${i},Pump ${i},pump,B-${i},plc-1`)].join('\n') + '\n'
    const bulk = (lines: number) =>
      h.inject(owner, {
        method: 'POST',
        url: `/api/sites/${siteCode}/instances/bulk?dryRun=true`,
        headers: { 'content-type': 'text/csv' },
        payload: csv(lines),
      })
    const bulkLimit = 1_048_576 // the bulk lines must fit the body limit too: checked with the default limit below
    assert.ok(Buffer.byteLength(csv(max + 1)) < bulkLimit)
    const h2 = await harness(t, dialect, NO_RATE_LIMIT)
    const p2 = await plant(h2)
    const bulk2 = (lines: number) =>
      h2.inject(p2.owner, {
        method: 'POST',
        url: `/api/sites/${p2.siteCode}/instances/bulk?dryRun=true`,
        headers: { 'content-type': 'text/csv' },
        payload: csv(lines),
      })
    const bulkAt = await bulk2(max)
    assert.equal(bulkAt.statusCode, 200, bulkAt.body.slice(0, 500))
    assert.equal((bulkAt.json() as { created: number }).created, max)
    const bulkOver = await bulk2(max + 1)
    assert.equal(bulkOver.statusCode, 400, bulkOver.body.slice(0, 500))
    assert.match(bulkOver.body, new RegExp(`at most ${max}`))
    figures.push(`instance bulk CSV ${max} lines: ${bulkAt.statusCode} at limit, ${bulkOver.statusCode} at limit+1`)
    // On the small-body server the same CSV is over the body limit: 413 before any line is read.
    assert.equal((await bulk(max)).statusCode, 413)

    // Page sizes: every paged list of the OpenAPI document, limit = maximum and maximum + 1.
    const tenant = await seedTenant(h2, 'LIM')
    const doc = await openApiDocument(h2)
    let pagedRoutes = 0
    for (const op of operations(doc).filter((o) => o.method === 'GET')) {
      const limit = queryParams(op).find((p) => p.name === 'limit')
      if (!limit) continue
      const maximum = (limit.schema as Schema & { maximum?: number }).maximum
      assert.equal(typeof maximum, 'number', `${label(op)}: limit has a maximum`)
      const idOf = (name: string) => {
        if (name === 'tag') return 't0' // the seeded tenant's historian mapping (tag_key)
        const kind = parameterKind(op.path, name)
        assert.ok(kind, `${label(op)}: parameter ${name} names a resource kind`)
        return tenant.ids[kind]
      }
      const url = fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, idOf(p.name)])))
      const required = queryParams(op)
        .filter((p) => p.required && p.name !== 'limit')
        .map((p) => `${p.name}=${encodeURIComponent(idOf(p.name))}&`)
        .join('')
      const ok = await h2.inject(tenant.owner, { url: `${url}?${required}limit=${maximum}` })
      assert.equal(ok.statusCode, 200, `${label(op)} limit=${maximum}: ${ok.body.slice(0, 300)}`)
      const refused = await h2.inject(tenant.owner, { url: `${url}?${required}limit=${maximum! + 1}` })
      assert.equal(refused.statusCode, 400, `${label(op)} limit=${maximum! + 1}`)
      assert.ok(
        problemOf(refused.body).errors?.some((e) => e.pointer === '/limit' && e.message.includes(String(maximum))),
        `${label(op)}: the 400 names /limit and ${maximum}: ${refused.body}`,
      )
      pagedRoutes += 1
    }
    assert.ok(pagedRoutes >= 8, `paged routes found: ${pagedRoutes}`)
    figures.push(`page sizes: ${pagedRoutes} paged routes, 200 at maximum and 400 naming /limit at maximum+1`)

    // AI prompt: the schema's maximum passes validation (503: AI is not configured here), one more is a 400 naming /prompt.
    const complete = doc.paths['/api/ai/complete']?.post
    const promptSchema = (complete?.requestBody?.content['application/json']?.schema?.properties?.prompt ?? {}) as Schema
    const promptMax = [promptSchema, ...(promptSchema.anyOf ?? [])].map((s) => (s as { maxLength?: number }).maxLength).find((n) => typeof n === 'number')!
    assert.equal(typeof promptMax, 'number')
    const ai = (prompt: string) => h2.inject(tenant.owner, { method: 'POST', url: '/api/ai/complete', payload: { prompt } })
    const promptAt = await ai('a'.repeat(promptMax))
    assert.equal(promptAt.statusCode, 503, promptAt.body)
    const promptOver = await ai('a'.repeat(promptMax + 1))
    assert.equal(promptOver.statusCode, 400)
    assert.ok(
      problemOf(promptOver.body).errors?.some((e) => e.pointer === '/prompt' && e.message.includes(String(promptMax))),
      promptOver.body,
    )
    figures.push(`AI prompt ${promptMax} chars: passes validation at limit (${promptAt.statusCode}: not configured), 400 at limit+1`)

    // No temporary file and nothing in the data directory left behind by any of it.
    assert.deepEqual(listTree(h.config.dataDir), dataBefore, 'data directory unchanged')
    const leftovers = listTree(tmpdir()).filter((p) => !tmpBefore.includes(p) && !p.startsWith('sitegrid-data-') && !p.startsWith('sitegrid-test-'))
    assert.deepEqual(leftovers, [], 'temporary files left behind')
    console.log(`limits (${dialect}): ${figures.join('; ')}; temporary files left: ${leftovers.length}`)
  })

  test(`${dialect}, cloud mode: the fleet link's limits: the push takes exactly 64 MiB and refuses one byte more with 413, the other link bodies the body limit; the long poll takes its 25 s maximum and refuses 25 001 ms; nothing refused changes a row`, async (t) => {
    const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_BODY_LIMIT_BYTES: String(BODY_LIMIT), SITEGRID_MODE: 'cloud' })
    const tenant = await seedTenant(h, 'LL')
    const link = tenant.link!
    const as = linkRequest(h, tenant.owner, link)
    const json = { 'content-type': 'application/json' }
    const figures: string[] = []
    const unchanged = async (what: string, step: () => Promise<void>) => {
      const counts = await linkTableCounts(h.handle.db, tenant.org.id)
      const before = await snapshotOrg(h, tenant.org.id)
      await step()
      assert.deepEqual(await linkTableCounts(h.handle.db, tenant.org.id), counts, `${what}: the link's and the historian's row counts`)
      assert.deepEqual(snapshotDiff(before, await snapshotOrg(h, tenant.org.id)), [], `${what}: no row changed`)
    }
    const refusedTooLarge = (res: { statusCode: number; body: string }, limit: number, what: string) => {
      assert.equal(res.statusCode, 413, `${what}: ${res.body.slice(0, 300)}`)
      const body = JSON.parse(res.body) as { code: string; detail: string }
      assert.equal(body.code, 'PayloadTooLarge', what)
      // The setting is named only where it is the limit (the push's own limit used to be said to be the setting).
      const named = limit === BODY_LIMIT ? `${limit} bytes (SITEGRID_BODY_LIMIT_BYTES)` : `${limit} bytes of this route`
      assert.ok(body.detail.includes(named), `${what}: ${body.detail}`)
    }

    // The push: its own limit (64 MiB, a catch-up batch of large rows), not the server's body limit.
    const PUSH_LIMIT = 64 * MiB
    const push = { epoch: link.epoch, after: { tx: 0, seq: 3 }, changes: [] }
    const pushAt = await as('POST', '/api/link/push', paddedJson(push, PUSH_LIMIT), json)
    assert.equal(pushAt.statusCode, 200, pushAt.body.slice(0, 300))
    assert.deepEqual(pushAt.json(), { mark: { epoch: link.epoch, tx: 0, seq: 3 }, applied: 0, skipped: 0, conflicts: 0 })
    // One more byte: refused before it is read whole. The body holds a change that would apply.
    const change = {
      seq: 4,
      tx: 0,
      table: 'alarm_events',
      site: link.site,
      key: [link.site, 'LL-too-large'],
      op: 'upsert',
      row: {},
      base: null,
      origin: '',
      at: h.clock.now(),
    }
    await unchanged('a push of 64 MiB + 1', async () =>
      refusedTooLarge(await as('POST', '/api/link/push', paddedJson({ ...push, changes: [change] }, PUSH_LIMIT + 1), json), PUSH_LIMIT, 'push at limit + 1'),
    )
    figures.push(`push ${PUSH_LIMIT} B: ${pushAt.statusCode} at limit, 413 at limit+1`)

    // The heartbeat and a historian chunk: the server's body limit.
    const beat = { state: 'online', lastError: null, backlog: { items: 0, bytes: 0, oldestAt: null }, pulledTo: { tx: 0, seq: 0 } }
    const beatAt = await as('PUT', '/api/link/heartbeat', paddedJson(beat, BODY_LIMIT), json)
    assert.equal(beatAt.statusCode, 204, beatAt.body)
    await unchanged('a heartbeat of the body limit + 1', async () =>
      refusedTooLarge(
        await as('PUT', '/api/link/heartbeat', paddedJson({ ...beat, lastError: 'x' }, BODY_LIMIT + 1), json),
        BODY_LIMIT,
        'heartbeat at limit + 1',
      ),
    )
    const samples: Array<[string, string, number, number | null, string | null, number]> = [['LL-LCV-1', 'speed', h.clock.now(), 2.5, null, 192]] // the linked site's instance (seedCloudLink)
    const chunk = { site: link.site, samples, sha256: chunkDigest(samples) }
    const chunkAt = await as('PUT', `/api/link/historian/${link.batch}/chunks/1`, paddedJson(chunk, BODY_LIMIT), json)
    assert.equal(chunkAt.statusCode, 200, chunkAt.body)
    await unchanged('a historian chunk of the body limit + 1', async () =>
      refusedTooLarge(await as('PUT', `/api/link/historian/${link.batch}/chunks/2`, paddedJson(chunk, BODY_LIMIT + 1), json), BODY_LIMIT, 'chunk at limit + 1'),
    )
    figures.push(`heartbeat and historian chunk ${BODY_LIMIT} B: ${beatAt.statusCode} and ${chunkAt.statusCode} at limit, 413 at limit+1`)

    // The long poll: its documented maximum is taken (changes wait after (0, 0): answered at once), one more is a 400.
    await outboxSettled(h.handle.db, dialect, tenant.org.id)
    const waitAt = await as('GET', '/api/link/pull?tx=0&seq=0&limit=1&waitMs=25000')
    assert.equal(waitAt.statusCode, 200, waitAt.body)
    assert.equal((waitAt.json() as { changes: unknown[] }).changes.length, 1)
    const waitOver = await as('GET', '/api/link/pull?tx=0&seq=0&limit=1&waitMs=25001')
    assert.equal(waitOver.statusCode, 400, waitOver.body)
    assert.ok(
      problemOf(waitOver.body).errors?.some((e) => e.pointer === '/waitMs' && e.message.includes('25000')),
      waitOver.body,
    )
    figures.push(`pull waitMs 25000: ${waitAt.statusCode} (changes waiting), 25001: ${waitOver.statusCode} naming /waitMs`)
    console.log(`limits (${dialect}, cloud, the fleet link): ${figures.join('; ')}`)
  })

  test(`${dialect}: 1000 slow connections do not starve a healthy client`, async (t) => {
    const h = await harness(t, dialect, NO_RATE_LIMIT)
    const { org, key } = await h.orgWithKey('member')
    await h.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = h.app.server.address() as { port: number }
    const slow: Socket[] = []
    t.after(() => {
      for (const s of slow) s.destroy()
    })
    let slowClosedByServer = 0
    for (let i = 0; i < 1000; i += 1) {
      const s = connect(port, '127.0.0.1')
      s.on('error', () => {})
      s.on('close', () => {
        slowClosedByServer += 1
      })
      s.write(`GET /api/sites HTTP/1.1\r\nHost: ${org.slug}.localhost\r\nX-Api-Key: ${key}\r\nX-Slow: `)
      slow.push(s)
    }
    // All 1000 are held by the server before the healthy client starts (a count, not a time).
    const held = () => new Promise<number>((resolve, reject) => h.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))))
    while ((await held()) < 1000) await new Promise<void>((resolve) => setTimeout(resolve, 20))
    const heldAtStart = await held()
    // They keep dribbling one header byte at a time while the healthy client works; the server cuts a socket off
    // once its headers took longer than SITEGRID_HEADERS_TIMEOUT_MS (however many arrive or not meanwhile).
    const drip = setInterval(() => {
      for (const s of slow) if (!s.destroyed) s.write('a')
    }, 50)
    t.after(() => clearInterval(drip))
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, path: '/api/sites', headers: { host: `${org.slug}.localhost`, 'x-api-key': key }, agent: false },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.statusCode ?? 0))
          },
        )
        req.on('error', reject)
        req.end()
      })
    const statuses: number[] = []
    for (let i = 0; i < 100; i += 1) statuses.push(await get())
    clearInterval(drip)
    const openSlow = slow.filter((s) => !s.destroyed && !s.readableEnded).length
    for (const s of slow) s.destroy()
    const succeeded = statuses.filter((s) => s === 200).length
    console.log(
      `slow connections (${dialect}): server held ${heldAtStart} connections (1000 slow) when the healthy client started; ` +
        `healthy client: ${succeeded}/${statuses.length} answered 200; slow sockets still open at its end: ${openSlow}, cut off by the server: ${slowClosedByServer}`,
    )
    assert.ok(heldAtStart >= 1000)
    assert.equal(succeeded, statuses.length)
  })
}
