import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { runCli, startServer } from './process.ts'

// `sitegrid link reseed` replaces the data of the linked sites: it runs with the site server stopped. The reseed itself
// (against a cloud) is src/modules/fleet/enrolment/reseed.test.ts.
describe('sitegrid link reseed (processes, SQLite)', () => {
  it('refuses while a serve holds the database, naming it; stopped: refuses a server that is not enrolled; refuses a cloud cell', async (t) => {
    const siteDir = mkdtempSync(join(tmpdir(), 'sitegrid-reseed-site-'))
    t.after(() => rmSync(siteDir, { recursive: true, force: true }))
    runCli(['init'], { cwd: siteDir })
    const server = await startServer({ cwd: siteDir, env: { SITEGRID_LOG_LEVEL: 'warn' } })
    t.after(() => server.stop())
    const served = runCli(['link', 'reseed'], { cwd: siteDir })
    assert.equal(served.code, 1, served.stderr)
    assert.match(served.stderr, /already served by process \d+/)
    assert.equal(await server.stop(), 0)

    const stopped = runCli(['link', 'reseed'], { cwd: siteDir })
    assert.equal(stopped.code, 1, stopped.stderr)
    assert.match(stopped.stderr, /not enrolled/)
    assert.equal(runCli(['link', 'reseed'], { cwd: siteDir, env: { SITEGRID_MODE: 'cloud' } }).code, 2, 'reseed is for a site server')
  })
})
