import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { testDialects } from './harness.ts'
import { freePort } from './postgres.ts'
import { BIN, runCli } from './cli/process.ts'

// A new user's first start and a careless operator's settings (session 24, part HP): each mistake stops the command
// with one line per problem naming the setting and the rule, no stack trace and no secret.

function workdir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-newuser-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const NO_STACK = /\n\s+at |Error: /

/** Runs `sitegrid serve`; resolves with its exit, or with `null` once `ms` have passed (the process then killed). */
function serveFor(ms: number, options: { cwd: string; env: Record<string, string> }): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(BIN, ['serve'], { cwd: options.cwd, env: { PATH: process.env.PATH, ...options.env } })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      resolve({ code: null, stderr })
    }, ms)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stderr })
    })
  })
}

describe('a new user starting sitegrid', () => {
  it('serve on a port already in use exits 1 with one line naming HOST, PORT and the address, instead of running on without listening', async (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const taken = createServer()
    const port = await freePort()
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve))
    t.after(() => taken.close())
    const res = await serveFor(60_000, { cwd, env: { PORT: String(port), SITEGRID_METRICS_ADDRESS: 'off' } })
    assert.equal(res.code, 1, `the process exits (null: still running after 60 s): ${res.stderr}`)
    assert.equal(
      res.stderr,
      `sitegrid serve: HOST, PORT: cannot listen on 127.0.0.1:${port}: it is already in use (another server, or another sitegrid serve on another data folder): stop it or choose another PORT\n`,
    )
  })

  it('every bad setting is one line of its own, naming the setting and the rule, exit 78', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const res = runCli(['org', 'list'], { cwd, env: { PORT: 'abc', SITEGRID_MODE: 'moon', SITEGRID_TRUST_PROXY: 'maybe' } })
    assert.equal(res.code, 78)
    assert.deepEqual(res.stderr.trimEnd().split('\n'), [
      'sitegrid: invalid configuration: PORT: must be a whole number in digits, got "abc"',
      'sitegrid: invalid configuration: SITEGRID_MODE: must be one of site, cloud',
      'sitegrid: invalid configuration: SITEGRID_TRUST_PROXY: must be true or false',
    ])
  })

  it('a value of the wrong JSON type in the config file is refused naming the setting, the file and the type, never the value', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const file = join(cwd, 'other.json')
    writeFileSync(file, JSON.stringify({ PORT: true, SITEGRID_KEY_SECRET: 31415926535, SITEGRID_TRUST_PROXY: 'true' }))
    const res = runCli(['org', 'list'], { cwd, env: { SITEGRID_CONFIG_FILE: file } })
    assert.equal(res.code, 78)
    assert.deepEqual(res.stderr.trimEnd().split('\n'), [
      `sitegrid: invalid configuration: PORT: must be a whole number in ${file}, got a boolean`,
      `sitegrid: invalid configuration: SITEGRID_KEY_SECRET: must be a string in ${file}, got a number`,
    ])
  })

  it('a SITEGRID_ variable that is no setting (a typo) is named in a warning with the nearest setting; the command still runs', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    const res = runCli(['org', 'list'], { cwd, env: { SITEGRID_RATE_LIMT: '5', SITEGRID_MODE: 'site' } })
    assert.equal(res.code, 0, res.stderr)
    assert.equal(
      res.stderr,
      'sitegrid: warning: SITEGRID_RATE_LIMT is not a setting and is ignored (did you mean SITEGRID_RATE_LIMIT_PER_MINUTE?); the settings are listed in README.md § Configuration\n',
    )
  })

  for (const dialect of testDialects()) {
    it(`${dialect}: a database that cannot be opened stops the command and serve with one line naming DATABASE_URL, never its password`, async (t) => {
      const cwd = workdir(t)
      assert.equal(runCli(['init'], { cwd }).code, 0)
      // PostgreSQL: the test server with a wrong password; SQLite: a path that is a folder.
      const url = dialect === 'postgres' ? new URL(process.env.TEST_DATABASE_URL!) : undefined
      if (url) url.password = 'wrong-Secret-42'
      const env = { DATABASE_URL: url ? url.href : `sqlite:${cwd}`, SITEGRID_METRICS_ADDRESS: 'off', PORT: String(await freePort()) }
      const shown = url ? `postgres://***@${url.host}${url.pathname}` : `sqlite:${cwd}`
      const why = dialect === 'postgres' ? 'password authentication failed for user' : 'unable to open database file'
      const list = runCli(['org', 'list'], { cwd, env })
      assert.equal(list.code, 1)
      assert.ok(list.stderr.startsWith(`sitegrid org list: DATABASE_URL: cannot open the database ${shown}: ${why}`), list.stderr)
      const served = await serveFor(60_000, { cwd, env })
      assert.equal(served.code, 1, served.stderr)
      assert.ok(served.stderr.startsWith(`sitegrid serve: DATABASE_URL: cannot open the database ${shown}: ${why}`), served.stderr)
      for (const out of [list.stderr, served.stderr]) {
        assert.equal(out.trimEnd().split('\n').length, 1, out)
        assert.doesNotMatch(out, NO_STACK)
        assert.ok(!out.includes('wrong-Secret-42'), 'the password is never shown')
      }
    })
  }
})

