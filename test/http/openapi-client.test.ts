// A client generated from the OpenAPI document works (issue 27): openapi-typescript turns the site server's document
// into types, a small openapi-fetch client compiles against them (`tsc --noEmit`, strict), and the same client then
// mints a key, creates a site, a controller and an instance, imports a historian file (multipart) and reads the
// alarms of a real server on loopback, on each database. One case: compiling is slow.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { harness, testDialects } from '../harness.ts'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '../..')

/** The client, as a user of the document would write it: every call typed by the generated `paths`. */
const CLIENT = `
import createClient from 'openapi-fetch'
import type { paths } from './schema.ts'

const SITE = 'TYPED-1'
const site = { params: { path: { siteId: SITE } } }

function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new Error(\`\${answer.response.status}: \${JSON.stringify(answer.error)}\`)
  return answer.data
}

export async function runClient(baseUrl: string, ownerKey: string) {
  const owner = createClient<paths>({ baseUrl, headers: { 'x-api-key': ownerKey } })
  const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString()
  const minted = ok(await owner.POST('/api/admin/api-keys', { body: { role: 'admin', name: 'typed client', expiresAt } }))
  const api = createClient<paths>({ baseUrl, headers: { 'x-api-key': minted.plaintext } })

  const created = ok(await api.POST('/api/sites', { body: { code: SITE, name: 'Typed plant', status: 2 } }))
  const controller = ok(
    await api.POST('/api/sites/{siteId}/controllers', {
      ...site,
      body: { name: 'PLC 1', platform: 1, assetNumber: 'PLC-1', connection: { protocol: 'cip', ipAddress: '10.0.0.1' } },
    }),
  )
  const instance = ok(
    await api.POST('/api/sites/{siteId}/instances', {
      ...site,
      body: { id: 'pump-1', name: 'Pump 1', typeId: 'pump', assetNumber: 'P-1', controllerId: controller.id },
    }),
  )

  const batch = ok(
    await api.POST('/api/historian/import-batches', {
      body: {
        site_id: SITE,
        format: 'long',
        mapping_csv: 'historian_tag,instance_id,tag_key\\nFT-101,pump-1,flow\\n',
        trend_csv: 'timestamp,tag,value\\n2024-06-01 00:00:00,FT-101,12.5\\n2024-06-01 00:01:00,FT-101,13\\n',
      },
      // The files as file parts, trend_csv last (streamed straight into the database).
      bodySerializer(body) {
        const form = new FormData()
        form.set('site_id', body.site_id)
        form.set('format', body.format)
        form.set('mapping_csv', new Blob([body.mapping_csv], { type: 'text/csv' }), 'mapping.csv')
        form.set('trend_csv', new Blob([body.trend_csv], { type: 'text/csv' }), 'trend.csv')
        return form
      },
    }),
  )

  const event = { eventId: 'ev-1', instanceId: instance.id, condition: 'HI_FLOW', priority: 'high' as const, state: 'active' as const, occurredAt: new Date().toISOString() }
  ok(await api.POST('/api/sites/{siteId}/alarms/events', { ...site, body: { events: [event] } }))
  const alarms = ok(await api.GET('/api/sites/{siteId}/alarms', { params: { path: { siteId: SITE }, query: { instanceId: instance.id, limit: 10 } } }))
  return { keyPrefix: minted.keyPrefix, site: created.code, status: created.status, samples: batch.samplesStored, alarms: alarms.items.map((a) => [a.condition, a.state]) }
}
`

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    types: [],
  },
  include: ['*.ts'],
}

it('a client generated from the site document compiles and mints a key, creates a site, imports a historian file and reads alarms', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-client-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG))
  writeFileSync(join(dir, 'client.ts'), CLIENT)

  for (const [i, dialect] of testDialects().entries()) {
    const slug = `typed-${randomBytes(5).toString('hex')}`
    const h = await harness(t, dialect, { SITEGRID_MODE: 'site', SITEGRID_SITE_ORG: slug })
    const org = await h.createOrg(slug)
    const { plaintext } = await h.mintKey(org, 'owner')
    if (i === 0) {
      // The types from the served document, then the compiler: a call the document does not describe fails here.
      const doc = (await h.inject(undefined, { url: '/openapi.json' })).json() as Parameters<typeof openapiTS>[0]
      writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(doc)))
      const tsc = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir]).catch((e: { stdout: string }) => e)
      assert.equal(tsc.stdout, '', `tsc found problems in the typed client:\n${tsc.stdout}`)
    }
    const address = await h.app.listen({ host: '127.0.0.1', port: 0 })
    const { runClient } = (await import(join(dir, 'client.ts'))) as { runClient: (baseUrl: string, key: string) => Promise<Record<string, unknown>> }
    assert.deepEqual(await runClient(address, plaintext), {
      keyPrefix: (await h.handle.db.selectFrom('api_keys').select('prefix').where('name', '=', 'typed client').executeTakeFirstOrThrow()).prefix,
      site: 'TYPED-1',
      status: 2,
      samples: 2,
      alarms: [['HI_FLOW', 'active_unacknowledged']],
    })
  }
})
