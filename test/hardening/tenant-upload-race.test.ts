// Two uploads of one organisation's tenant package at once, and an upload during an import, on real server
// processes: two `sitegrid serve` on one PostgreSQL (a cell; each upload to its own process), one on SQLite. The
// bodies are written in paced pieces so that the requests overlap for real: each piece is a chunk statement of its
// own on the server, as a slow network gives. In-process, 20 concurrent uploads never interleaved.
// The rule (README, Tenant export and import): a later upload replaces an earlier one whole; the earlier answers 409
// and nothing of it stays; an import applies the package staged when it began and takes it away with its own
// transaction, so an upload that starts meanwhile is staged whole after it.
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { sleep, testDialects, type TestDialect } from '../harness.ts'
import { startServer, type Server } from '../cli/process.ts'
import { withSystemScope } from '../../src/db/tenant-scope.ts'
import { repack, unpack } from '../support/tenant-package.ts'
import { processWorld, rawRequest, type ProcessWorld } from './process-support.ts'

const PIECES = 12

interface Cell {
  w: ProcessWorld
  servers: Server[]
  host: Record<string, string>
}

async function startCell(t: TestContext, dialect: TestDialect): Promise<Cell> {
  const w = await processWorld(t, dialect, 'racing', { SITEGRID_MODE: dialect === 'postgres' ? 'cloud' : 'site' })
  const servers = await Promise.all(Array.from({ length: dialect === 'postgres' ? 2 : 1 }, () => startServer({ cwd: w.cwd, env: w.env })))
  t.after(async () => {
    for (const s of servers) await s.stop()
  })
  return { w, servers, host: { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey } }
}

/** A package of the organisation holding `count` sites `{prefix}-00000`…, made from an export of one real site. */
async function sitesPackage(cell: Cell, prefix: string, count: number): Promise<Buffer> {
  const { w, servers, host } = cell
  const made = await rawRequest(`${servers[0]!.url}/api/sites`, {
    method: 'POST',
    headers: { ...host, 'content-type': 'application/json' },
    body: JSON.stringify({ code: `${prefix}-template`, name: 'Template', timeZone: 'UTC' }),
  })
  assert.equal(made.status, 201, made.body.toString())
  const exported = await rawRequest(`${servers[0]!.url}/api/admin/orgs/${w.slug}/tenant/export`, { headers: host })
  assert.equal(exported.status, 200)
  await w.handle.db.deleteFrom('sites').where('org_id', '=', w.orgId).where('code', '=', `${prefix}-template`).execute()
  const { header, parts } = unpack(exported.body)
  const template = parts.get('sites')!.find((s) => s.code === `${prefix}-template`)!
  const sites = Array.from({ length: count }, (_, i) => ({ ...template, code: `${prefix}-${String(i).padStart(5, '0')}`, name: `Site ${prefix} ${i}` }))
  return repack(header, new Map([...[...parts].map(([part, rows]) => [part, part === 'sites' ? sites : rows] as const)]))
}

/** PUT …/tenant/import/package with the body written in PIECES pieces, `paceMs` apart; resolves with the answer. */
function pacedUpload(server: Server, cell: Cell, body: Buffer, paceMs: number): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/api/admin/orgs/${cell.w.slug}/tenant/import/package`, {
      method: 'PUT',
      headers: { ...cell.host, 'content-type': 'application/gzip' },
    })
    let answered = false
    // A refusal may come while pieces are still being written; the connection it closes is not a failure of the test.
    req.on('error', (err) => {
      if (!answered) reject(err)
    })
    req.on('response', (res) => {
      answered = true
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {}, text }))
    })
    void (async () => {
      const size = Math.ceil(body.length / PIECES)
      for (let i = 0; i < PIECES; i++) {
        if (answered || req.destroyed) break
        req.write(body.subarray(i * size, (i + 1) * size))
        await sleep(paceMs)
      }
      if (!req.destroyed) req.end()
    })()
  })
}

async function siteCodes(w: ProcessWorld, prefix: string): Promise<number> {
  const row = await w.handle.db
    .selectFrom('sites')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', w.orgId)
    .where('code', 'like', `${prefix}-%`)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function stagedRows(w: ProcessWorld): Promise<{ packages: number; chunks: number }> {
  const count = async (table: string) =>
    Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where org_id = ${w.orgId}`.execute(w.handle.db)).rows[0]!.n)
  return { packages: await count('tenant_import_packages'), chunks: await count('tenant_import_chunks') }
}

