import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { buildCli } from '../../src/cli/build.ts'
import { prettyLine } from '../../src/cli/pretty-log.ts'
import { siteOrgAmbiguity } from '../../src/config/site-org.ts'
import { BIN, httpRequest, runCli, startServer } from './process.ts'

function workdir(t: { after: (fn: () => void) => void }, prefix = 'sitegrid-build-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A copy of bin/sitegrid in an installation of its own (`root`): src/ and, when given, a dist/sitegrid.mjs. */
function installation(root: string, entry?: string): string {
  mkdirSync(join(root, 'bin'))
  mkdirSync(join(root, 'src'))
  copyFileSync(BIN, join(root, 'bin', 'sitegrid'))
  writeFileSync(join(root, 'src', 'main.ts'), '')
  utimesSync(join(root, 'src', 'main.ts'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
  if (entry !== undefined) {
    mkdirSync(join(root, 'dist'))
    writeFileSync(join(root, 'dist', 'sitegrid.mjs'), entry)
  }
  return join(root, 'bin', 'sitegrid')
}

const run = (bin: string, args: string[], cwd: string) => spawnSync(bin, args, { cwd, env: { PATH: process.env.PATH }, encoding: 'utf8' })

describe('the build bin/sitegrid runs', () => {
  it('bin/sitegrid runs dist/sitegrid.mjs with the arguments, from any working directory', (t) => {
    const root = workdir(t)
    const bin = installation(root, 'console.log(JSON.stringify(process.argv.slice(2)))\n')
    const res = run(bin, ['org', 'list'], tmpdir())
    assert.equal(res.status, 0, res.stderr)
    assert.deepEqual(JSON.parse(res.stdout), ['org', 'list'])
  })

  it("bin/sitegrid runs node with two malloc arenas (unless the operator's environment says otherwise) and V8's heap growing by half", (t) => {
    const root = workdir(t)
    const bin = installation(root, 'console.log(JSON.stringify([process.env.MALLOC_ARENA_MAX, process.execArgv]))\n')
    assert.deepEqual(JSON.parse(run(bin, [], tmpdir()).stdout), ['2', ['--enable-source-maps', '--heap-growing-percent=50']])
    const own = spawnSync(bin, [], { cwd: tmpdir(), env: { PATH: process.env.PATH, MALLOC_ARENA_MAX: '8' }, encoding: 'utf8' })
    assert.equal(JSON.parse(own.stdout)[0], '8')
  })

  it('a missing build stops bin/sitegrid with exit 70 and the command that builds it, running nothing', (t) => {
    const root = workdir(t)
    const res = run(installation(root), ['--help'], root)
    assert.equal(res.status, 70)
    assert.equal(res.stdout, '')
    assert.match(res.stderr, new RegExp(`no build in ${root}/dist: run \`npm run build\``))
  })

  it('a build older than a source stops bin/sitegrid with exit 70, naming the source, running nothing', (t) => {
    const root = workdir(t)
    const bin = installation(root, "console.log('old code ran')\n")
    utimesSync(join(root, 'dist', 'sitegrid.mjs'), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000))
    const res = run(bin, ['--help'], root)
    assert.equal(res.status, 70)
    assert.equal(res.stdout, '')
    assert.match(res.stderr, /older than src\/main\.ts: run `npm run build`/)
  })

  it('the bundle loads no package at `sitegrid --help`: no driver, no kysely, no fastify, no typebox, no console', async (t) => {
    // Built into a folder with no node_modules above it: an import of any package would fail there.
    const out = workdir(t, 'sitegrid-dist-')
    const { loadsAtStart } = await buildCli(out)
    const packages = [...loadsAtStart('sitegrid.mjs')]
    assert.deepEqual(
      packages.filter((p) => !p.startsWith('node:')),
      [],
    )
    const help = spawnSync(process.execPath, ['--enable-source-maps', join(out, 'sitegrid.mjs'), '--help'], { encoding: 'utf8' })
    assert.equal(help.status, 0, help.stderr)
    assert.match(help.stdout, /^Usage: sitegrid COMMAND/)
    const serveHelp = spawnSync(process.execPath, [join(out, 'sitegrid.mjs'), 'serve', '--help'], { encoding: 'utf8' })
    assert.equal(serveHelp.status, 0, serveHelp.stderr)
    assert.match(serveHelp.stdout, /Usage: sitegrid serve/)
    // Source maps: an error thrown through the built code has frames naming the TypeScript file and line.
    const probe = `process.argv = [process.argv[0], 'x', '--help']; process.stdout.write = () => { throw new Error('probe') }; await import(${JSON.stringify(join(out, 'sitegrid.mjs'))})`
    const traced = spawnSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', probe], { encoding: 'utf8' })
    assert.notEqual(traced.status, 0)
    assert.match(traced.stderr, /at runCli \(.*src\/cli\/main\.ts:\d+:\d+\)/)
  })
})

describe('start-up messages', () => {
  it('a log line is readable on a terminal: time, level, message, fields', () => {
    assert.equal(
      prettyLine('{"level":30,"time":0,"pid":1,"hostname":"h","msg":"sitegrid serving","mode":"site","port":8080}', false),
      '00:00:00.000 INFO  sitegrid serving mode=site port=8080\n',
    )
    assert.equal(prettyLine('{"level":40,"time":0,"msg":"w","reason":"two words"}', false), '00:00:00.000 WARN  w reason="two words"\n')
    assert.equal(prettyLine('not json', false), 'not json\n')
  })

  it('a site server is ambiguous with several organisations and no SITEGRID_SITE_ORG; never with one, a named one, or in a cloud cell', () => {
    const site = { mode: 'site' as const, siteOrgSlug: undefined, baseDomain: 'localhost' }
    assert.match(siteOrgAmbiguity(site, ['b', 'a']) ?? '', /holds 2 organisations \(a, b\) and SITEGRID_SITE_ORG names none/)
    assert.equal(siteOrgAmbiguity(site, ['a']), undefined)
    assert.equal(siteOrgAmbiguity({ ...site, siteOrgSlug: 'a' }, ['a', 'b']), undefined)
    assert.equal(siteOrgAmbiguity({ ...site, mode: 'cloud' }, ['a', 'b']), undefined)
  })

  it('org create warns of the ambiguity; serve prints the URLs, warns at start and /readyz lists it; SITEGRID_SITE_ORG clears it', async (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const first = runCli(['org', 'create', 'alpha'], { cwd })
    assert.equal(first.code, 0, first.stderr)
    assert.doesNotMatch(first.stderr, /warning/)
    const second = runCli(['org', 'create', 'beta'], { cwd })
    assert.equal(second.code, 0, second.stderr)
    assert.match(second.stdout, /^org_/)
    assert.match(second.stderr, /warning: this site server holds 2 organisations \(alpha, beta\) and SITEGRID_SITE_ORG names none/)

    const server = await startServer({ cwd, env: {} })
    try {
      const ready = await httpRequest(`${server.url}/readyz`)
      assert.equal(ready.status, 200)
      const body = ready.json() as { status: string; warnings?: string[] }
      assert.equal(body.status, 'ready')
      assert.equal(body.warnings?.length, 1)
      assert.match(body.warnings![0]!, /SITEGRID_SITE_ORG/)
      // Wait for the start's last lines (they follow the first /healthz answer by a moment).
      for (let i = 0; i < 100 && !server.output().includes('ready: console'); i++) await new Promise((r) => setTimeout(r, 50))
      const lines = server.output().split('\n')
      const human = lines.filter((l) => l.startsWith('sitegrid (site server) ready:'))
      assert.deepEqual(human, [`sitegrid (site server) ready: console ${server.url}/  API ${server.url}/api/  (OpenAPI ${server.url}/openapi.json)`])
      // Not a terminal: the log is JSON lines, the ambiguity among them.
      const records = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; setting?: string })
      assert.ok(records.some((r) => r.msg === 'sitegrid serving'))
      assert.equal(records.filter((r) => r.level === 40 && r.setting === 'SITEGRID_SITE_ORG').length, 1)
    } finally {
      assert.equal(await server.stop(), 0)
    }

    const named = await startServer({ cwd, env: { SITEGRID_SITE_ORG: 'alpha' } })
    try {
      const ready = await httpRequest(`${named.url}/readyz`)
      assert.deepEqual(ready.json(), { status: 'ready' })
    } finally {
      assert.equal(await named.stop(), 0)
    }
  })
})
