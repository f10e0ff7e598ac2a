import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CLI_ACTOR } from '../../src/identity.ts'
import { systemClock } from '../../src/clock.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKeysService } from '../../src/modules/api-keys/service.ts'
import { createOrgsService } from '../../src/modules/orgs/service.ts'
import { KEY_SECRET, sleep, testDialects } from '../harness.ts'
import { appRoleEnv } from '../hardening/process-support.ts'
import { createTestDatabase } from '../postgres.ts'
import { httpRequest, startServer } from './process.ts'

// PostgreSQL only: a SQLite file is served by one process; a second is refused (test/hardening/cell-concurrency.test.ts).
for (const dialect of testDialects().filter((d): boolean => d === 'postgres')) {
  describe(`${dialect}: two server processes on one database`, () => {
    it('a key revoked through one process stops authenticating at once in the other, whose cache had verified it', async (t) => {
      const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-procs-'))
      t.after(() => rmSync(cwd, { recursive: true, force: true }))
      const databaseUrl = dialect === 'sqlite' ? `sqlite:${join(cwd, 'cell.db')}` : await createTestDatabase(process.env.TEST_DATABASE_URL!)
      const handle = await connectDatabase(databaseUrl, { poolSize: 1 })
      await migrateToLatest(handle.db)
      // PostgreSQL: the processes serve as the non-owner application role, under row-level security.
      const appRole = await appRoleEnv(handle, databaseUrl)
      const org = await createOrgsService({ handle, clock: systemClock }).provision('cell')
      const keys = createApiKeysService({ handle, clock: systemClock, keySecret: Buffer.from(KEY_SECRET, 'base64') })
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
      const admin = await keys.mint(org.id, CLI_ACTOR, { role: 'owner', name: 'admin', expiresAt })
      const victim = await keys.mint(org.id, CLI_ACTOR, { role: 'admin', name: 'victim', expiresAt })
      await handle.close()

      const env = {
        DATABASE_URL: databaseUrl,
        ...appRole,
        SITEGRID_KEY_SECRET: KEY_SECRET,
        SITEGRID_MODE: 'cloud',
        SITEGRID_LOG_LEVEL: 'warn',
        SITEGRID_LAST_USED_FLUSH_MS: '100',
      }
      const [a, b] = await Promise.all([startServer({ cwd, env }), startServer({ cwd, env })])
      t.after(async () => {
        await a.stop()
        await b.stop()
      })
      const call = (server: typeof a, key: string, init: { method?: string } = {}) =>
        httpRequest(`${server.url}/api/admin/api-keys${init.method === 'DELETE' ? `/${victim.keyId}` : ''}`, {
          ...init,
          headers: { host: 'cell.localhost', 'x-api-key': key },
        })

      assert.equal((await call(a, victim.plaintext)).status, 200)
      assert.equal((await call(b, victim.plaintext)).status, 200, 'process B has verified (and cached) the key')
      assert.equal((await call(a, admin.plaintext, { method: 'DELETE' })).status, 204)
      // PostgreSQL delivers NOTIFY at commit, asynchronously: allow B the few milliseconds the notification takes.
      let status = 0
      for (let i = 0; i < 20; i++) {
        status = (await call(b, victim.plaintext)).status
        if (status === 401) break
        await sleep(25)
      }
      assert.equal(status, 401, 'process B refuses the revoked key')
      assert.equal((await call(a, victim.plaintext)).status, 401)

      await sleep(400)
      const list = (await call(b, admin.plaintext)).json() as Array<{ keyId: string; lastUsedAt: string | null }>
      assert.ok(list.find((k) => k.keyId === admin.keyId)?.lastUsedAt, 'lastUsedAt written by the processes is visible')
    })
  })
}
