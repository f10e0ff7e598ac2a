import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { gate } from '../../../../test/support/fleet-link.ts'
import { startTcpProxy } from '../../../../test/support/tcp-proxy.ts'
import { CLI_ACTOR } from '../../../identity.ts'
import { createLinkHttp } from '../agent/http.ts'
import { cloudCell, FAST_LINK, register, siteServer, until } from './test-link.ts'

// Issue 26, a seed taken while the cloud is busy (PostgreSQL: a reader only takes the changes of transactions older
// than every one still running, so a seed's cursor stops short of a change committed after an older transaction began,
// and the package, read after, carries that change). The site's edit of such a row, made before its first pull, must
// neither be undone by the pull bringing that change again nor be settled as a conflict: the site edited the newest
// version. Only PostgreSQL has this window between a cursor and a commit (on SQLite the seed's writes and reads are
// one writer's order); the code under test (link_seed_versions) is the same on both.

describe('postgres cloud, sqlite site: a seed taken while another transaction runs', () => {
  it("a cloud edit the seed's package carries but its cursor does not: the pull does not bring it again and the site's edit made before the first pull wins without a conflict", async (t) => {
    const cell = await cloudCell(t, 'postgres', { SITEGRID_LINK_PULL_POLL_MS: '20' })
    const proxy = await startTcpProxy(cell.port)
    t.after(() => proxy.close())
    const cloudUrl = `http://${cell.host}:${proxy.port}`
    const { site, orgs, enrolment } = await siteServer(t, FAST_LINK)
    const server = await register(cell.cloud, cell.owner, ['S1'])
    const inCloud = (method: 'GET' | 'PUT', url: string, payload?: object) => cell.cloud.inject(cell.owner, { method, url, ...(payload ? { payload } : {}) })
    const [plc] = (await inCloud('GET', '/api/sites/S1/controllers')).json().items as Array<{ id: string }>
    assert.ok(plc)

    // An older transaction holds the readers' horizon while the cloud renames the controller and the seed is taken.
    const holding = gate()
    const release = gate()
    const older = cell.cloud.handle.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx)
      holding.open()
      await release.opened
    })
    await holding.opened
    assert.equal((await inCloud('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'renamed during the seed' })).statusCode, 200)
    const http = createLinkHttp({ cloudUrl, env: {}, timeoutMs: 30_000 })
    t.after(() => http.close())
    const enrolled = await enrolment.enrol({ cloudUrl, code: server.code, http, actor: CLI_ACTOR })
    assert.deepEqual(enrolled.seeded, ['S1'])
    const local = (await orgs.findBySlug(cell.org.slug))!
    const siteName = async () =>
      (await site.handle.db.selectFrom('controllers').select('name').where('org_id', '=', local.id).where('id', '=', plc.id).executeTakeFirstOrThrow()).name
    assert.equal(await siteName(), 'renamed during the seed', 'the package carries the rename')
    const rename = await cell.cloud.handle.db
      .selectFrom('link_outbox')
      .select(['tx', 'seq'])
      .where('org_id', '=', cell.org.id)
      .where('table_name', '=', 'controllers')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow()
    const mark = await site.handle.db.selectFrom('link_marks').select(['tx', 'seq']).where('org_id', '=', local.id).executeTakeFirstOrThrow()
    assert.ok(Number(mark.tx) < Number(rename.tx), "the seed's cursor stops short of the rename: the pull will read it")

    // Offline before the first pull, the site's engineer edits that controller.
    proxy.cut()
    const siteKey = (await site.mintKey(local, 'owner')).plaintext
    const onSite = (method: 'GET' | 'PUT', url: string, payload?: object) =>
      site.inject({ org: local, apiKey: siteKey }, { method, url, ...(payload ? { payload } : {}) })
    assert.equal((await onSite('PUT', `/api/sites/S1/controllers/${plc.id}`, { name: 'fixed on site' })).statusCode, 200)
    release.open()
    await older
    proxy.heal()

    await until(
      "the site's edit in the cloud",
      async () => ((await inCloud('GET', `/api/sites/S1/controllers/${plc.id}`)).json() as { name: string }).name,
      (name) => name === 'fixed on site',
    )
    await until(
      'the link idle',
      async () => (await onSite('GET', '/api/link')).json() as { state: string; up: { items: number } },
      (s) => s.state === 'online' && s.up.items === 0,
    )
    assert.deepEqual((await inCloud('GET', '/api/link/conflicts')).json().items, [], 'no conflict')
    assert.equal(await siteName(), 'fixed on site', 'the pull did not bring the rename back')
  })
})
