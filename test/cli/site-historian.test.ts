import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { connectDatabase } from '../../src/db/connect.ts'
import type { OrgId } from '../../src/ids.ts'
import { SAMPLES_DIR } from '../../src/modules/historian/parse/test-support.ts'
import { postgresUrl, sleep, testDialects } from '../harness.ts'
import { historianCounts, seedPlant, trendRows } from '../support/historian-upload.ts'
import { BIN, runCli } from './process.ts'

function folder(t: TestContext, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sitegrid-${name}-`))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const CHEMISTRY = join(SAMPLES_DIR, 'hurence_chemistry_long.csv')

describe('sitegrid site and historian commands (processes)', () => {
  it('SQLite, from another working directory: a missing data folder is refused (78) naming it; the config file elsewhere finds its secret and database; site create|list|show|update|delete; refused values name the option and the rule', (t) => {
    const home = folder(t, 'home')
    const elsewhere = folder(t, 'elsewhere')
    const missing = runCli(['org', 'list'], { cwd: elsewhere })
    assert.equal(missing.code, 78, missing.stderr)
    assert.match(missing.stderr, new RegExp(`the data folder ${join(elsewhere, 'data')} does not exist`))
    assert.match(missing.stderr, /SITEGRID_DATA_DIR/)
    assert.match(missing.stderr, /sitegrid init/)
    assert.equal(existsSync(join(elsewhere, 'data')), false, 'nothing created')

    assert.equal(runCli(['init'], { cwd: home }).code, 0)
    const configFile = join(home, 'data', 'sitegrid.json')
    assert.deepEqual(JSON.parse(readFileSync(configFile, 'utf8')), { SITEGRID_KEY_SECRET_FILE: 'key-secret' }, 'relative to the file')
    const env = { SITEGRID_CONFIG_FILE: configFile }
    const cli = (...args: string[]) => runCli(args, { cwd: elsewhere, env })
    assert.equal(cli('org', 'create', 'plant').code, 0)
    const minted = cli('key', 'mint', '--org', 'plant', '--role', 'owner', '--name', 'k', '--expires-in', '1d')
    assert.equal(minted.code, 0, minted.stderr) // the secret file named relative to the config file is found

    const created = cli('site', 'create', 'plant-1', '--name', 'Plant 1', '--time-zone', 'Australia/Sydney', '--status', 'operational', '--json')
    assert.equal(created.code, 0, created.stderr)
    assert.deepEqual(
      (({ code, name, timeZone, status, statusName, location }) => ({ code, name, timeZone, status, statusName, location }))(JSON.parse(created.stdout)),
      { code: 'plant-1', name: 'Plant 1', timeZone: 'Australia/Sydney', status: 2, statusName: 'Operational', location: null },
    )
    const refused = cli('site', 'create', 'bad code', '--name', '', '--status', '9')
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /ValidationFailed/)
    assert.match(refused.stderr, /\(CODE: must match pattern/)
    assert.match(refused.stderr, /\(--name: must NOT have fewer than 1 characters\)/)
    assert.match(refused.stderr, /\(--status: /)
    const badZone = cli('site', 'update', 'plant-1', '--time-zone', 'Mars/Olympus')
    assert.equal(badZone.code, 1)
    assert.match(badZone.stderr, /timeZone: must be an IANA time zone/)
    assert.match(cli('site', 'create', 'plant-1', '--name', 'again').stderr, /Conflict: A site with code plant-1 already exists/)
    assert.equal(cli('site', 'create', 'plant-2', '--name', 'Plant 2').code, 0)

    const listed = cli('site', 'list')
    assert.equal(listed.code, 0, listed.stderr)
    assert.deepEqual(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/ {2,}/)),
      [
        ['CODE', 'NAME', 'STATUS', 'TIME ZONE', 'LOCATION'],
        ['plant-1', 'Plant 1', '2 Operational', 'Australia/Sydney', '-'],
        ['plant-2', 'Plant 2', '0 Planned', 'UTC', '-'],
      ],
    )
    assert.equal(cli('site', 'list', '--status', 'Operational', '--json').stdout.trim().split('\n').length, 1)
    const updated = cli('site', 'update', 'plant-1', '--location', 'Hunter Valley', '--description', 'CHPP', '--status', '3')
    assert.equal(updated.code, 0, updated.stderr)
    assert.match(updated.stdout, /^location: +Hunter Valley$/m)
    assert.match(updated.stdout, /^status: +3 Maintenance$/m)
    assert.equal(JSON.parse(cli('site', 'update', 'plant-1', '--description', '', '--json').stdout).description, null, "'' clears it")
    assert.equal(cli('site', 'update', 'plant-1').code, 2, 'nothing to change is bad usage')
    assert.match(cli('site', 'show', 'plant-1').stdout, /^name: +Plant 1$/m)

    const unconfirmed = cli('site', 'delete', 'plant-1')
    assert.equal(unconfirmed.code, 1)
    assert.match(unconfirmed.stderr, /nothing deleted\. Deleting site plant-1 removes controllers: 0, .*Repeat with --confirm plant-1/s)
    assert.equal(cli('site', 'show', 'plant-1').code, 0, 'still there')
    assert.equal(cli('site', 'delete', 'plant-1', '--confirm', 'plant-1').code, 0)
    assert.match(cli('site', 'show', 'plant-1').stderr, /NotFound: no site "plant-1" in \S+ \(`sitegrid site list` shows them\)/)
    assert.match(cli('site', 'update', 'plant-1', '--name', 'X').stderr, /NotFound: no site "plant-1"/)
    assert.match(cli('historian', 'batches', '--site', 'plant-1').stderr, /NotFound: no site "plant-1"/)
    assert.equal(existsSync(join(elsewhere, 'data')), false, 'no command created a data folder in the working directory')
  })

  for (const dialect of testDialects()) {
    it(`${dialect}: historian import of a real sample with its mapping (plain progress lines), historian batches, a refused duplicate; Ctrl-C during an import leaves nothing (exit 130)`, async (t) => {
      const cwd = folder(t, 'historian')
      let env: Record<string, string> = {}
      let databaseUrl = `sqlite:${join(cwd, 'data', 'sitegrid.db')}`
      if (dialect === 'sqlite') runCli(['init'], { cwd })
      else env = { DATABASE_URL: (databaseUrl = await postgresUrl()) }
      const slug = `hist-${Date.now().toString(36)}`
      const cli = (...args: string[]) => runCli([...args, '--org', slug], { cwd, env })
      const orgId = runCli(['org', 'create', slug], { cwd, env }).stdout.trim() as OrgId
      const handle = await connectDatabase(databaseUrl, { poolSize: 1 })
      t.after(() => handle.close())
      await seedPlant(handle.db, orgId, { siteCode: 'plant-1', instances: [{ id: 'ins_chem' }, { id: 'ins_pump' }], at: Date.now() })

      // The sample's every tag mapped to one instance (README of the samples: `;`, day-first dates, -9999 sentinels).
      const tags = new Set(
        readFileSync(CHEMISTRY, 'utf8')
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(';')[1]!),
      )
      const mapping = join(cwd, 'chemistry-mapping.csv')
      writeFileSync(mapping, `historian_tag,instance_id,tag_key\n${[...tags].map((tag) => `${tag},ins_chem,${tag.toLowerCase()}`).join('\n')}\n`)
      const options = ['--site', 'plant-1', '--mapping', mapping, '--format', 'long', '--date-order', 'dmy', '--quality-scale', 'percent', '--sentinels=-9999']
      const imported = cli('historian', 'import', CHEMISTRY, ...options, '--timezone', 'Europe/Paris', '--json')
      assert.equal(imported.code, 0, imported.stderr)
      const batch = JSON.parse(imported.stdout)
      assert.equal(batch.status, 'complete')
      assert.equal(batch.rowsRead, 3495)
      assert.equal(batch.sentinelValues, 64)
      assert.equal(batch.rowsRejected, 0)
      assert.equal(
        batch.valuesRead,
        batch.samplesStored + batch.collisions + batch.rowsRejected + batch.duplicatesInFile + batch.sentinelValues + batch.emptyValues,
      )
      assert.equal(batch.timezone, 'Europe/Paris')
      const lines = imported.stderr.trim().split('\n')
      assert.equal(lines[0], 'historian import hurence_chemistry_long.csv: started, 186.7 kB', 'a plain start line on a non-terminal')
      assert.match(lines.at(-1)!, /^historian import hurence_chemistry_long\.csv: imported: 186\.7 kB, 3,496 lines in \d+\.\d s$/)
      assert.ok(!imported.stderr.includes('\r'), 'no bar off a terminal')
      assert.equal((await historianCounts(handle, orgId)).samples, batch.samplesStored)

      const again = cli('historian', 'import', CHEMISTRY, ...options)
      assert.equal(again.code, 1)
      assert.match(again.stderr, new RegExp(`Conflict: .*${batch.id}`))
      const table = cli('historian', 'batches', '--site', 'plant-1')
      assert.equal(table.code, 0, table.stderr)
      const [header, row, ...rest] = table.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/ {2,}/))
      assert.deepEqual(header!.slice(0, 7), ['BATCH', 'STATUS', 'FORMAT', 'ROWS', 'SAMPLES', 'REJECTED', 'COLLISIONS'])
      assert.deepEqual(row!.slice(0, 6), [batch.id, 'complete', 'long', '3,495', batch.samplesStored.toLocaleString('en-US'), '0'])
      assert.deepEqual(rest, [], 'the refused duplicate left no batch')

      // Ctrl-C: a trend file arriving through a pipe; SIGINT once a write transaction of the import has committed.
      const before = await historianCounts(handle, orgId)
      const fifo = join(cwd, 'trend.fifo')
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0)
      const pumpMapping = join(cwd, 'pump-mapping.csv')
      writeFileSync(pumpMapping, 'historian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_pump,q\n')
      const child = spawn(BIN, ['historian', 'import', fifo, '--site', 'plant-1', '--mapping', pumpMapping, '--format', 'long', '--org', slug], {
        cwd,
        env: { PATH: process.env.PATH, ...env },
      })
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += String(d)))
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      const writer = createWriteStream(fifo)
      writer.on('error', () => {}) // the reader is gone after the cancel
      writer.write(`timestamp,tag,value\n${trendRows(60_000, Date.UTC(2024, 0, 1))}`)
      let during = before
      for (let i = 0; i < 600 && during.samples === before.samples; i++) {
        await sleep(100)
        during = await historianCounts(handle, orgId)
      }
      assert.ok(during.samples > before.samples, 'the import wrote a transaction of samples before the cancel')
      assert.ok(during.batches.some((b) => b.status === 'running'))
      child.kill('SIGINT')
      // Ctrl-C on a terminal reaches the writer of the pipe too: it goes once the import has taken the cancel (a read
      // from a pipe waits in a thread of its own, which the process waits for at exit).
      for (let i = 0; i < 600 && !stderr.includes('cancelling'); i++) await sleep(50)
      writer.destroy()
      assert.equal(await exited, 130, stderr)
      assert.match(stderr, /^historian import trend\.fifo: started$/m)
      assert.match(stderr, /sitegrid historian import: cancelled \(SIGINT\); nothing of it was kept/)
      assert.deepEqual(await historianCounts(handle, orgId), before, 'counts before = after: no batch, no sample')
    })
  }
})
