// Issue 24, defect 1 (the export's half): a database failure in the middle of an export reaches whoever reads the
// package (the reply, the CLI's stdout pipeline) as an error of the stream, never as an unhandled 'error' that stops
// the process. The database does not matter here (the stream plumbing does): one SQLite file, closed mid-export.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { systemClock } from '../../clock.ts'
import { connectDatabase } from '../../db/connect.ts'
import { migrateToLatest } from '../../db/migrate.ts'
import { historianStoredParts } from '../historian/transfer.ts'
import { createOrgsService } from '../orgs/service.ts'
import { createSitesService } from '../sites/service.ts'
import { createTenantTransferService } from './service.ts'

const SITES = 10_000 // five pages of the export's reads: most of them are still to come when the first bytes are out

it('a database failure mid-export fails the package stream, and nothing is left unhandled', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-export-errors-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const handle = await connectDatabase(`sqlite:${join(dir, 'site.db')}`)
  await migrateToLatest(handle.db)
  const org = await createOrgsService({ handle, clock: systemClock }).provision('exporter')
  const now = Date.now()
  for (let i = 0; i < SITES; i += 500) {
    await handle.db
      .insertInto('sites')
      .values(
        Array.from({ length: 500 }, (_, k) => ({
          org_id: org.id,
          code: `s${String(i + k).padStart(5, '0')}`,
          name: randomBytes(24).toString('hex'),
          description: null,
          location: null,
          time_zone: 'UTC',
          status: 0,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute()
  }
  const sites = createSitesService({ handle, clock: systemClock, dependents: [] })
  const transfer = createTenantTransferService({
    handle,
    clock: systemClock,
    mode: 'site',
    baseDomain: 'sitegrid.test',
    sites,
    storedParts: historianStoredParts,
    maxPackageBytes: 1 << 30,
    maxInflatedBytes: 1 << 30,
  })
  const unhandled: unknown[] = []
  const record = (err: unknown) => unhandled.push(err)
  process.on('uncaughtException', record)
  t.after(() => process.off('uncaughtException', record))

  const stream = await transfer.exportPackage(org, null)
  let bytes = 0
  await assert.rejects(async () => {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (bytes === 0) await handle.close() // the next page's read fails
      bytes += chunk.length
    }
  })
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.deepEqual(unhandled, [])
})