describe('init, which npm start runs at every start', () => {
  it('creates no secret file when the config file already names the verifier secret (a file elsewhere, or the secret itself)', (t) => {
    const cwd = workdir(t)
    mkdirSync(join(cwd, 'data'))
    mkdirSync(join(cwd, 'etc'))
    const secret = Buffer.alloc(32, 7).toString('base64')
    writeFileSync(join(cwd, 'etc', 'secret'), `${secret}\n`)
    writeFileSync(join(cwd, 'data', 'sitegrid.json'), JSON.stringify({ SITEGRID_KEY_SECRET_FILE: '../etc/secret' }))
    const named = runCli(['init'], { cwd })
    assert.equal(named.code, 0, named.stderr)
    assert.equal(named.stderr, `init: verifier secret file ${join(cwd, 'etc', 'secret')} already exists\n`)
    assert.ok(!existsSync(join(cwd, 'data', 'key-secret')), 'no second secret that nothing reads')
    writeFileSync(join(cwd, 'data', 'sitegrid.json'), JSON.stringify({ SITEGRID_KEY_SECRET: secret }))
    const inline = runCli(['init'], { cwd })
    assert.equal(inline.code, 0, inline.stderr)
    assert.equal(inline.stderr, 'init: the verifier secret comes from SITEGRID_KEY_SECRET; nothing to create\n')
    assert.ok(!existsSync(join(cwd, 'data', 'key-secret')))
    assert.equal(runCli(['org', 'create', 'plant'], { cwd }).code, 0)
    assert.equal(runCli(['key', 'mint', '--org', 'plant', '--role', 'owner', '--name', 'k', '--expires-in', '1d'], { cwd }).code, 0)
  })
})

describe('a lost secret file', () => {
  it('init warns, naming the database, when it makes a new secret beside a database in use (the old keys no longer verify)', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    assert.equal(runCli(['org', 'create', 'plant'], { cwd }).code, 0)
    rmSync(join(cwd, 'data', 'key-secret'))
    const res = runCli(['init'], { cwd })
    assert.equal(res.code, 0, res.stderr)
    assert.ok(
      res.stderr.includes(
        `init: warning: the database ${join(cwd, 'data', 'sitegrid.db')} already exists: the API keys and site sign-in keys made under the previous secret do not verify with this new one`,
      ),
      res.stderr,
    )
  })
})

describe('a data folder that cannot be used', () => {
  it('init names SITEGRID_DATA_DIR when it cannot create the data folder (a file of that name), exit 1', (t) => {
    const cwd = workdir(t)
    writeFileSync(join(cwd, 'data'), '')
    const res = runCli(['init'], { cwd })
    assert.equal(res.code, 1)
    assert.match(
      res.stderr,
      /^sitegrid init: SITEGRID_DATA_DIR: cannot create the data folder \S+\/data \(EEXIST: file already exists, mkdir [^)]+\); set SITEGRID_DATA_DIR to/,
    )
    assert.equal(res.stderr.trimEnd().split('\n').length, 1, res.stderr)
  })

  it("serve names DATABASE_URL when the SQLite file or its serve lock cannot be opened, instead of SQLite's bare words, exit 1", async (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    mkdirSync(join(cwd, 'data', 'sitegrid.db.serve-lock')) // a folder where the lock file goes: SQLite cannot open it
    const res = await serveFor(60_000, { cwd, env: { SITEGRID_METRICS_ADDRESS: 'off', PORT: String(await freePort()) } })
    assert.equal(res.code, 1, res.stderr)
    assert.equal(
      res.stderr,
      `sitegrid serve: DATABASE_URL: cannot open the database sqlite:${join(cwd, 'data', 'sitegrid.db')}: unable to open database file (SQLite creates the file, its -wal and -shm and a .serve-lock beside it: a folder this user may write)\n`,
    )
  })
})

