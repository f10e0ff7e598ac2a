import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { runSitegrid } from './cli-run.ts'

function workdir(t: { after: (fn: () => void) => void }): string {
  const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-site-cli-'))
  t.after(() => rmSync(cwd, { recursive: true, force: true }))
  assert.equal(runSitegrid(['init'], { cwd }).code, 0)
  assert.equal(runSitegrid(['org', 'create', 'plant'], { cwd }).code, 0)
  return cwd
}

describe('sitegrid site-user and site-key', () => {
  it('add reads the PIN from standard input (never argv), prints the id alone, and the PIN appears nowhere in the output', (t) => {
    const cwd = workdir(t)
    const added = runSitegrid(['site-user', 'add', '--email', 'Owner@Plant.example', '--name', 'Site Owner', '--role', 'owner'], { cwd, input: '24681357\n' })
    assert.equal(added.code, 0, added.stderr)
    assert.match(added.stdout, /^su_[0-9A-Z]{26}\n$/)
    assert.ok(!added.stdout.includes('24681357') && !added.stderr.includes('24681357'))
    const onArgv = runSitegrid(['site-user', 'add', '--email', 'x@plant.example', '--name', 'X', '--role', 'member', '--pin', '123456'], { cwd })
    assert.equal(onArgv.code, 2, 'there is no --pin option')
    const shortPin = runSitegrid(['site-user', 'add', '--email', 'y@plant.example', '--name', 'Y', '--role', 'member'], { cwd, input: '12345\n' })
    assert.equal(shortPin.code, 1)
    assert.match(shortPin.stderr, /ValidationFailed/)
    const dup = runSitegrid(['site-user', 'add', '--email', 'owner@plant.example', '--name', 'Twin', '--role', 'member'], { cwd, input: '13572468\n' })
    assert.equal(dup.code, 1)
    assert.match(dup.stderr, /Conflict/)
    const list = runSitegrid(['site-user', 'list', '--json'], { cwd })
    const users = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    assert.deepEqual(
      users.map((u) => [u.email, u.siteRole]),
      [['owner@plant.example', 'owner']],
    )
    assert.ok(!list.stdout.includes('scrypt'))
  })

  it('set-role, set-pin and remove find users by e-mail or id, and keep the last owner', (t) => {
    const cwd = workdir(t)
    const owner = runSitegrid(['site-user', 'add', '--email', 'owner@plant.example', '--name', 'Owner', '--role', 'owner'], {
      cwd,
      input: '24681357\n',
    }).stdout.trim()
    const member = runSitegrid(['site-user', 'add', '--email', 'op@plant.example', '--name', 'Operator', '--role', 'member', '--org', 'plant'], {
      cwd,
      input: '11223344\n',
    }).stdout.trim()
    assert.match(member, /^su_/)
    const lastOwner = runSitegrid(['site-user', 'remove', 'owner@plant.example'], { cwd })
    assert.equal(lastOwner.code, 1)
    assert.match(lastOwner.stderr, /Conflict/)
    const demote = runSitegrid(['site-user', 'set-role', owner, '--role', 'admin'], { cwd })
    assert.equal(demote.code, 1)
    assert.equal(runSitegrid(['site-user', 'set-role', 'op@plant.example', '--role', 'owner'], { cwd }).code, 0)
    assert.equal(runSitegrid(['site-user', 'set-pin', member], { cwd, input: '99887766\n' }).code, 0)
    assert.equal(runSitegrid(['site-user', 'remove', 'owner@plant.example'], { cwd }).code, 0)
    const absent = runSitegrid(['site-user', 'remove', 'owner@plant.example'], { cwd })
    assert.equal(absent.code, 1, 'absent: NotFound')
    assert.match(absent.stderr, /NotFound: no site user "owner@plant\.example" in \S+ \(`sitegrid site-user list` shows them\)/, 'named, with where to look')
    const rows = runSitegrid(['site-user', 'list'], { cwd }).stdout.trim().split('\n')
    assert.deepEqual(
      rows.map((r) => r.split('\t').slice(1, 3)),
      [['op@plant.example', 'owner']],
    )
    assert.equal(runSitegrid(['site-user', 'set-role', 'op@plant.example', '--role', 'boss'], { cwd }).code, 2)
  })

  it('unlock needs --email and answers for any e-mail, locked or not (the lock does not tell e-mails apart either)', (t) => {
    const cwd = workdir(t)
    assert.equal(runSitegrid(['site-user', 'unlock'], { cwd }).code, 2)
    const unlocked = runSitegrid(['site-user', 'unlock', '--email', 'nobody@plant.example'], { cwd })
    assert.equal(unlocked.code, 0, unlocked.stderr)
    assert.match(unlocked.stderr, /nobody@plant\.example was not locked/)
  })

  it('site-key rotate adds a key and keeps the old one listed (still verifying); list never shows private material', (t) => {
    const cwd = workdir(t)
    const first = runSitegrid(['site-key', 'rotate'], { cwd })
    assert.equal(first.code, 0, first.stderr)
    const second = runSitegrid(['site-key', 'rotate'], { cwd })
    assert.notEqual(second.stdout.trim(), first.stdout.trim())
    const list = runSitegrid(['site-key', 'list'], { cwd })
      .stdout.trim()
      .split('\n')
      .map((l) => l.split('\t'))
    assert.deepEqual(
      list.map((r) => [r[0], r[1], r[3] === '-']),
      [
        [second.stdout.trim(), 'ES256', true],
        [first.stdout.trim(), 'ES256', false],
      ],
    )
    assert.ok(!JSON.stringify(list).includes('"d"'))
  })
})
