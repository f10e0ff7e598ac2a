import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { CLI_ACTOR } from '../../identity.ts'
import { cloudCell, register, siteServer } from './enrolment/test-link.ts'

for (const dialect of testDialects()) {
  describe(`${dialect} cloud: a linked site is deleted on neither side (issue 26)`, () => {
    it('409 in the cloud while a site server serves it and on that server; deletable once the server is revoked', async (t) => {
      const cell = await cloudCell(t, dialect)
      const { site, orgs, enrolment } = await siteServer(t)
      const server = await register(cell.cloud, cell.owner, ['S1'])
      await enrolment.enrol({ cloudUrl: cell.url, code: server.code, http: cell.http, actor: CLI_ACTOR })
      const local = (await orgs.findBySlug(cell.org.slug))!
      const siteKey = (await site.mintKey(local, 'owner')).plaintext

      const inCloud = await cell.cloud.inject(cell.owner, { method: 'DELETE', url: '/api/sites/S1?confirm=S1' })
      assert.equal(inCloud.statusCode, 409, inCloud.body)
      assert.match(inCloud.json().detail, /served by a site server/)
      const onSite = await site.inject({ org: local, apiKey: siteKey }, { method: 'DELETE', url: '/api/sites/S1?confirm=S1' })
      assert.equal(onSite.statusCode, 409, onSite.body)
      assert.match(onSite.json().detail, /linked to the cloud/)
      assert.equal((await cell.cloud.inject(cell.owner, { url: '/api/sites/S1/controllers' })).json().items.length, 1, 'nothing deleted')
      assert.equal((await site.inject({ org: local, apiKey: siteKey }, { url: '/api/sites/S1/controllers' })).json().items.length, 1)

      // S2 is no server's: deleted as before; S1 once its server is revoked.
      assert.equal((await cell.cloud.inject(cell.owner, { method: 'DELETE', url: '/api/sites/S2?confirm=S2' })).statusCode, 204)
      assert.equal((await cell.cloud.inject(cell.owner, { method: 'POST', url: `/api/admin/site-servers/${server.id}/revoke` })).statusCode, 200)
      assert.equal((await cell.cloud.inject(cell.owner, { method: 'DELETE', url: '/api/sites/S1?confirm=S1' })).statusCode, 204)
    })
  })
}
