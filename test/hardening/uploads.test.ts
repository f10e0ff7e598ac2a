// Issue 24 (defects 1, 2, 11): every upload route of a real `sitegrid serve` process under corrupted, truncated and
// aborted bodies, and the tenant package (the one upload that is compressed) under decompression bombs. Each answer
// must be the documented problem, the process must still be alive and serving a moment later (an 'error' of a stream
// left unhandled after the answer kills it), and the server's resident memory must not grow by more than 64 MiB:
// measured from /proc/PID/status, VmHWM (the peak, reset through /proc/PID/clear_refs before each step) minus VmRSS
// before the step. The figures are printed (`# …`).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { createGzip, deflateSync, gunzipSync, gzipSync } from 'node:zlib'
import { systemClock } from '../../src/clock.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { writePackage, type PackageHeader } from '../../src/modules/tenant-transfer/format.ts'
import type { Row } from '../../src/modules/tenant-transfer/introspect.ts'
import { harness, sleep, testDialects } from '../harness.ts'
import { chunkDigest } from '../../src/modules/fleet/historian-chunks/wire.ts'
import { LINK_HEADERS, linkedAlarmEvent, linkTableCounts } from '../support/fleet-link.ts'
import { NO_RATE_LIMIT, seedTenant, snapshotDiff, snapshotOrg } from './support.ts'
import { runCli, startServer, type Server } from '../cli/process.ts'
import { HISTORIAN_SITE, seedHistorianSite, trendRows } from '../support/historian-upload.ts'
import { processWorld, rawRequest, type ProcessWorld } from './process-support.ts'

const MiB = 1024 * 1024
/** The server's inflated-size limit in this suite: the 256 MiB bomb is inflated whole (and refused for what it holds), the 1 GiB one stops here. */
const INFLATED_LIMIT = 512 * MiB
const MAX_GROWTH_MIB = 64

interface Answer {
  status: number
  json: Record<string, unknown>
}

function kib(line: string | undefined): number {
  return Number(/(\d+) kB/.exec(line ?? '')?.[1])
}

function memoryOf(pid: number): { rssKiB: number; hwmKiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')
  return { rssKiB: kib(status.find((l) => l.startsWith('VmRSS:'))), hwmKiB: kib(status.find((l) => l.startsWith('VmHWM:'))) }
}

/** Runs `step` and asserts the server's growth (peak during the step over resident before it) stays within the bound. */
async function measured<T>(server: Server, label: string, step: () => Promise<T>): Promise<T> {
  const pid = server.child.pid!
  writeFileSync(`/proc/${pid}/clear_refs`, '5') // resets VmHWM to the current resident size
  const before = memoryOf(pid).rssKiB
  const result = await step()
  const { hwmKiB } = memoryOf(pid)
  const growthMiB = (hwmKiB - before) / 1024
  console.log(`# ${label}: VmRSS before ${(before / 1024).toFixed(0)} MiB, VmHWM ${(hwmKiB / 1024).toFixed(0)} MiB, growth +${growthMiB.toFixed(1)} MiB`)
  assert.ok(growthMiB <= MAX_GROWTH_MIB, `${label}: the server grew by ${growthMiB.toFixed(1)} MiB`)
  return result
}

