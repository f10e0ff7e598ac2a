import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { startSmtpServer } from '../support/smtp.ts'
import { runCli, runCliAsync } from './process.ts'

describe('sitegrid reminders run-once', () => {
  it('runs one poll from the CLI: a CLI-minted key 27 days from expiry is reminded to the operator address, once', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-rem-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    const smtp = await startSmtpServer()
    t.after(() => smtp.stop())
    const env = {
      SITEGRID_SMTP_HOST: '127.0.0.1',
      SITEGRID_SMTP_PORT: String(smtp.port),
      SITEGRID_SMTP_SECURITY: 'none',
      SITEGRID_OPERATOR_EMAIL: 'ops@plant.example',
      SITEGRID_LOG_LEVEL: 'warn',
    }
    runCli(['init'], { cwd })
    runCli(['org', 'create', 'plant'], { cwd })
    assert.equal(runCli(['key', 'mint', '--org', 'plant', '--role', 'member', '--name', 'historian-bridge', '--expires-in', '27d'], { cwd }).code, 0)
    const first = await runCliAsync(['reminders', 'run-once'], { cwd, env })
    assert.equal(first.code, 0, first.stderr)
    assert.equal(JSON.parse(first.stdout).sent, 1)
    const second = await runCliAsync(['reminders', 'run-once'], { cwd, env })
    assert.equal(JSON.parse(second.stdout).sent, 0)
    assert.equal(smtp.received.length, 1)
    assert.deepEqual(smtp.received[0]!.to, ['ops@plant.example'])
    assert.equal(runCli(['reminders', 'run-once'], { cwd }).code, 78, 'no SMTP relay configured: a clear refusal')
  })
})
