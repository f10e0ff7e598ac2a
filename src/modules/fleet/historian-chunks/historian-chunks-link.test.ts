import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../../test/harness.ts'
import { CLI_ACTOR } from '../../../identity.ts'
import { streamBatchSamples, type LinkSample } from '../../historian/link.ts'
import { createLinkHttp } from '../agent/http.ts'
import { cloudCell, register, siteServer } from '../enrolment/test-link.ts'
import { samplesOfBatch, seedBatch } from './test-chunks-setup.ts'
import { uploadBatchSamples } from './uploader.ts'
import { chunkDigest } from './wire.ts'
import { LINK_PROTOCOL } from '../site-servers/protocol.ts'

const PROTOCOL = { 'sitegrid-link-protocol': String(LINK_PROTOCOL) }

const SERIES = [
  { instanceId: 'CV-1', tagKey: 'speed', n: 1_300 },
  { instanceId: 'CV-2', tagKey: 'current', n: 900 },
]

for (const dialect of testDialects()) {
  describe(`${dialect} cloud (buildApp, link credential), sqlite site: historian chunks`, () => {
    it("an enrolled site server's batch moves through the real app with its link credential; the cloud's samples equal the site's", async (t) => {
      const cell = await cloudCell(t, dialect)
      const { site, orgs, enrolment } = await siteServer(t)
      const registered = await register(cell.cloud, cell.owner, ['S1'])
      await enrolment.enrol({ cloudUrl: cell.url, code: registered.code, http: cell.http, actor: CLI_ACTOR })
      const local = (await orgs.findBySlug(cell.org.slug))!
      const credential = (await enrolment.credential(local.id))!
      await seedBatch(site.handle.db, local.id, { id: 'bat_e2e', siteCode: 'S1', series: SERIES })
      // The site server's own link client, with its credential (the agent builds it the same way).
      const http = createLinkHttp({ cloudUrl: cell.url, credential, env: {}, timeoutMs: 30_000 })
      t.after(() => http.close())
      const progress = await uploadBatchSamples(http, site.handle.db, 'sqlite', local.id, { id: 'bat_e2e', siteCode: 'S1' }, { chunkSize: 1000 })
      assert.deepEqual([progress.chunks, progress.samples], [3, 2_200])
      assert.deepEqual(
        await samplesOfBatch(cell.cloud.handle.db, cell.org.id, 'S1', 'bat_e2e'),
        await samplesOfBatch(site.handle.db, local.id, 'S1', 'bat_e2e'),
      )

      const listed = await cell.cloud.inject(
        { org: cell.org, bearer: credential },
        { method: 'GET', url: '/api/link/historian/bat_e2e/chunks', headers: PROTOCOL },
      )
      assert.equal(listed.statusCode, 200)
      const digests = []
      for await (const c of streamBatchSamples(site.handle.db, 'sqlite', local.id, 'bat_e2e', { chunkSize: 1000 }))
        digests.push(chunkDigest(c.rows.map((r) => [r.instance_id, r.tag_key, r.ts, r.value, r.text, r.quality] as LinkSample)))
      assert.deepEqual(listed.json(), { batchId: 'bat_e2e', chunks: [0, 1, 2], digests, samples: 2_200, chunkSize: 1000 })
      assert.equal(listed.headers['sitegrid-link-protocol'], String(LINK_PROTOCOL))

      // Its site S1 only: a chunk for S2 is refused, though the organisation has S2 and its instances.
      const samples: Array<[string, string, number, number | null, string | null, number]> = [['CV-1', 'speed', 1, 1, null, 192]]
      const s2 = await cell.cloud.inject(
        { org: cell.org, bearer: credential },
        { method: 'PUT', url: '/api/link/historian/bat_s2/chunks/0', payload: { site: 'S2', samples, sha256: chunkDigest(samples) }, headers: PROTOCOL },
      )
      assert.equal(s2.statusCode, 403)
      assert.equal(s2.json().code, 'LinkSiteNotLinked')
      // The link routes admit the link credential only: the organisation's owner key is refused; no credential is the uniform 401.
      const byOwner = await cell.cloud.inject(cell.owner, { method: 'GET', url: '/api/link/historian/bat_e2e/chunks', headers: PROTOCOL })
      assert.equal(byOwner.statusCode, 403)
      const anonymous = await cell.cloud.inject(undefined, {
        method: 'GET',
        url: '/api/link/historian/bat_e2e/chunks',
        headers: PROTOCOL,
        host: `${cell.org.slug}.localhost`,
      })
      assert.equal(anonymous.statusCode, 401)
      // Revoked: the uniform 401, nothing more stored.
      assert.equal((await cell.as('POST', `/api/admin/site-servers/${registered.id}/revoke`)).statusCode, 200)
      const revoked = await cell.cloud.inject(
        { org: cell.org, bearer: credential },
        { method: 'PUT', url: '/api/link/historian/bat_e2e/chunks/3', payload: { site: 'S1', samples, sha256: chunkDigest(samples) }, headers: PROTOCOL },
      )
      assert.equal(revoked.statusCode, 401)
      const chunks = await cell.cloud.handle.db.selectFrom('link_chunks').select('chunk').where('org_id', '=', cell.org.id).execute()
      assert.equal(chunks.length, 3)
    })
  })
}
