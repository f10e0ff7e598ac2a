import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'

const ROOT = join(import.meta.dirname, '..', '..')
const UNIT = readFileSync(join(ROOT, 'deploy', 'sitegrid.service'), 'utf8')
const INSTALLED_BIN = '/opt/sitegrid/bin/sitegrid'

/** Every `Key=value` of the unit's [Service] section, a key set twice keeping each value. */
function serviceSettings(unit: string): Map<string, string[]> {
  const section = unit.split(/^\[Service\]$/m)[1]!.split(/^\[/m)[0]!
  const settings = new Map<string, string[]>()
  for (const line of section.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (match) settings.set(match[1]!, [...(settings.get(match[1]!) ?? []), match[2]!])
  }
  return settings
}

describe('deploy/sitegrid.service', () => {
  it('runs as its own user with the data folder as the only writable path, hardened, restarted on failure; systemd-analyze verify prints nothing', (t) => {
    const s = serviceSettings(UNIT)
    const one = (key: string) => s.get(key)?.join(' ')
    assert.equal(one('User'), 'sitegrid')
    assert.equal(one('ProtectSystem'), 'strict')
    assert.equal(one('NoNewPrivileges'), 'yes')
    assert.equal(one('Restart'), 'on-failure')
    assert.equal(one('StateDirectory'), 'sitegrid sitegrid/tmp')
    assert.equal(one('ReadWritePaths'), undefined, 'nothing writable beside the state directory')
    assert.equal(one('ExecStart'), `${INSTALLED_BIN} serve`)
    assert.ok(s.get('Environment')?.includes('SITEGRID_DATA_DIR=/var/lib/sitegrid'))
    assert.ok(s.get('Environment')?.includes('TMPDIR=/var/lib/sitegrid/tmp'), 'spooled uploads stay in the data folder')
    assert.equal(one('MemoryDenyWriteExecute'), undefined, "V8's JIT needs writable code pages")

    // verify needs ExecStart to exist: the unit is checked with this checkout's bin/sitegrid in its place.
    const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p))
    if (analyze === undefined) return t.diagnostic('systemd-analyze is not installed: verify not run')
    const dir = mkdtempSync(join(tmpdir(), 'sitegrid-unit-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const path = join(dir, 'sitegrid.service')
    writeFileSync(path, UNIT.replace(INSTALLED_BIN, join(ROOT, 'bin', 'sitegrid')))
    const verified = spawnSync(analyze, ['verify', path], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(`${verified.stdout}${verified.stderr}`, '', 'no warning')
    assert.equal(verified.status, 0)
  })
})
