import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { connectDatabase } from '../../db/connect.ts'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'
import { startSmtpServer } from '../../../test/support/smtp.ts'
import { createSmtpSender } from './mail.ts'
import { createReminderService } from './service.ts'
import { creatorDirectory } from '../../jobs/creator-directory.ts'
import { createIdentityServices } from '../../app.ts'
import { createSiteUsersService } from '../site-users/service.ts'
import { CLI_ACTOR } from '../../identity.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const OPERATOR = 'ops@cell.example'

async function setup(t: Parameters<typeof harness>[0], dialect: Parameters<typeof harness>[1]) {
  const smtp = await startSmtpServer()
  t.after(() => smtp.stop())
  const h = await harness(t, dialect)
  const send = createSmtpSender({
    host: '127.0.0.1',
    port: smtp.port,
    security: 'none',
    user: undefined,
    password: undefined,
    from: 'sitegrid <no-reply@cell.example>',
  })
  const service = (handle = h.handle) =>
    createReminderService({
      handle,
      clock: h.clock,
      send,
      operatorEmail: OPERATOR,
      directory: creatorDirectory(createIdentityServices({ config: h.config, handle, clock: h.clock })),
    })
  return { h, smtp, service }
}

const mailsFor = (smtp: Awaited<ReturnType<typeof startSmtpServer>>, keyName: string) => smtp.received.filter((m) => m.raw.includes(`"${keyName}"`))