async function send(server: Server, path: string, init: { method: string; headers: Record<string, string>; body?: Buffer | string }): Promise<Answer> {
  const res = await rawRequest(`${server.url}${path}`, init)
  const text = res.body.toString('utf8')
  return { status: res.status, json: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

/** Declares `declared` bytes, sends `sent` of them, then drops the connection: the body ends inside the upload. */
function abortedUpload(server: Server, path: string, headers: Record<string, string>, sent: Buffer, declared: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${server.url}${path}`, { method: headers['x-method'] ?? 'PUT', headers: { ...headers, 'content-length': String(declared) } })
    req.on('error', () => resolve())
    req.on('response', (res) => {
      res.resume()
      res.on('end', resolve)
      res.on('error', () => resolve())
    })
    req.write(sent, () =>
      setTimeout(() => {
        req.destroy()
        resolve()
      }, 300),
    )
  })
}

/** The process is still there a moment later, answering its health check and an authenticated read. */
async function assertServing(server: Server, host: Record<string, string>, after: string): Promise<void> {
  await sleep(2000)
  assert.equal(server.child.exitCode, null, `the server exited after ${after}: ${server.output().slice(-2000)}`)
  assert.equal((await rawRequest(`${server.url}/healthz`)).status, 200, `health after ${after}`)
  assert.equal((await rawRequest(`${server.url}/api/sites`, { headers: host })).status, 200, `an authenticated read after ${after}`)
}

async function gzipOf(pieces: Iterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = []
  await pipeline(Readable.from(pieces), createGzip({ level: 9 }), async (compressed: AsyncIterable<Buffer>) => {
    for await (const c of compressed) out.push(c)
  })
  return Buffer.concat(out)
}

function* repeated(piece: Buffer, times: number): Generator<Buffer> {
  yield* Array.from({ length: times }, () => piece)
}

function headerLine(w: ProcessWorld): string {
  return `${JSON.stringify({ type: 'header', format: 'sitegrid-tenant-package', formatVersion: 1, sourceMode: 'site', exportedAt: new Date().toISOString(), org: { id: w.orgId, slug: w.slug, name: w.slug }, site: null, tables: ['sites'] })}\n`
}

/** A package of `mib` MiB inflated: its header, then one row line after another (4 KiB each) and no end record. */
async function rowBomb(w: ProcessWorld, mib: number): Promise<Buffer> {
  const line = `{"type":"row","part":"sites","row":{"pad":"${'x'.repeat(4096 - 43)}"}}\n`
  const piece = Buffer.from(line.repeat(MiB / line.length))
  return gzipOf([Buffer.from(headerLine(w)), ...repeated(piece, mib)])
}

/** The package with one more row in `part`, made from the first row `extra` answers for, every checksum recomputed. */
async function withExtraRow(pkg: Buffer, part: string, extra: (row: Row) => Row | false): Promise<Buffer> {
  const records = gunzipSync(pkg)
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; part?: string; row?: Row })
  const rows = new Map<string, Row[]>()
  for (const r of records) if (r.type === 'row') rows.set(r.part!, [...(rows.get(r.part!) ?? []), r.row!])
  const added = rows
    .get(part)!
    .map(extra)
    .find((r) => r !== false)
  rows.get(part)!.push(added!)
  const header = records[0] as unknown as PackageHeader
  async function* parts() {
    for (const name of header.tables) yield { part: name, rows: Readable.from(rows.get(name) ?? []) as AsyncIterable<Row> }
  }
  let text = ''
  for await (const piece of writePackage(header, parts())) text += piece
  return gzipSync(text)
}

async function stagedPackages(w: ProcessWorld): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from tenant_import_packages where org_id = ${w.orgId}`.execute(w.handle.db)
  return Number(rows[0]!.n)
}

for (const dialect of testDialects()) {
  describe(`${dialect}: uploads under corruption, truncation and bombs (issue 24)`, () => {
    let w: ProcessWorld
    let server: Server
    let host: Record<string, string>
    let pkg: Buffer
    const packagePath = () => `/api/admin/orgs/${w.slug}/tenant/import/package`

    // One server for the suite: processWorld's clean-ups run when the suite ends.
    const cleanups: Array<() => unknown> = []
    before(async () => {
      w = await processWorld({ after: (fn: () => unknown) => cleanups.push(fn) } as never, dialect, 'uploads', {
        SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES: String(INFLATED_LIMIT),
      })
      await seedHistorianSite(w.handle, w.orgId)
      server = await startServer({ cwd: w.cwd, env: w.env })
      host = { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey }
      pkg = (await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })).body
      // Warm-up: a valid package staged once, so the measured steps start from a server that has done this before.
      assert.equal((await send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: pkg })).status, 200)
    })
    after(async () => {
      await server?.stop()
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    it('a package whose second line is not JSON and whose CRC-32 is wrong answers 422 PackageInvalid and the server lives on', async () => {
      // Incompressible lines after the bad one: the inflater is still at work when the reader has stopped, and meets
      // the bad trailer then (the small package's trailer is met while the reader still reads).
      for (const [label, padding] of [
        ['small', 0],
        ['100 KiB', 100 * 1024],
        ['3 MiB', 3 * MiB],
      ] as const) {
        const corrupt = gzipSync(Buffer.from(`${headerLine(w)}this is not JSON\n${randomBytes(padding).toString('base64')}\n`))
        corrupt[corrupt.length - 8]! ^= 0xff // the CRC-32 trailer
        const answer = await measured(server, `${dialect} package, corrupt (${label}, bad CRC-32)`, () =>
          send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: corrupt }),
        )
        assert.equal(answer.status, 422)
        assert.equal(answer.json.code, 'PackageInvalid')
        await assertServing(server, host, `the corrupt package (${label})`)
      }
      const flipped = Buffer.from(pkg)
      flipped[Math.floor(flipped.length / 2)]! ^= 0x55 // a corrupted deflate stream
      const answer = await send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: flipped })
      assert.equal(answer.status, 422)
      assert.equal(answer.json.code, 'PackageInvalid')
      assert.equal(await stagedPackages(w), 0)
      await assertServing(server, host, 'a corrupted deflate stream')
    })

    it('a truncated package answers 422, one cut off by the client leaves nothing staged, and the server lives on', async () => {
      const truncated = await measured(server, `${dialect} package, truncated`, () =>
        send(server, packagePath(), {
          method: 'PUT',
          headers: { ...host, 'content-type': 'application/gzip' },
          body: pkg.subarray(0, Math.floor(pkg.length / 2)),
        }),
      )
      assert.equal(truncated.status, 422)
      assert.equal(truncated.json.code, 'PackageInvalid')
      await measured(server, `${dialect} package, connection dropped mid-body`, () =>
        abortedUpload(server, packagePath(), { ...host, 'content-type': 'application/gzip' }, pkg.subarray(0, Math.floor(pkg.length / 2)), pkg.length),
      )
      await assertServing(server, host, 'the truncated packages')
      assert.equal(await stagedPackages(w), 0)
    })

    it('gzip bombs are inflated in constant memory: past the inflated-size limit 413 naming it and the setting, nothing kept', async () => {
      const zeros = await gzipOf(repeated(Buffer.alloc(MiB), 256))
      const lineBomb = await measured(server, `${dialect} package, bomb of zeros ${(zeros.length / 1024).toFixed(0)} KiB -> 256 MiB`, () =>
        send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: zeros }),
      )
      assert.equal(lineBomb.status, 422, 'a line without end is refused before it grows')
      assert.equal(lineBomb.json.code, 'PackageInvalid')

      const inflatedWhole = await rowBomb(w, 256)
      const whole = await measured(
        server,
        `${dialect} package, bomb of rows ${(inflatedWhole.length / 1024).toFixed(0)} KiB -> 256 MiB (inflated whole, under the limit)`,
        () => send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: inflatedWhole }),
      )
      assert.equal(whole.status, 422)
      assert.equal(whole.json.reason, 'truncated: no end record')

      const giant = await rowBomb(w, 1024)
      const over = await measured(
        server,
        `${dialect} package, bomb of rows ${(giant.length / 1024).toFixed(0)} KiB -> 1 GiB (limit ${INFLATED_LIMIT / MiB} MiB)`,
        () => send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: giant }),
      )
      assert.equal(over.status, 413)
      assert.equal(over.json.code, 'PayloadTooLarge')
      assert.match(String(over.json.detail), new RegExp(`${INFLATED_LIMIT}.*SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES`))
      assert.equal(await stagedPackages(w), 0)
      await assertServing(server, host, 'the bombs')
    })

    it('a large upload is staged and read back in constant memory: a 100 MiB package of incompressible rows, and 100 MiB of random bytes', async () => {
      const noise = randomBytes(100 * MiB)
      // Rows of 64 KiB of random base64 (incompressible): the whole body is stored, then inflated and read back line by line.
      const line = (pad: string) => Buffer.from(`{"type":"row","part":"sites","row":{"pad":"${pad}"}}\n`)
      const rows = Array.from({ length: 1600 }, (_, i) => line(noise.subarray(i * 48 * 1024, (i + 1) * 48 * 1024).toString('base64')))
      const incompressible = await gzipOf([Buffer.from(headerLine(w)), ...rows])
      const large = await measured(server, `${dialect} package, ${(incompressible.length / MiB).toFixed(0)} MiB of incompressible rows`, () =>
        send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: incompressible }),
      )
      assert.equal(large.status, 422)
      assert.equal(large.json.reason, 'truncated: no end record')
      const random = await measured(server, `${dialect} package, 100 MiB of random bytes`, () =>
        send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: noise }),
      )
      assert.equal(random.status, 422)
      assert.equal(random.json.code, 'PackageInvalid')
      assert.equal(await stagedPackages(w), 0)
      await assertServing(server, host, 'the large uploads')
    })

    it('a package sent as JSON, as another type, without a body or with a content encoding answers 415 naming the accepted types', async () => {
      const cases: Array<[string, Record<string, string>, string | undefined]> = [
        ['application/json {"a":1}', { 'content-type': 'application/json' }, '{"a":1}'],
        ['application/json, broken', { 'content-type': 'application/json' }, '{"a":'],
        ['text/plain', { 'content-type': 'text/plain' }, 'hello'],
        ['no body', {}, undefined],
        ['Content-Encoding br', { 'content-type': 'application/gzip', 'content-encoding': 'br' }, 'x'],
      ]
      for (const [label, headers, body] of cases) {
        const answer = await send(server, packagePath(), { method: 'PUT', headers: { ...host, ...headers }, body })
        assert.equal(answer.status, 415, label)
        assert.equal(answer.json.code, 'UnsupportedMediaType', label)
        assert.deepEqual(answer.json.acceptedTypes, ['application/gzip', 'application/octet-stream'], label)
      }
      const empty = await send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: '' })
      assert.equal(empty.status, 422)
      assert.equal(empty.json.code, 'PackageInvalid')
      await assertServing(server, host, 'the wrong content types')
    })

    it('an import (forced or not, or a dry run) that would break a unique rule answers 409 naming both records, and writes nothing', async () => {
      const db = w.handle.db
      const now = Date.now()
      const importing = async (query: string) => {
        const staged = await send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: exported })
        assert.equal(staged.status, 200)
        return send(server, `/api/admin/orgs/${w.slug}/tenant/import${query}`, { method: 'POST', headers: host })
      }
      let exported: Buffer = Buffer.alloc(0)
      const exportNow = async () => {
        exported = (await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })).body
      }
      const assertRefused = async (expected: Record<string, unknown>) => {
        for (const query of ['?force=true', '', '?dryRun=true&force=true']) {
          const answer = await importing(query)
          assert.equal(answer.status, 409, `${String(expected.part)} ${query}: ${JSON.stringify(answer.json)}`)
          assert.equal(answer.json.code, 'Conflict')
          assert.deepEqual((answer.json.uniqueConflicts as unknown[])[0], expected, query)
        }
      }
      const other = await createOrgsService({ handle: w.handle, clock: systemClock }).provision('uploads-other')

      // controllers: (site, asset number). The package's plc-1 has A-1; here plc-2 holds A-1 and plc-1 has moved to A-9.
      await exportNow()
      await sql`update controllers set asset_number = 'A-9' where org_id = ${w.orgId} and id = 'plc-1'`.execute(db)
      await sql`insert into controllers (org_id, site_code, id, platform, asset_number, protocol, ip_address, poll_interval_ms, timeout_ms, retry_delay_ms, max_retries, created_at, updated_at)
        values (${w.orgId}, ${HISTORIAN_SITE}, 'plc-2', 0, 'A-1', 'cip', '10.0.0.2', 1000, 5000, 5000, 3, ${now}, ${now})`.execute(db)
      await assertRefused({
        part: 'controllers',
        values: { site_code: HISTORIAN_SITE, asset_number: 'A-1' },
        record: { site_code: HISTORIAN_SITE, id: 'plc-1' },
        heldBy: { site_code: HISTORIAN_SITE, id: 'plc-2' },
        heldIn: 'this organisation',
      })
      const { rows: controllers } = await sql<{
        id: string
        asset_number: string
      }>`select id, asset_number from controllers where org_id = ${w.orgId} order by id`.execute(db)
      assert.deepEqual(
        controllers,
        [
          { id: 'plc-1', asset_number: 'A-9' },
          { id: 'plc-2', asset_number: 'A-1' },
        ],
        'nothing written',
      )
      await sql`delete from controllers where org_id = ${w.orgId} and id = 'plc-2'`.execute(db)

      // The same rule inside the package: a crafted package (checksums recomputed) gives plc-3 the asset number of plc-1.
      exported = await withExtraRow(exported, 'controllers', (row) => row.id === 'plc-1' && { ...row, id: 'plc-3' })
      await assertRefused({
        part: 'controllers',
        values: { site_code: HISTORIAN_SITE, asset_number: 'A-1' },
        record: { site_code: HISTORIAN_SITE, id: 'plc-3' },
        heldBy: { site_code: HISTORIAN_SITE, id: 'plc-1' },
        heldIn: 'the package',
      })
      await sql`update controllers set asset_number = 'A-1' where org_id = ${w.orgId} and id = 'plc-1'`.execute(db)

      // alarms: one open alarm per (site, instance and condition). The package's al-1 is open; here al-2 is, al-1 closed.
      const alarm = (id: string, key: string | null) =>
        sql`insert into alarms (org_id, site_code, id, instance_id, condition, priority, state, is_active, is_acknowledged, is_out_of_service, active_key, activation_count, raised_at, last_event_at, changed_at, created_at, version)
        values (${w.orgId}, ${HISTORIAN_SITE}, ${id}, 'ins_pump', 'HI', 'high', 'active_unacknowledged', 1, 0, 0, ${key}, 1, ${now}, ${now}, ${now}, ${now}, 1)`.execute(
          db,
        )
      await alarm('al-1', '8:ins_pumpHI')
      await exportNow()
      await sql`update alarms set active_key = null, state = 'normal', is_active = 0, is_acknowledged = 1 where org_id = ${w.orgId} and id = 'al-1'`.execute(db)
      await alarm('al-2', '8:ins_pumpHI')
      await assertRefused({
        part: 'alarms',
        values: { site_code: HISTORIAN_SITE, active_key: '8:ins_pumpHI' },
        record: { site_code: HISTORIAN_SITE, id: 'al-1' },
        heldBy: { site_code: HISTORIAN_SITE, id: 'al-2' },
        heldIn: 'this organisation',
      })
      await sql`delete from alarms where org_id = ${w.orgId}`.execute(db)

      // domain_bindings: a domain serves one organisation. The package binds plant.example.com; here another organisation holds it.
      await sql`insert into domain_bindings (org_id, domain, is_enabled, created_at, updated_at, created_by) values (${w.orgId}, 'plant.example.com', 0, ${now}, ${now}, 'test')`.execute(
        db,
      )
      await exportNow()
      await sql`delete from domain_bindings where org_id = ${w.orgId}`.execute(db)
      await sql`insert into domain_bindings (org_id, domain, is_enabled, created_at, updated_at, created_by) values (${other.id}, 'plant.example.com', 0, ${now}, ${now}, 'test')`.execute(
        db,
      )
      const taken = await importing('?force=true')
      assert.equal(taken.status, 409, JSON.stringify(taken.json))
      assert.deepEqual((taken.json.uniqueConflicts as unknown[])[0], {
        part: 'domain_bindings',
        values: { domain: 'plant.example.com' },
        record: { domain: 'plant.example.com' },
        heldBy: null,
        heldIn: 'another organisation',
      })
      const { rows: bindings } = await sql<{ org_id: string }>`select org_id from domain_bindings where domain = 'plant.example.com'`.execute(db)
      assert.deepEqual(
        bindings.map((b) => b.org_id),
        [other.id],
        'nothing written',
      )
      await sql`delete from domain_bindings where domain = 'plant.example.com'`.execute(db)

      // api_keys: the verifier is unique across organisations; a moved key's placeholder is `moved:` + its id.
      const key = (org: string, id: string, verifier: string) =>
        sql`insert into api_keys (org_id, id, prefix, verifier, role, name, created_by_kind, created_by_user_id, created_at, expires_at)
        values (${org}, ${id}, 'csk_x', ${verifier}, 'viewer', 'moved', 'cli', 'test', ${now}, ${now + 86_400_000})`.execute(db)
      await key(w.orgId, 'key-moved', randomBytes(32).toString('hex'))
      await exportNow()
      await sql`delete from api_keys where id = 'key-moved'`.execute(db)
      await key(other.id, 'key-other', 'moved:key-moved')
      const verifier = await importing('?force=true')
      assert.equal(verifier.status, 409, JSON.stringify(verifier.json))
      assert.deepEqual((verifier.json.uniqueConflicts as unknown[])[0], {
        part: 'api_keys',
        values: { verifier: 'moved:key-moved' },
        record: { id: 'key-moved' },
        heldBy: null,
        heldIn: 'another organisation',
      })
      const { rows: keys } = await sql<{ n: number }>`select count(*) as n from api_keys where org_id = ${w.orgId} and id = 'key-moved'`.execute(db)
      assert.equal(Number(keys[0]!.n), 0, 'nothing written')
      await sql`delete from api_keys where id = 'key-other'`.execute(db)

      await exportNow()
      const clean = await importing('?force=true')
      assert.equal(clean.status, 200, 'the organisation as it is imports over itself')
      await assertServing(server, host, 'the unique rules')
    })

    it('a crafted package whose row breaks a foreign-key or not-null rule answers 422 PackageInvalid naming the part and the rule, nothing written', async () => {
      const pkgNow = (await rawRequest(`${server.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })).body
      const controllers = async () =>
        Number((await sql<{ n: number }>`select count(*) as n from controllers where org_id = ${w.orgId}`.execute(w.handle.db)).rows[0]!.n)
      const before = await controllers()
      const cases: Array<[string, (row: Row) => Row | false]> = [
        ['foreign key', (row) => row.id === 'plc-1' && { ...row, id: 'plc-x', asset_number: 'A-x', site_code: 'nowhere' }],
        ['not null', (row) => row.id === 'plc-1' && { ...row, id: 'plc-y', asset_number: 'A-y', ip_address: null }],
      ]
      for (const [rule, extra] of cases) {
        const crafted = await withExtraRow(pkgNow, 'controllers', extra)
        assert.equal(
          (await send(server, packagePath(), { method: 'PUT', headers: { ...host, 'content-type': 'application/gzip' }, body: crafted })).status,
          200,
        )
        const answer = await send(server, `/api/admin/orgs/${w.slug}/tenant/import?force=true`, { method: 'POST', headers: host })
        assert.equal(answer.status, 422, `${rule}: ${JSON.stringify(answer.json)}`)
        assert.equal(answer.json.code, 'PackageInvalid')
        // A NULL in a NOT NULL column is refused by the value check before the write, naming the row and column (issue 24).
        if (rule === 'not null')
          assert.match(String(answer.json.reason), /^row \d+ of part controllers: ip_address breaks a not null rule of this server's table$/)
        else assert.equal(answer.json.reason, `a row of part controllers breaks a ${rule} rule of this server's table`)
        assert.equal(await controllers(), before, `${rule}: nothing written`)
      }
    })

    it('sitegrid tenant import (the same reader, offline) refuses a corrupt package, a bomb and a package past the inflated-size limit with the problem code, exit 1', async () => {
      const corrupt = gzipSync(Buffer.from(`${headerLine(w)}this is not JSON\n${randomBytes(3 * MiB).toString('base64')}\n`))
      corrupt[corrupt.length - 8]! ^= 0xff
      writeFileSync(join(w.cwd, 'corrupt.jsonl.gz'), corrupt)
      writeFileSync(join(w.cwd, 'zeros.jsonl.gz'), await gzipOf(repeated(Buffer.alloc(MiB), 256)))
      writeFileSync(join(w.cwd, 'export.jsonl.gz'), pkg)
      const cases = [
        ['corrupt.jsonl.gz', 'PackageInvalid', {}],
        ['zeros.jsonl.gz', 'PackageInvalid', {}],
        ['export.jsonl.gz', 'PayloadTooLarge', { SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES: '1024' }],
      ] as const
      for (const [file, code, env] of cases) {
        const run = runCli(['tenant', 'import', w.slug, file, '--force'], { cwd: w.cwd, env: { ...w.env, ...env } })
        assert.equal(run.code, 1, `${file}: ${run.stderr}`)
        assert.match(run.stderr, new RegExp(`^sitegrid tenant import: ${code}: `, 'm'), file) // after its progress lines
        assert.doesNotMatch(run.stderr, /incorrect data check|\n\s+at /, `${file}: no unhandled error`)
      }
    })

    it('the other uploads (historian form, instance CSV, streamed network) answer truncated, corrupted and dropped bodies without a 5xx, and the server lives on', async () => {
      const boundary = 'uploadsboundary'
      const part = (name: string, value: string, filename?: string) =>
        `--${boundary}\r\ncontent-disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`
      const form = (trend: string | Buffer) =>
        Buffer.concat([
          Buffer.from(
            part('site_id', HISTORIAN_SITE) +
              part('format', 'long') +
              part('mapping_csv', 'historian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_pump,q\n', 'm.csv'),
          ),
          Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="trend_csv"; filename="t.csv"\r\n\r\ntimestamp,tag,value\n`),
          Buffer.from(trend),
        ])
      const historian = { ...host, 'content-type': `multipart/form-data; boundary=${boundary}` }
      const rows = trendRows(20_000, Date.UTC(2024, 0, 1))
      const uploads: Array<[string, string, Record<string, string>, Buffer]> = [
        ['historian form, truncated (no closing boundary)', '/api/historian/import-batches', historian, form(rows.slice(0, rows.length / 2))],
        [
          'historian form, corrupted (random bytes)',
          '/api/historian/import-batches',
          historian,
          Buffer.concat([form(randomBytes(MiB)), Buffer.from(`\r\n--${boundary}--\r\n`)]),
        ],
        [
          'instance CSV, truncated inside a quote',
          `/api/sites/${HISTORIAN_SITE}/instances/bulk`,
          { ...host, 'content-type': 'text/csv' },
          Buffer.from('id,name,typeId,controllerId\nins_a,"pump'),
        ],
        [
          'instance CSV, corrupted (random bytes)',
          `/api/sites/${HISTORIAN_SITE}/instances/bulk`,
          { ...host, 'content-type': 'text/csv' },
          randomBytes(512 * 1024),
        ],
        [
          'network JSON, truncated',
          `/api/sites/${HISTORIAN_SITE}/electrical/network`,
          { ...host, 'content-type': 'application/json' },
          Buffer.from('{"nodes":[{"id":"n1","name":"bus","nodeType":"bus"'),
        ],
        [
          'network JSON, corrupted (random bytes)',
          `/api/sites/${HISTORIAN_SITE}/electrical/network`,
          { ...host, 'content-type': 'application/json' },
          Buffer.concat([Buffer.from('{"nodes":['), randomBytes(MiB)]),
        ],
      ]
      for (const [label, path, headers, body] of uploads) {
        const method = path.endsWith('/network') ? 'PUT' : 'POST'
        const answer = await measured(server, `${dialect} ${label}`, () => send(server, path, { method, headers, body }))
        console.log(`# ${dialect} ${label}: ${answer.status} ${String(answer.json.code ?? answer.json.status ?? '')}`)
        // A historian file of random bytes is read as rows and each one rejected with its reason (201, nothing stored).
        assert.ok(
          answer.status < 500 && (answer.status >= 400 || label.startsWith('historian form, corrupted')),
          `${label}: ${answer.status} ${String(answer.json.code)}`,
        )
        await measured(server, `${dialect} ${label}, connection dropped mid-body`, () =>
          abortedUpload(server, path, { ...headers, 'x-method': method }, body.subarray(0, Math.floor(body.length / 2)), body.length + 1000),
        )
      }
      await assertServing(server, host, 'the other uploads')
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}, cloud mode: the fleet link's bodies under corruption, truncation, content encodings and replay (issue 26)`, () => {
    it('truncated, corrupted, compressed (gzip, deflate, a gzip bomb) and dropped bodies of the push, a historian chunk, the heartbeat and the enrolment answer their 4xx problem and change no row; a replayed push applies nothing twice; the server serves on', async (t) => {
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: 'cloud' })
      const tenant = await seedTenant(h, 'UL')
      const link = tenant.link!
      await h.app.listen({ host: '127.0.0.1', port: 0 })
      const { port } = h.app.server.address() as { port: number }
      const server = { url: `http://127.0.0.1:${port}` } as Server
      const host = { host: `${tenant.org.slug}.localhost` }
      const json = { ...host, authorization: `Bearer ${link.credential}`, ...LINK_HEADERS, 'content-type': 'application/json' }
      const at = h.clock.now()
      const instance = `UL-LCV-1` // the linked site's instance (test/support/fleet-link.ts seedCloudLink)
      const changes = Array.from({ length: 500 }, (_, i) => ({
        seq: 4 + i,
        tx: 0,
        table: 'alarm_events',
        site: link.site,
        key: [link.site, `UL-up-${i}`],
        op: 'upsert',
        row: linkedAlarmEvent(tenant.org.id, link.site, instance, `UL-up-${i}`, at),
        base: null,
        origin: '',
        at,
      }))
      const push = Buffer.from(JSON.stringify({ epoch: link.epoch, after: { tx: 0, seq: 3 }, changes }))
      const samples: Array<[string, string, number, number, null, number]> = Array.from({ length: 2000 }, (_, i) => [
        instance,
        'speed',
        at - i * 1000,
        i / 10,
        null,
        192,
      ])
      samples.sort((a, b) => a[2] - b[2])
      const chunk = Buffer.from(JSON.stringify({ site: link.site, samples, sha256: chunkDigest(samples) }))
      const otherDigest = Buffer.from(JSON.stringify({ site: link.site, samples, sha256: chunkDigest(samples.slice(1)) }))
      const beat = Buffer.from(
        JSON.stringify({ state: 'online', lastError: null, backlog: { items: 0, bytes: 0, oldestAt: null }, pulledTo: { tx: 0, seq: 0 } }),
      )
      const enrol = Buffer.from(JSON.stringify({ code: `sle_${'A'.repeat(32)}`, orgId: null, protocol: 1, schema: 'x' }))
      const chunkPath = `/api/link/historian/${link.batch}/chunks/3`
      const corrupt = (body: Buffer) => Buffer.concat([body.subarray(0, 200), randomBytes(256 * 1024)])
      // 128 MiB of JSON whitespace, gzip-compressed to about 128 KiB: twice the push's limit once inflated.
      const bomb = await gzipOf([Buffer.from('{"epoch":"e","after":0,"changes":[]'), ...repeated(Buffer.alloc(MiB, 0x20), 128), Buffer.from('}')])
      const cases: Array<[string, string, string, Record<string, string>, Buffer, number, string]> = [
        ['push, truncated', 'POST', '/api/link/push', json, push.subarray(0, push.length / 2), 400, 'MalformedBody'],
        ['push, corrupted (random bytes)', 'POST', '/api/link/push', json, corrupt(push), 400, 'MalformedBody'],
        ['push, gzip-encoded', 'POST', '/api/link/push', { ...json, 'content-encoding': 'gzip' }, gzipSync(push), 415, 'UnsupportedMediaType'],
        ['push, deflate-encoded', 'POST', '/api/link/push', { ...json, 'content-encoding': 'deflate' }, deflateSync(push), 415, 'UnsupportedMediaType'],
        ['push, a gzip bomb (128 MiB inflated)', 'POST', '/api/link/push', { ...json, 'content-encoding': 'gzip' }, bomb, 415, 'UnsupportedMediaType'],
        ['historian chunk, truncated', 'PUT', chunkPath, json, chunk.subarray(0, chunk.length - 100), 400, 'MalformedBody'],
        ['historian chunk, corrupted (random bytes)', 'PUT', chunkPath, json, corrupt(chunk), 400, 'MalformedBody'],
        ['historian chunk, a digest of other samples', 'PUT', chunkPath, json, otherDigest, 400, 'LinkChecksumMismatch'],
        ['historian chunk, gzip-encoded', 'PUT', chunkPath, { ...json, 'content-encoding': 'gzip' }, gzipSync(chunk), 415, 'UnsupportedMediaType'],
        ['heartbeat, truncated', 'PUT', '/api/link/heartbeat', json, beat.subarray(0, 30), 400, 'MalformedBody'],
        [
          'enrolment, corrupted (random bytes)',
          'POST',
          '/api/link/enrol',
          { ...host, 'content-type': 'application/json' },
          corrupt(enrol),
          400,
          'MalformedBody',
        ],
      ]
      const counts = await linkTableCounts(h.handle.db, tenant.org.id)
      const before = await snapshotOrg(h, tenant.org.id)
      const mismatches: string[] = []
      for (const [label, method, path, headers, body, status, code] of cases) {
        const res = await rawRequest(`${server.url}${path}`, { method, headers, body })
        const text = res.body.toString('utf8')
        const problem = text.startsWith('{') ? (JSON.parse(text) as { code?: string; detail?: string }) : {}
        console.log(`# ${dialect} link ${label}: ${res.status} ${problem.code ?? ''} ${String(problem.detail ?? '').slice(0, 160)}`)
        if (res.status !== status || (code && problem.code !== code)) mismatches.push(`${label}: ${res.status} ${text.slice(0, 300)}`)
        // The same body cut off by the client half-way: the server must not act on what it read.
        await abortedUpload(server, path, { ...headers, 'x-method': method }, body.subarray(0, Math.floor(body.length / 2)), body.length + 1000)
      }
      assert.deepEqual(mismatches, [], 'each bad body answers its problem')
      assert.deepEqual(await linkTableCounts(h.handle.db, tenant.org.id), counts, "the link's and the historian's row counts")
      assert.deepEqual(snapshotDiff(before, await snapshotOrg(h, tenant.org.id)), [], 'no row changed')

      // The whole push, then the same again (a retry whose answer was lost): applied once.
      const first = await rawRequest(`${server.url}/api/link/push`, { method: 'POST', headers: json, body: push })
      assert.equal(first.status, 200, first.body.toString('utf8').slice(0, 300))
      assert.deepEqual(JSON.parse(first.body.toString('utf8')), { mark: { epoch: link.epoch, tx: 0, seq: 503 }, applied: 500, skipped: 0, conflicts: 0 })
      const afterFirst = await linkTableCounts(h.handle.db, tenant.org.id)
      const replay = await rawRequest(`${server.url}/api/link/push`, { method: 'POST', headers: json, body: push })
      assert.equal(replay.status, 200)
      assert.deepEqual(JSON.parse(replay.body.toString('utf8')), { mark: { epoch: link.epoch, tx: 0, seq: 503 }, applied: 0, skipped: 500, conflicts: 0 })
      assert.deepEqual(await linkTableCounts(h.handle.db, tenant.org.id), afterFirst, 'the replay wrote nothing')
      const events = await h.handle.db
        .selectFrom('alarm_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', tenant.org.id)
        .where('event_id', 'like', 'UL-up-%')
        .executeTakeFirstOrThrow()
      assert.equal(Number(events.n), 500)
      // Still serving the link.
      assert.equal((await rawRequest(`${server.url}/api/link/pull?tx=0&seq=0&limit=1`, { headers: json })).status, 200)
    })
  })
}
