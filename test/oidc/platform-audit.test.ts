import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createPlatformAdminsService } from '../../src/modules/orgs/platform-admins-service.ts'
import { runCli } from '../cli/process.ts'
import { harness, testDialects } from '../harness.ts'

interface AuditLine {
  at: string
  actorKind: string
  actorId: string
  action: string
  target: string
  detail: Record<string, unknown>
}

describe('sitegrid platform-admin audit', () => {
  it('add and remove write a platform audit record naming the operating-system user; a no-op or a failed change writes none', (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-pa-audit-'))
    t.after(() => rmSync(cwd, { recursive: true, force: true }))
    const env = { USER: 'ops-alice' }
    assert.equal(runCli(['init'], { cwd, env }).code, 0)
    assert.equal(runCli(['platform-admin', 'add', 'oid-root', '--note', 'on-call'], { cwd, env }).code, 0)
    assert.equal(runCli(['platform-admin', 'add', 'oid-root'], { cwd, env }).code, 0, 'idempotent add')
    assert.equal(runCli(['platform-admin', 'remove', 'oid-root'], { cwd, env: { USER: 'ops-bob' } }).code, 0)
    assert.equal(runCli(['platform-admin', 'remove', 'oid-root'], { cwd, env }).code, 1, 'not listed any more')
    const out = runCli(['platform-admin', 'audit', '--json'], { cwd, env })
    assert.equal(out.code, 0, out.stderr)
    const lines = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditLine)
    assert.deepEqual(
      lines.map((l) => [l.action, l.target, l.actorKind, l.actorId, l.detail]),
      [
        ['platform_admin.remove', 'oid-root', 'cli', 'cli:ops-bob', {}],
        ['platform_admin.add', 'oid-root', 'cli', 'cli:ops-alice', { note: 'on-call' }],
      ],
    )
    assert.ok(Date.parse(lines[0]!.at) >= Date.parse(lines[1]!.at))
    const text = runCli(['platform-admin', 'audit', '--limit', '1'], { cwd, env })
    assert.equal(text.stdout.trim().split('\n').length, 1)
    assert.match(text.stdout, /\tcli\tcli:ops-bob\tplatform_admin\.remove\toid-root\t\{\}$/m)
    assert.equal(runCli(['platform-admin', 'audit', '--limit', '0'], { cwd, env }).code, 2)
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: platform audit records`, () => {
    it("are written in the transaction of the change, newest first, paged, and reach no organisation's audit log", async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const admins = createPlatformAdminsService({ handle: h.handle, clock: h.clock })
      const actor = { kind: 'cli' as const, subject: 'cli:ops', role: 'owner' as const }
      assert.equal(await admins.add('oid-a', 'first', actor), true)
      h.clock.advance(1000)
      assert.equal(await admins.add('oid-a', 'again', actor), false)
      await assert.rejects(admins.remove('oid-missing', actor), { code: 'NotFound' })
      await admins.remove('oid-a', actor)
      const all = await admins.auditLog(10)
      assert.deepEqual(
        all.map((r) => [r.action, r.target, r.actorId, r.detail]),
        [
          ['platform_admin.remove', 'oid-a', 'cli:ops', {}],
          ['platform_admin.add', 'oid-a', 'cli:ops', { note: 'first' }],
        ],
      )
      const first = await admins.auditLog(1)
      assert.deepEqual(
        (await admins.auditLog(1, first[0])).map((r) => r.id),
        [all[1]!.id],
      )
      const tenantAudit = await h.inject({ org, apiKey: key }, { method: 'GET', url: `/api/admin/orgs/${org.slug}/audit` })
      assert.equal(tenantAudit.statusCode, 200, tenantAudit.body)
      assert.doesNotMatch(tenantAudit.body, /platform_admin|oid-a/)
    })
  })
}