async function keyExpiringIn(h: Harness, lifetimeMs: number, name: string) {
  const org = await h.createOrg()
  return { org, ...(await h.mintKey(org, 'admin', { lifetimeMs, name })) }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: key expiry reminders`, () => {
    it('the window is 24 to 30 days from expiry: 23 d 23 h and 30 d 1 h are not reminded, 24 d and 30 d are', async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      const cases: Array<[string, number, boolean]> = [
        ['k-23d23h', 23 * DAY + 23 * HOUR, false],
        ['k-24d', 24 * DAY, true],
        ['k-30d', 30 * DAY, true],
        ['k-30d1h', 30 * DAY + HOUR, false],
      ]
      for (const [name, lifetime] of cases) await keyExpiringIn(h, lifetime, name)
      await service().runOnce()
      for (const [name, , reminded] of cases) assert.equal(mailsFor(smtp, name).length, reminded ? 1 : 0, name)
    })

    it('a reminder names the organisation, key name, prefix, role and expiry, says how to rotate, and holds no secret', async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      const { org, plaintext, keyId } = await keyExpiringIn(h, 27 * DAY, 'scada-bridge')
      await service().runOnce()
      const [mail] = mailsFor(smtp, 'scada-bridge')
      assert.ok(mail)
      assert.deepEqual(mail.to, [OPERATOR], 'a CLI-minted key is reminded to the operator address')
      for (const part of [org.name, plaintext.slice(0, 8), 'admin', keyId, 'revoke', 'mint']) assert.ok(mail.raw.includes(part), part)
      assert.ok(!mail.raw.includes(plaintext.slice(8)), 'no part of the secret')
    })

    it('at most one reminder per window: polls through the window send once (7-day cooldown)', async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      await keyExpiringIn(h, 30 * DAY, 'once')
      const job = service()
      for (let day = 0; day < 7; day++) {
        await job.runOnce()
        h.clock.advance(DAY)
      }
      assert.equal(mailsFor(smtp, 'once').length, 1)
    })

    it('a revoked key is never reminded', async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      const { org, keyId } = await keyExpiringIn(h, 25 * DAY, 'revoked-one')
      const owner = await h.mintKey(org, 'owner', { lifetimeMs: 400 * DAY })
      await h.inject({ org, apiKey: owner.plaintext }, { method: 'DELETE', url: `/api/admin/api-keys/${keyId}` })
      await service().runOnce()
      assert.equal(mailsFor(smtp, 'revoked-one').length, 0)
    })

    it("a key minted by a key goes to that key's creator, followed up the chain; no address is recorded and skipped", async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      const org = await h.createOrg()
      const root = await h.mintKey(org, 'owner', { lifetimeMs: 400 * DAY })
      const child = await h.inject(
        { org, apiKey: root.plaintext },
        { method: 'POST', url: '/api/admin/api-keys', payload: { role: 'admin', name: 'child', expiresAt: new Date(h.clock.now() + 300 * DAY).toISOString() } },
      )
      const grandchild = await h.inject(
        { org, apiKey: child.json().plaintext },
        {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role: 'member', name: 'grandchild', expiresAt: new Date(h.clock.now() + 26 * DAY).toISOString() },
        },
      )
      assert.equal(grandchild.statusCode, 201)
      const orphanOrg = await h.createOrg()
      await h.handle.db
        .insertInto('api_keys')
        .values({
          org_id: orphanOrg.id,
          id: '11111111-1111-4111-8111-111111111111',
          prefix: 'csk_XXXX',
          verifier: 'f'.repeat(64),
          role: 'member',
          name: 'orphan',
          created_by_kind: 'user',
          created_by_user_id: 'pairwise-sub',
          created_by_account: null,
          created_at: h.clock.now(),
          expires_at: h.clock.now() + 26 * DAY,
          last_used_at: null,
          revoked_at: null,
          revoke_reason: null,
          revoked_by: null,
        })
        .execute()
      const summary = await service().runOnce()
      assert.deepEqual(
        mailsFor(smtp, 'grandchild').map((m) => m.to),
        [[OPERATOR]],
      )
      assert.equal(mailsFor(smtp, 'orphan').length, 0)
      assert.ok(summary.skipped >= 1)
      const row = await h.handle.db.selectFrom('key_reminders').selectAll().where('org_id', '=', orphanOrg.id).executeTakeFirstOrThrow()
      assert.equal(row.status, 'skipped')
    })

    it("a key minted by a site-PIN principal is reminded to that site user's e-mail", async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      const org = await h.createOrg()
      const user = await createSiteUsersService({ handle: h.handle, clock: h.clock }).create(org.id, CLI_ACTOR, {
        email: 'shift.lead@plant.example',
        displayName: 'Shift lead',
        siteRole: 'admin',
        pin: '48151623',
      })
      await h.mintKey(org, 'member', { lifetimeMs: 25 * DAY, name: 'pin-minted', actor: { kind: 'sitePin', subject: user.id, role: 'admin' } })
      await service().runOnce()
      assert.deepEqual(
        mailsFor(smtp, 'pin-minted').map((m) => m.to),
        [['shift.lead@plant.example']],
      )
    })

    it("a key minted by a signed-in user is reminded to that member's e-mail, found by its oid; a revoked member is skipped", async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      const org = await h.createOrg()
      const member = (oid: string, email: string, status: string) => ({
        org_id: org.id,
        account_id: oid,
        status,
        role: status === 'active' ? 'admin' : null,
        email,
        name: null,
        requested_at: h.clock.now(),
        decided_at: h.clock.now(),
        decided_by: 'cli',
      })
      await h.handle.db
        .insertInto('memberships')
        .values([member('oid-ada', 'ada@plant.example', 'active'), member('oid-mo', 'mo@plant.example', 'revoked')])
        .execute()
      await h.mintKey(org, 'member', {
        lifetimeMs: 25 * DAY,
        name: 'ada-minted',
        actor: { kind: 'user', subject: 'pairwise-ada', account: 'oid-ada', role: 'admin' },
      })
      await h.mintKey(org, 'member', {
        lifetimeMs: 25 * DAY,
        name: 'mo-minted',
        actor: { kind: 'user', subject: 'pairwise-mo', account: 'oid-mo', role: 'admin' },
      })
      const summary = await service().runOnce()
      assert.deepEqual(
        mailsFor(smtp, 'ada-minted').map((m) => m.to),
        [['ada@plant.example']],
      )
      assert.equal(mailsFor(smtp, 'mo-minted').length, 0)
      assert.equal(summary.sent, 1)
      assert.equal(summary.skipped, 1)
    })

    it('an SMTP failure is retried on the next poll, and a successful send is never repeated', async (t) => {
      const { h, smtp, service } = await setup(t, dialect)
      await keyExpiringIn(h, 28 * DAY, 'flaky')
      smtp.failNext(1)
      const job = service()
      const first = await job.runOnce()
      assert.ok(first.failed >= 1)
      assert.equal(mailsFor(smtp, 'flaky').length, 0)
      h.clock.advance(DAY)
      await job.runOnce()
      assert.equal(mailsFor(smtp, 'flaky').length, 1)
      h.clock.advance(DAY)
      await job.runOnce()
      assert.equal(mailsFor(smtp, 'flaky').length, 1)
    })

    if (dialect === 'postgres') {
      it('two processes polling at the same moment send each reminder once', async (t) => {
        const { h, smtp, service } = await setup(t, dialect)
        const names = Array.from({ length: 12 }, (_, i) => `race-${i}`)
        for (const name of names) await keyExpiringIn(h, 27 * DAY, name)
        const other = await connectDatabase(h.config.databaseUrl, { poolSize: 4 })
        t.after(() => other.close())
        const [a, b] = await Promise.all([service().runOnce(), service(other).runOnce()])
        for (const name of names) assert.equal(mailsFor(smtp, name).length, 1, name)
        assert.equal(a.sent + b.sent, names.length)
      })
    }
  })
}