describe('the sitegrid command as a new user meets it', () => {
  it('sitegrid with no command is bad usage: the overview on stderr, nothing on stdout, exit 2; --help prints it on stdout, exit 0', (t) => {
    const cwd = workdir(t)
    const bare = runCli([], { cwd })
    assert.equal(bare.code, 2)
    assert.equal(bare.stdout, '')
    assert.match(bare.stderr, /^Usage: sitegrid COMMAND/)
    const help = runCli(['--help'], { cwd })
    assert.equal(help.code, 0)
    assert.match(help.stdout, /^Usage: sitegrid COMMAND/)
  })

  it("an unknown option is named alone, without Node's advice on positionals starting with '-', then the command's usage (exit 2)", (t) => {
    const cwd = workdir(t)
    const res = runCli(['serve', '--port', '9000'], { cwd })
    assert.equal(res.code, 2)
    assert.equal(res.stderr.split('\n')[0], "sitegrid serve: Unknown option '--port'")
    assert.equal(res.stderr.split('\n')[1], 'Usage: sitegrid serve [--no-migrate]')
  })

  it('org delete, suspend and resume of an organisation the server does not hold name it (NotFound, exit 1)', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    for (const command of ['delete', 'suspend', 'resume']) {
      const res = runCli(['org', command, 'nosuch'], { cwd, env: { SITEGRID_MODE: 'cloud' } })
      assert.equal(res.code, 1, `${command}: ${res.stderr}`)
      assert.equal(res.stderr, `sitegrid org ${command}: NotFound: no organisation "nosuch" on this server (\`sitegrid org list\` shows them)\n`)
    }
  })

  it('key revoke, platform-admin remove and tenant export --site of something the server does not hold name it in one line (NotFound, exit 1)', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    assert.equal(runCli(['org', 'create', 'plant'], { cwd }).code, 0)
    const missingKey = '00000000-0000-4000-8000-000000000000'
    const cases: Array<[string[], string]> = [
      [
        ['key', 'revoke', '--org', 'plant', missingKey],
        `sitegrid key revoke: NotFound: no key "${missingKey}" in plant (\`sitegrid key list --org plant\` shows them)`,
      ],
      [
        ['platform-admin', 'remove', 'no-such-oid'],
        'sitegrid platform-admin remove: NotFound: no platform admin "no-such-oid" (`sitegrid platform-admin list` shows them)',
      ],
      [
        ['tenant', 'export', 'plant', '--site', 'nosuch', '--output', join(cwd, 'p.gz')],
        'sitegrid tenant export: NotFound: no site "nosuch" in plant (`sitegrid site list` shows them)',
      ],
    ]
    for (const [args, line] of cases) {
      const res = runCli(args, { cwd })
      assert.equal(res.code, 1, `${args.join(' ')}: ${res.stderr}`)
      assert.equal(res.stderr, `${line}\n`)
    }
    assert.ok(!existsSync(join(cwd, 'p.gz')))
  })

  it('site-key list takes --json as its sibling lists do: one object a line with the named fields, never the sealed key', (t) => {
    const cwd = workdir(t)
    assert.equal(runCli(['init'], { cwd }).code, 0)
    assert.equal(runCli(['org', 'create', 'plant'], { cwd }).code, 0)
    const kid = runCli(['site-key', 'rotate'], { cwd }).stdout.trim()
    const res = runCli(['site-key', 'list', '--json'], { cwd })
    assert.equal(res.code, 0, res.stderr)
    const rows = res.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    assert.deepEqual(
      rows.map((r) => Object.keys(r)),
      [['kid', 'alg', 'createdAt', 'retiredAt']],
    )
    assert.equal(rows[0]!.kid, kid)
    assert.equal(rows[0]!.alg, 'ES256')
    assert.equal(runCli(['site-key', 'list'], { cwd }).stdout.split('\t')[0], kid, 'without --json: tab-separated as before')
  })
})
