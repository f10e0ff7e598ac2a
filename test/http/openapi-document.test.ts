// The OpenAPI document as a client generator reads it (issue 27): Redocly's recommended rules find no problem in it,
// every operation has a unique operationId that does not change with the mode, and the documented upload form lists
// the parts the service reads. The document does not depend on the database: one dialect suffices.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { promisify } from 'node:util'
import { FIELD_NAMES } from '../../src/modules/historian/service/form.ts'
import { harness } from '../harness.ts'
import { identityHarness, startSharedProvider, type SharedProvider } from '../oidc/identity-harness.ts'

const run = promisify(execFile)
const REDOCLY = join(import.meta.dirname, '../../node_modules/@redocly/cli/bin/cli.js')
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])

interface Document {
  servers: Array<{ url: string; variables: Record<string, { default: string }> }>
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> }
}

/** The two documents a server can serve: a cloud cell with browser sign-in (every cloud route), and a site server. */
async function documents(t: TestContext, shared: SharedProvider): Promise<Record<'cloud' | 'site', Document>> {
  const cloud = await identityHarness(t, 'sqlite', shared)
  const site = await harness(t, 'sqlite', { SITEGRID_MODE: 'site', HOST: '0.0.0.0' })
  const read = async (h: typeof site) => (await h.inject(undefined, { url: '/openapi.json' })).json() as Document
  return { cloud: await read(cloud), site: await read(site) }
}

function operations(doc: Document): Array<{ key: string; operationId: string | undefined; statuses: string[] }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, operationId: op.operationId, statuses: Object.keys(op.responses) })),
  )
}

/** The operations that only redirect (spec 5.6), for which redocly.yaml switches `operation-2xx-response` off. */
const REDIRECTS = ['GET /auth/login', 'GET /auth/callback']

describe('the OpenAPI document', () => {
  let shared: SharedProvider
  before(async () => {
    shared = await startSharedProvider({ slots: 2 })
  })
  after(() => shared.stop())

  it("passes Redocly's recommended rules with no error and no warning, in both modes", async (t) => {
    const docs = await documents(t, shared)
    const dir = mkdtempSync(join(tmpdir(), 'sitegrid-openapi-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    for (const [mode, doc] of Object.entries(docs)) {
      const file = join(dir, `${mode}.json`)
      writeFileSync(file, JSON.stringify(doc, null, 2))
      // The repository's redocly.yaml (if any) applies: the command runs at the root, as `npx redocly lint` would.
      const { stdout } = await run(process.execPath, [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', file], {
        cwd: join(import.meta.dirname, '../..'),
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number }
        problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>
      }
      const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
      assert.deepEqual(problems, [], `${mode} document:\n${problems.join('\n')}`)
      assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 })
    }
  })

  it('names every operation with a unique camelCase operationId, the same in both modes, and a 2xx answer unless it redirects; the servers; the upload form lists the parts read', async (t) => {
    const docs = await documents(t, shared)
    const idOf = new Map<string, string>()
    for (const [mode, doc] of Object.entries(docs)) {
      const ops = operations(doc)
      assert.ok(ops.length > 50, `${mode}: ${ops.length} operations`)
      assert.deepEqual(
        ops.filter((op) => !/^[a-z][A-Za-z0-9]*$/.test(op.operationId ?? '')).map((op) => op.key),
        [],
        `${mode}: operations without a camelCase operationId`,
      )
      assert.deepEqual(
        ops.filter((op) => !op.statuses.some((s) => s.startsWith('2'))).map((op) => op.key),
        mode === 'cloud' ? REDIRECTS : [],
        `${mode}: operations without a 2xx answer`,
      )
      const ids = ops.map((op) => op.operationId)
      assert.equal(new Set(ids).size, ids.length, `${mode}: operationIds are unique`)
      for (const { key, operationId } of ops) {
        assert.equal(idOf.get(key) ?? operationId, operationId, `${key} keeps its operationId across modes`)
        idOf.set(key, operationId!)
      }
    }
    assert.equal(new Set(idOf.values()).size, idOf.size, 'no two operations of the two modes share an operationId')
    // The browser sign-in, the site sign-in and the fleet link's two sides are all in one of the two documents.
    for (const key of ['GET /auth/login', 'POST /auth/site/login', 'POST /api/link/push', 'GET /api/link']) assert.ok(idOf.has(key), key)

    // Where to call: the tenant's subdomain first on a cloud cell, the server's own address first on a site server.
    const servers = (doc: Document) => doc.servers.map((s) => [s.url, Object.fromEntries(Object.entries(s.variables).map(([k, v]) => [k, v.default]))])
    assert.deepEqual(servers(docs.cloud), [
      ['https://{slug}.{domain}', { slug: 'acme', domain: 'localhost' }],
      ['http://{host}:{port}', { host: '127.0.0.1', port: '8080' }],
    ])
    assert.deepEqual(servers(docs.site)[0], ['http://{host}:{port}', { host: 'localhost', port: '8080' }], 'a wildcard HOST is no address to call')

    const form = docs.cloud.components.schemas.HistorianUploadForm
    assert.deepEqual(Object.keys(form?.properties ?? {}).sort(), ['mapping_csv', 'trend_csv', ...FIELD_NAMES].sort())
    assert.deepEqual(form?.required?.sort(), ['format', 'mapping_csv', 'site_id', 'trend_csv'])
  })
})
