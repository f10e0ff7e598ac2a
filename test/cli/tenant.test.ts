import assert from 'node:assert/strict'
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { spawn, spawnSync } from 'node:child_process'
import { sleep } from '../harness.ts'
import { BIN, runCli } from './process.ts'

function exportTo(cwd: string, slug: string): Buffer {
  const res = spawnSync(BIN, ['tenant', 'export', slug], { cwd, env: { PATH: process.env.PATH }, timeout: 60_000 })
  assert.equal(res.status, 0, String(res.stderr))
  return res.stdout
}

describe('sitegrid tenant export | import (offline)', () => {
  it('moves an organisation between two servers by id; dry-run, conflicts and force behave as the API; Ctrl-C mid-import keeps nothing; progress lines', async (t) => {
    const a = mkdtempSync(join(tmpdir(), 'sitegrid-ta-'))
    const b = mkdtempSync(join(tmpdir(), 'sitegrid-tb-'))
    t.after(() => {
      rmSync(a, { recursive: true, force: true })
      rmSync(b, { recursive: true, force: true })
    })
    runCli(['init'], { cwd: a })
    runCli(['init'], { cwd: b })
    const id = runCli(['org', 'create', 'plant', '--name', 'Plant'], { cwd: a }).stdout.trim()
    runCli(['key', 'mint', '--org', 'plant', '--role', 'member', '--name', 'gw', '--expires-in', '30d'], { cwd: a })
    const pkg = exportTo(a, 'plant')
    assert.match(gunzipSync(pkg).toString('utf8'), /"format":"sitegrid-tenant-package"/)
    const file = join(b, 'plant.jsonl.gz')
    writeFileSync(file, pkg)

    assert.equal(runCli(['org', 'create', 'plant', '--id', 'org_BAD!'], { cwd: b }).code, 1)
    runCli(['org', 'create', 'other'], { cwd: b })
    assert.match(runCli(['tenant', 'import', 'other', file], { cwd: b }).stderr, /another organisation/)
    assert.equal(runCli(['org', 'create', 'plant', '--id', id], { cwd: b }).stdout.trim(), id)
    // Ctrl-C while the package is still arriving (a pipe holding its first half): rolled back, exit 130.
    const fifo = join(b, 'half.fifo')
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0)
    const child = spawn(BIN, ['tenant', 'import', 'plant', fifo], { cwd: b, env: { PATH: process.env.PATH } })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += String(d)))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const writer = createWriteStream(fifo)
    writer.on('error', () => {}) // the reader is gone after the cancel
    writer.write(pkg.subarray(0, Math.floor(pkg.length / 2)))
    for (let i = 0; i < 600 && !stderr.includes('started'); i++) await sleep(50)
    await sleep(300) // the first half read, the import waits for the rest inside its transaction
    child.kill('SIGINT')
    for (let i = 0; i < 600 && !stderr.includes('cancelling'); i++) await sleep(50)
    writer.destroy() // as Ctrl-C on a terminal stops the writer of the pipe too
    assert.equal(await exited, 130, stderr)
    assert.match(stderr, /sitegrid tenant import: cancelled \(SIGINT\); nothing of it was kept/)
    assert.equal(runCli(['key', 'list', '--org', 'plant'], { cwd: b }).stdout, '', 'the cancelled import wrote nothing')
    const dry = runCli(['tenant', 'import', 'plant', file, '--dry-run'], { cwd: b })
    assert.equal(JSON.parse(dry.stdout).parts.api_keys.create, 1)
    assert.equal(runCli(['key', 'list', '--org', 'plant'], { cwd: b }).stdout, '', 'dry run wrote nothing')
    const applied = runCli(['tenant', 'import', 'plant', file], { cwd: b })
    assert.equal(applied.code, 0, applied.stderr)
    assert.match(applied.stderr, new RegExp(`^tenant import plant.jsonl.gz: started, .*\n(.*\n)*tenant import plant.jsonl.gz: imported: .* in \\d+\\.\\d s\n$`))
    assert.match(runCli(['key', 'list', '--org', 'plant'], { cwd: b }).stdout, /\tgw\t/)
    assert.equal(
      JSON.parse(runCli(['tenant', 'import', 'plant', file], { cwd: b }).stdout).parts.api_keys.unchanged,
      1,
      'a second import leaves identical records alone',
    )
    const rows = (p: Buffer) =>
      gunzipSync(p)
        .toString('utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"row"'))
        .sort()
    const again = exportTo(b, 'plant')
    const output = join(b, 'out', 'again.jsonl.gz')
    mkdirSync(join(b, 'out'))
    const written = runCli(['tenant', 'export', 'plant', '--output', output], { cwd: b })
    assert.equal(written.code, 0, written.stderr)
    assert.deepEqual(readdirSync(join(b, 'out')), ['again.jsonl.gz'], 'renamed into place, no partial file left')
    assert.match(written.stderr, /^tenant export plant: started\n(.*\n)*tenant export plant: exported: .* in \d+\.\d s\n$/)
    assert.deepEqual(rows(readFileSync(output)), rows(pkg))
    assert.deepEqual(rows(again), rows(pkg))
  })
})