/**
 * Resolves once the import's transaction holds the staged package — on PostgreSQL its row FOR UPDATE (a probe's
 * `for update nowait` is refused), on SQLite the write lock (a probe's `begin immediate` without waiting is busy), three
 * probes in a row — so that the upload sent next begins during the import however slow the machine.
 */
async function importHolds(cell: Cell, dialect: TestDialect): Promise<void> {
  const { w } = cell
  const probe = dialect === 'sqlite' ? new BetterSqlite3(w.databaseUrl.slice('sqlite:'.length), { timeout: 0 }) : undefined
  const held = async (): Promise<boolean> => {
    try {
      if (probe) {
        probe.exec('begin immediate')
        probe.exec('rollback')
      } else
        await withSystemScope(() =>
          w.handle.db.transaction().execute((trx) => sql`select 1 from tenant_import_packages where org_id = ${w.orgId} for update nowait`.execute(trx)),
        )
      return false
    } catch (err) {
      if ((err as { code?: string }).code === (probe ? 'SQLITE_BUSY' : '55P03')) return true
      throw err
    }
  }
  try {
    const deadline = Date.now() + 20_000
    for (let inARow = 0; inARow < 3; inARow = (await held()) ? inARow + 1 : 0) {
      if (Date.now() > deadline) throw new Error('the import did not take the staged package within 20 s')
      await sleep(10)
    }
  } finally {
    probe?.close()
  }
}

const applyStaged = (server: Server, cell: Cell) =>
  rawRequest(`${server.url}/api/admin/orgs/${cell.w.slug}/tenant/import?force=true`, { method: 'POST', headers: cell.host })

for (const dialect of testDialects()) {
  describe(`${dialect}: two uploads of one tenant package at once (${dialect === 'postgres' ? 'two processes' : 'one process'})`, () => {
    it('a later upload replaces one still arriving: the earlier answers 409 Conflict, the later 200, and its import applies it alone', async (t) => {
      const cell = await startCell(t, dialect)
      const [early, late] = [await sitesPackage(cell, 'early', 300), await sitesPackage(cell, 'late', 300)]
      const last = cell.servers[cell.servers.length - 1]!
      // The earlier upload's pieces go on arriving for ~0.6 s after the later one began.
      const first = pacedUpload(cell.servers[0]!, cell, early, 80)
      await sleep(250)
      const second = pacedUpload(last, cell, late, 60)
      const [a, b] = await Promise.all([first, second])
      assert.equal(b.status, 200, b.text)
      assert.equal(a.status, 409, a.text)
      assert.equal(a.json.code, 'Conflict')
      assert.equal(a.json.reason, 'replaced by a later upload')
      assert.equal((b.json.counts as Record<string, number>).sites, 300)
      const applied = await applyStaged(cell.servers[0]!, cell)
      assert.equal(applied.status, 200, applied.body.toString())
      assert.deepEqual([await siteCodes(cell.w, 'early'), await siteCodes(cell.w, 'late')], [0, 300])
      assert.deepEqual(await stagedRows(cell.w), { packages: 0, chunks: 0 }, 'the applied package is dropped')
    })

    it('an upload that begins while an import applies is staged whole after it: the import applies its own package, then the upload its own', async (t) => {
      const cell = await startCell(t, dialect)
      const [big, next] = [await sitesPackage(cell, 'big', 6000), await sitesPackage(cell, 'next', 300)]
      const last = cell.servers[cell.servers.length - 1]!
      const staged = await pacedUpload(cell.servers[0]!, cell, big, 0)
      assert.equal(staged.status, 200, staged.text)
      const began = Date.now()
      const importing = applyStaged(cell.servers[0]!, cell).then((answer) => ({ ...answer, ms: Date.now() - began }))
      await importHolds(cell, dialect)
      const upload = pacedUpload(last, cell, next, 60)
      const [applied, uploaded] = await Promise.all([importing, upload])
      t.diagnostic(`${dialect}: the import answered after ${applied.ms} ms; the upload began once it held the staged package`)
      assert.equal(applied.status, 200, applied.body.toString())
      assert.equal(uploaded.status, 200, uploaded.text)
      assert.deepEqual([await siteCodes(cell.w, 'big'), await siteCodes(cell.w, 'next')], [6000, 0])
      const second = await applyStaged(last, cell)
      assert.equal(second.status, 200, second.body.toString())
      assert.deepEqual([await siteCodes(cell.w, 'big'), await siteCodes(cell.w, 'next')], [6000, 300])
      assert.deepEqual(await stagedRows(cell.w), { packages: 0, chunks: 0 })
    })
  })
}
