// Helpers for the historian route tests (not imported by production code).
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import { after, before, type TestContext } from 'node:test'
import { harness, type Credential, type Harness, type TestDialect } from '../../../test/harness.ts'
import { seedPlant } from '../../../test/support/historian-upload.ts'
import { parseAll } from './parse/index.ts'
import type { FormatName } from './parse/index.ts'

export const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/historian/', import.meta.url))
export const fixture = (name: string) => readFileSync(FIXTURES + name)

export type Part = { name: string; value: string } | { name: string; filename: string; content: Buffer | string }

/** A multipart/form-data body, parts in the given order. */
export function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----sitegrid${randomBytes(8).toString('hex')}`
  const chunks: Buffer[] = []
  for (const p of parts) {
    if ('value' in p) {
      chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`))
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\ncontent-type: text/csv\r\n\r\n`))
      chunks.push(Buffer.isBuffer(p.content) ? p.content : Buffer.from(p.content))
      chunks.push(Buffer.from('\r\n'))
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

export interface Plant {
  owner: Credential
  member: Credential
  siteCode: string
}

/** An organisation with an owner and a member key, a site in `timeZone` and instances with the given ids. */
export async function plant(h: Harness, options: { timeZone?: string; instances?: string[] } = {}): Promise<Plant> {
  const { org, key } = await h.orgWithKey('owner')
  const member = await h.mintKey(org, 'member')
  const owner = { org, apiKey: key }
  const siteCode = 'plant-1'
  const created = await h.inject(owner, {
    method: 'POST',
    url: '/api/sites',
    payload: { code: siteCode, name: 'Plant 1', timeZone: options.timeZone ?? 'UTC' },
  })
  if (created.statusCode !== 201) throw new Error(`site: ${created.statusCode} ${created.body}`)
  // Controllers and instances are written directly: their own routes are tested in their modules.
  const instances = (options.instances ?? ['ins_boiler1', 'ins_vav203', 'ins_furnace', 'ins_pump', 'ins_motor']).map((id) => ({ id }))
  await seedPlant(h.handle.db, org.id, { siteCode, siteExists: true, instances, at: h.clock.now() })
  return { owner, member: { org, apiKey: member.plaintext }, siteCode }
}

/**
 * POSTs an upload: fields first, then mapping_csv, then trend_csv (the streaming order) unless `parts` says otherwise.
 * The body arrives whole unless `pieceBytes` cuts it into pieces as a network would (the import then writes a large
 * file in several transactions instead of one).
 */
/** A plant at `now` whose instances ins_pump and ins_motor map the tags `speed` and `state` (live pushes, issue 30). */
export async function livePlant(h: Harness, now: number): Promise<Plant> {
  h.clock.set(now)
  const p = await plant(h)
  await h.handle.db
    .updateTable('instances')
    .set({ tag_mappings: JSON.stringify({ speed: 'N7:0', state: 'N7:1' }), tag_count: 2 })
    .where('org_id', '=', p.owner.org.id)
    .where('id', 'in', ['ins_pump', 'ins_motor'])
    .execute()
  return p
}

export function upload(h: Harness, credential: Credential, parts: Part[], options: { pieceBytes?: number } = {}) {
  const body = multipart(parts)
  const { pieceBytes } = options
  const pieces = function* () {
    for (let at = 0; at < body.payload.length; at += pieceBytes!) yield body.payload.subarray(at, at + pieceBytes!)
  }
  const payload = pieceBytes === undefined ? body.payload : Readable.from(pieces())
  return h.inject(credential, { method: 'POST', url: '/api/historian/import-batches', payload, headers: body.headers })
}

export function standardParts(siteCode: string, format: string, trend: Buffer | string, mapping: Buffer | string, extra: Record<string, string> = {}): Part[] {
  return [
    { name: 'site_id', value: siteCode },
    { name: 'format', value: format },
    ...Object.entries(extra).map(([name, value]) => ({ name, value })),
    { name: 'mapping_csv', filename: 'mapping.csv', content: mapping },
    { name: 'trend_csv', filename: 'trend.csv', content: trend },
  ]
}

export async function sampleCount(h: Harness, orgId: string): Promise<number> {
  const row = await h.handle.db
    .selectFrom('historian_points')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function batchCount(h: Harness, orgId: string): Promise<number> {
  const row = await h.handle.db
    .selectFrom('historian_batches')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

const csvCell = (s: string) => (/[",;\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)

/** A mapping sending every tag of the fixture to ins_boiler1, tag keys t0, t1, … in order of first appearance. */
export async function mappingFor(name: string, format: FormatName): Promise<{ csv: string; tags: string[]; samples: Awaited<ReturnType<typeof parseAll>> }> {
  const parsed = await parseAll([fixture(name)], { format })
  const tags = [...new Set(parsed.samples.map((s) => s.tag))]
  return { csv: `historian_tag,instance_id,tag_key\n${tags.map((t, i) => `${csvCell(t)},ins_boiler1,t${i}`).join('\n')}\n`, tags, samples: parsed }
}

export async function series(h: Harness, p: Plant, query: string) {
  const res = await h.inject(p.member, { method: 'GET', url: `/api/sites/${p.siteCode}/historian/series?${query}` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as {
    samples: Array<{ ts: string; value: number | null; text: string | null; quality: string }>
    buckets: Array<Record<string, unknown>>
    nextCursor: string | null
  }
}

export async function assertNothingStored(h: Harness, p: Plant) {
  assert.equal(await sampleCount(h, p.owner.org.id), 0)
  assert.equal(await batchCount(h, p.owner.org.id), 0)
}

/**
 * One application per describe block (the machine is shared; building one per test dominates the run). Tests still
 * share no rows: each makes its own organisation with `plant`.
 */
export function sharedHarness(dialect: TestDialect, env: Record<string, string> = {}): () => Harness {
  let h: Harness | undefined
  const cleanups: Array<() => unknown> = []
  before(async () => {
    h = await harness(
      {
        after: (fn: () => unknown) => {
          cleanups.push(fn)
        },
      } as unknown as TestContext,
      dialect,
      env,
    )
  })
  after(async () => {
    for (const fn of cleanups.reverse()) await fn()
  })
  return () => h!
}
