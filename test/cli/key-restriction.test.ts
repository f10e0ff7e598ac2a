// Issue 30: `sitegrid key mint --site --network` mints an edge gateway's restricted key; `key list` shows the restriction.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { runCli } from './process.ts'

describe('sitegrid key: site-restricted keys', () => {
  it('key mint --site --network restricts the key; key list prints the site and networks (- when unrestricted); an unknown site mints nothing', (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-cli-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    assert.equal(runCli(['init'], { cwd }).code, 0)
    assert.equal(runCli(['org', 'create', 'plant'], { cwd }).code, 0)
    assert.equal(runCli(['site', 'create', 'S1', '--name', 'Plant', '--org', 'plant'], { cwd }).code, 0)
    const mint = (...extra: string[]) => runCli(['key', 'mint', '--org', 'plant', '--role', 'member', '--name', 'gw', '--expires-in', '30d', ...extra], { cwd })
    const gateway = mint('--site', 'S1', '--network', '10.20.0.0/16', '--network', '192.0.2.7')
    assert.equal(gateway.code, 0, gateway.stderr)
    assert.equal(mint().code, 0)
    const unknown = mint('--site', 'NOPE')
    assert.equal(unknown.code, 1)
    assert.match(unknown.stderr, /ValidationFailed/)

    const rows = runCli(['key', 'list', '--org', 'plant'], { cwd })
      .stdout.trim()
      .split('\n')
      .map((l) => l.split('\t'))
    assert.equal(rows.length, 2)
    assert.deepEqual(rows.map((r) => r.slice(6)).sort(), [
      ['-', '-'],
      ['S1', '10.20.0.0/16,192.0.2.7/32'],
    ])
  })
})
