// Set-up shared by the tests that kill a server during a historian import (src/modules/historian/historian-kill.test.ts,
// test/hardening/crash.test.ts) and the fleet link's historian chunk tests: a site with one controller and its
// instances, a raw multipart upload that the test can leave open or finish, and the batch/sample counts read straight
// from the database.
import { request, type ClientRequest } from 'node:http'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/schema.ts'
import type { OrgId } from '../../src/ids.ts'
import { sleep } from '../harness.ts'
import type { Server } from '../cli/process.ts'

export const HISTORIAN_SITE = 'plant-1'

/** Site `plant-1`, controller `plc-1`, instance `ins_pump` (tags `A` and `B` map to its `p` and `q`), written directly. */
export async function seedHistorianSite(handle: DatabaseHandle, orgId: OrgId): Promise<void> {
  await seedPlant(handle.db, orgId, { siteCode: HISTORIAN_SITE, siteName: 'Plant 1', instances: [{ id: 'ins_pump', name: 'pump' }], at: Date.now() })
}

/**
 * A site with controller `plc-1` and these instances (asset numbers I-1, I-2, …), written directly: what a historian
 * import needs, in any database of the schema (a test's server, or a fleet test's site server). Times are `at`.
 * `siteExists`: the site was made already (through the API), only its controller and instances are written.
 */
export async function seedPlant(
  db: Db,
  orgId: string,
  o: { siteCode: string; siteName?: string; siteExists?: boolean; instances: ReadonlyArray<{ id: string; name?: string }>; at: number },
): Promise<void> {
  const now = o.at
  if (o.siteExists !== true)
    await db
      .insertInto('sites')
      .values({
        org_id: orgId,
        code: o.siteCode,
        name: o.siteName ?? o.siteCode,
        description: null,
        location: null,
        time_zone: 'UTC',
        status: 0,
        created_at: now,
        updated_at: now,
      })
      .execute()
  await db
    .insertInto('controllers')
    .values({
      org_id: orgId,
      site_code: o.siteCode,
      id: 'plc-1',
      name: null,
      platform: 0,
      firmware_version: null,
      asset_number: 'A-1',
      protocol: 'cip',
      ip_address: '10.0.0.1',
      port: null,
      cip_path: null,
      poll_interval_ms: 1000,
      timeout_ms: 5000,
      retry_delay_ms: 5000,
      max_retries: 3,
      edge_id: null,
      edge_plc_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute()
  for (const [i, instance] of o.instances.entries()) {
    await db
      .insertInto('instances')
      .values({
        org_id: orgId,
        site_code: o.siteCode,
        id: instance.id,
        name: instance.name ?? instance.id,
        type_id: 'generic',
        type_version: null,
        asset_number: `I-${i + 1}`,
        controller_id: 'plc-1',
        area: null,
        tag_mappings: '{}',
        tag_count: 0,
        config: '{}',
        created_at: now,
        updated_at: now,
      })
      .execute()
  }
}

/** startServer's own wait can be short on a loaded machine: wait (bounded) until /healthz answers. */
export async function waitHealthy(server: Server): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (server.child.exitCode !== null) throw new Error(`server exited: ${server.output()}`)
    try {
      if ((await fetch(`${server.url}/healthz`)).ok) return
    } catch {
      await sleep(100)
    }
  }
  throw new Error('server did not start')
}

export interface HistorianCounts {
  batches: Array<{ id: string; status: string; samples_stored: number }>
  samples: number
  /** Samples per batch id, as stored. */
  byBatch: Map<string, number>
}

export async function historianCounts(handle: DatabaseHandle, orgId: string): Promise<HistorianCounts> {
  const batches = await handle.db.selectFrom('historian_batches').select(['id', 'status', 'samples_stored']).where('org_id', '=', orgId).orderBy('id').execute()
  const grouped = await handle.db
    .selectFrom('historian_points')
    .select((eb) => ['batch_id', eb.fn.countAll<number>().as('n')])
    .where('org_id', '=', orgId)
    .groupBy('batch_id')
    .execute()
  const byBatch = new Map(grouped.map((g) => [g.batch_id, Number(g.n)]))
  return { batches, samples: [...byBatch.values()].reduce((a, b) => a + b, 0), byBatch }
}

/**
 * Long-format trend rows, one a second from `startMs`, for tags `A` and `B` in turn: two series, so that on
 * PostgreSQL both of the import's connections hold samples when the server is killed.
 */
export function trendRows(count: number, startMs: number): string {
  let rows = ''
  for (let i = 0; i < count; i++) rows += `${new Date(startMs + i * 1000).toISOString()},${i % 2 === 0 ? 'A' : 'B'},${i}\n`
  return rows
}

export interface Upload {
  req: ClientRequest
  /** Status and body so far (empty until the server answers). */
  answer(): string
  /** Resolves with the status once the answer ended, or 0 when the connection died first. */
  done: Promise<number>
  /** Ends the form of an upload started without `end` (after the test wrote further trend rows to `req`). */
  finish(): void
}

/**
 * Opens POST /api/historian/import-batches (format `long`) and writes the form up to the trend rows. With `end`,
 * the form is finished; without, the upload stalls open after the rows (until the test kills the server).
 */
export function startHistorianUpload(url: string, headers: Record<string, string>, rows: string, options: { end: boolean }): Upload {
  const boundary = 'killtestboundary'
  const req = request(`${url}/api/historian/import-batches`, {
    method: 'POST',
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
  })
  let answer = ''
  const done = new Promise<number>((resolve) => {
    req.on('error', () => resolve(0)) // the server dies under it
    req.on('response', (res) => {
      answer = `${res.statusCode} `
      res.on('data', (d) => {
        answer += String(d)
      })
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.on('error', () => resolve(0))
      res.on('aborted', () => resolve(0))
    })
  })
  const field = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  req.write(field('site_id', HISTORIAN_SITE) + field('format', 'long'))
  req.write(
    `--${boundary}\r\ncontent-disposition: form-data; name="mapping_csv"; filename="m.csv"\r\n\r\nhistorian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_pump,q\n\r\n`,
  )
  req.write(`--${boundary}\r\ncontent-disposition: form-data; name="trend_csv"; filename="t.csv"\r\n\r\ntimestamp,tag,value\n`)
  req.write(rows)
  const finish = () => {
    req.end(`\r\n--${boundary}--\r\n`)
  }
  if (options.end) finish()
  return { req, answer: () => answer, done, finish }
}
