import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it, type TestContext } from 'node:test'
import { harness, testDialects, type Harness } from '../../../../test/harness.ts'
import type { Org } from '../../../identity.ts'
import { streamBatchSamples, type LinkSample } from '../../historian/link.ts'
import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Db } from '../../../db/schema.ts'
import {
  asOrg,
  cloudService,
  countRows,
  samplesOfBatch,
  seedBatch,
  seedForcedBatch,
  siteDatabase,
  SITE,
  T0,
  startCloud,
  type SeriesSpec,
} from './test-chunks-setup.ts'
import { seedPlant } from '../../../../test/support/historian-upload.ts'
import type { HistorianChunksService, LinkPeer } from './service.ts'
import { uploadBatchSamples, type LinkHttp, type UploadProgress } from './uploader.ts'
import { chunkDigest } from './wire.ts'
import { withOrgScope } from '../../../db/tenant-scope.ts'
import { applyPush } from '../sync/apply-push.ts'
import type { Change } from '../sync/outbox-port.ts'
import { change } from '../sync/test-support.ts'
import { LINK_PROTOCOL } from '../site-servers/protocol.ts'

const INSTANCES = ['ins_crusher', 'ins_pump', 'ins_Älv']
/** A site of these instances (test/support/historian-upload.ts). */
const plant = (db: Db, orgId: string, siteCode: string, ids: string[]) => seedPlant(db, orgId, { siteCode, instances: ids.map((id) => ({ id })), at: T0 })
/** 3 100 samples over four tags of three instances, in an order unlike byte order, one tag larger than a page (2 000). */
const SERIES: SeriesSpec[] = [
  { instanceId: 'ins_pump', tagKey: 'flow', n: 700 },
  { instanceId: 'ins_crusher', tagKey: 'power', n: 2_150 },
  { instanceId: 'ins_Älv', tagKey: 'level', n: 50 },
  { instanceId: 'ins_pump', tagKey: 'Flow', n: 200 },
]
const TOTAL = 3_100
const BATCH = 'bat_link1'
const PEER: LinkPeer = { serverId: 'srv_pit', sites: [SITE] }

interface World {
  h: Harness
  org: Org
  site: DatabaseHandle
  chunks: HistorianChunksService
}

/** A cloud (the dialect under test) and a site (SQLite) of one organisation, both with the plant; the site with the batch. */
async function world(t: TestContext, dialect: 'sqlite' | 'postgres'): Promise<World> {
  const h = await harness(t, dialect)
  const org = await h.createOrg()
  await plant(h.handle.db, org.id, SITE, INSTANCES)
  const site = await siteDatabase(t, org)
  await plant(site.db, org.id, SITE, INSTANCES)
  assert.equal(await seedBatch(site.db, org.id, { id: BATCH, siteCode: SITE, series: SERIES }), TOTAL)
  return { h, org, site, chunks: cloudService(h) }
}

/** A LinkHttp that records each PUT's chunk number and cuts the connection at the `failAt`-th PUT (from 1). */
function cutting(http: LinkHttp, failAt = Infinity): LinkHttp & { sent: number[] } {
  const sent: number[] = []
  let puts = 0
  return {
    sent,
    request(path, init) {
      if (init.method === 'PUT') {
        if (++puts === failAt) return Promise.reject(new TypeError('fetch failed: the connection was cut'))
        sent.push(Number(path.split('/').pop()))
      }
      return http.request(path, init)
    },
  }
}

const cloudSamples = (w: World) => samplesOfBatch(w.h.handle.db, w.org.id, SITE, BATCH)
const siteSamples = (w: World) => samplesOfBatch(w.site.db, w.org.id, SITE, BATCH)

async function chunkOf(w: World, n: number, size: number): Promise<LinkSample[]> {
  for await (const c of streamBatchSamples(w.site.db, 'sqlite', w.org.id, BATCH, { fromChunk: n, chunkSize: size })) {
    return c.rows.map(
      (r): LinkSample => [String(r.instance_id), String(r.tag_key), Number(r.ts), r.value as number | null, r.text as string | null, Number(r.quality)],
    )
  }
  throw new Error(`no chunk ${n}`)
}

/** What the site's link client adds to a JSON request (fleet/agent/http.ts), for the requests sent raw. */
const LINK = { 'sitegrid-link-protocol': String(LINK_PROTOCOL) }
const LINK_JSON = { 'content-type': 'application/json', ...LINK }
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

const body = (samples: LinkSample[], site = SITE) => ({ site, samples, sha256: chunkDigest(samples) })

describe('site: streamBatchSamples (SQLite)', () => {
  it("yields every sample of the batch and no other batch's, in byte order of instance and tag then by time, in chunks of chunkSize", async (t) => {
    const w = await world(t, 'sqlite')
    const chunks = []
    for await (const c of streamBatchSamples(w.site.db, 'sqlite', w.org.id, BATCH, { chunkSize: 450 })) chunks.push(c)
    assert.deepEqual(
      chunks.map((c) => c.chunk),
      [0, 1, 2, 3, 4, 5, 6],
    )
    assert.deepEqual(
      chunks.map((c) => c.rows.length),
      [450, 450, 450, 450, 450, 450, 400],
    )
    const streamed = chunks.flatMap((c) => c.rows.map((r) => [r.instance_id, r.tag_key, r.ts, r.value, r.text, r.quality]))
    assert.deepEqual(streamed, await siteSamples(w))
    assert.ok(chunks.every((c) => c.rows.every((r) => r.batch_id === BATCH && r.site_code === SITE)))
  })

  it('chunk n read from chunk n is the chunk n of a read from the start (a resumed upload sends the same samples)', async (t) => {
    const w = await world(t, 'sqlite')
    const all: LinkSample[][] = []
    for (let n = 0; ; n++) {
      const rows = []
      for await (const c of streamBatchSamples(w.site.db, 'sqlite', w.org.id, BATCH, { chunkSize: 333 })) if (c.chunk === n) rows.push(...c.rows)
      if (rows.length === 0) break
      all.push(rows.map((r) => [r.instance_id, r.tag_key, r.ts, r.value, r.text, r.quality] as LinkSample))
    }
    assert.equal(all.length, Math.ceil(TOTAL / 333))
    for (let n = 0; n < all.length; n++) assert.deepEqual(await chunkOf(w, n, 333), all[n], `chunk ${n}`)
    // Past the end: nothing.
    const past = []
    for await (const c of streamBatchSamples(w.site.db, 'sqlite', w.org.id, BATCH, { fromChunk: all.length, chunkSize: 333 })) past.push(c)
    assert.equal(past.length, 0)
  })

  it('a batch that recorded no coverage streams the same samples (every series of the site, filtered by batch)', async (t) => {
    const w = await world(t, 'sqlite')
    await seedBatch(w.site.db, w.org.id, { id: 'bat_nocov', siteCode: SITE, series: [{ instanceId: 'ins_pump', tagKey: 'extra', n: 30 }], coverage: false })
    const rows = []
    for await (const c of streamBatchSamples(w.site.db, 'sqlite', w.org.id, 'bat_nocov', { chunkSize: 7, fromChunk: 2 })) rows.push(...c.rows)
    assert.equal(rows.length, 30 - 14)
    assert.deepEqual(
      rows.map((r) => r.ts),
      (await samplesOfBatch(w.site.db, w.org.id, SITE, 'bat_nocov')).slice(14).map((s) => s[2]),
    )
  })

  it('the uploader refuses a batch named with another site than its own, before sending any chunk', async (t) => {
    const w = await world(t, 'sqlite')
    const methods: string[] = []
    const http: LinkHttp = {
      request: async (_path, init) => {
        methods.push(init.method)
        return Response.json({ batchId: BATCH, chunks: [], digests: [], samples: 0, chunkSize: null })
      },
    }
    await assert.rejects(uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: 'pit-2' }), TypeError)
    assert.deepEqual(methods, ['GET'])
  })

  it('a running batch is refused (its samples still change); an absent one yields nothing', async (t) => {
    const w = await world(t, 'sqlite')
    await seedBatch(w.site.db, w.org.id, { id: 'bat_running', siteCode: SITE, series: [{ instanceId: 'ins_pump', tagKey: 'r', n: 3 }], status: 'running' })
    await assert.rejects(async () => {
      for await (const _ of streamBatchSamples(w.site.db, 'sqlite', w.org.id, 'bat_running', { chunkSize: 10 })) void _
    }, TypeError)
    const none = []
    for await (const c of streamBatchSamples(w.site.db, 'sqlite', w.org.id, 'bat_absent', { chunkSize: 10 })) none.push(c)
    assert.equal(none.length, 0)
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect} cloud, SQLite site: historian batch samples over the link`, () => {
    it("moves a batch in chunks over loopback: the cloud holds every sample of it, equal to the site's, once", async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      const heard: UploadProgress[] = []
      const progress = await uploadBatchSamples(
        http,
        w.site.db,
        'sqlite',
        w.org.id,
        { id: BATCH, siteCode: SITE },
        { chunkSize: 500, onProgress: (p) => heard.push(p) },
      )
      assert.equal(progress.chunks, 7)
      assert.equal(progress.samples, TOTAL)
      assert.equal(progress.skippedChunks, 0)
      assert.ok(progress.bytes > 0)
      assert.deepEqual(
        heard.map((p) => p.chunks),
        [1, 2, 3, 4, 5, 6, 7],
      )
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL, chunks: 7, series: SERIES.length })
      const listed = await asOrg(w.org, () => w.chunks.listChunks(w.org.id, PEER, BATCH))
      const digests = await Promise.all([0, 1, 2, 3, 4, 5, 6].map(async (n) => chunkDigest(await chunkOf(w, n, 500))))
      assert.deepEqual(listed, { batchId: BATCH, chunks: [0, 1, 2, 3, 4, 5, 6], digests, samples: TOTAL, chunkSize: 500 })
      // Once more: everything is there, nothing is sent.
      const again = cutting(http)
      const second = await uploadBatchSamples(again, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 500 })
      assert.deepEqual(again.sent, [])
      assert.deepEqual(second, { chunks: 0, samples: 0, bytes: 0, skippedChunks: 7, restarted: false })
    })

    it('a transfer cut at the 4th chunk resumes at chunk 3: chunks 0–2 are not sent again, no sample twice', async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      const first = cutting(http, 4)
      await assert.rejects(uploadBatchSamples(first, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 }), /connection was cut/)
      assert.deepEqual(first.sent, [0, 1, 2])
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 1200, chunks: 3, series: 1 })
      const second = cutting(http)
      const progress = await uploadBatchSamples(second, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 })
      assert.deepEqual(second.sent, [3, 4, 5, 6, 7])
      assert.equal(progress.skippedChunks, 3)
      assert.equal(progress.restarted, false)
      assert.equal(progress.samples, TOTAL - 1200)
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL, chunks: 8, series: SERIES.length })
    })

    it('an upload resumed with another chunk size keeps the size of the chunks the cloud holds (no sample skipped)', async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      await assert.rejects(uploadBatchSamples(cutting(http, 3), w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 700 }))
      const second = cutting(http)
      const progress = await uploadBatchSamples(second, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 300 })
      assert.deepEqual(second.sent, [2, 3, 4])
      assert.equal(progress.samples, TOTAL - 1400)
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
    })

    it('an aborted upload stops after the chunk in flight and the next one sends only what the cloud lacks', async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      const stop = new AbortController()
      const first = cutting(http)
      await assert.rejects(
        uploadBatchSamples(
          first,
          w.site.db,
          'sqlite',
          w.org.id,
          { id: BATCH, siteCode: SITE },
          {
            chunkSize: 1000,
            signal: stop.signal,
            onProgress: (p) => p.chunks === 2 && stop.abort(),
          },
        ),
        { name: 'AbortError' },
      )
      assert.deepEqual(first.sent, [0, 1])
      const second = cutting(http)
      await uploadBatchSamples(second, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      assert.deepEqual(second.sent, [2, 3])
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
    })

    it('the same chunk sent twice is stored once and answers the same (a resend does not write again)', async (t) => {
      const w = await world(t, dialect)
      const { url } = await startCloud(t, w.chunks, w.org, PEER)
      const samples = await chunkOf(w, 1, 600)
      const put = () =>
        fetch(`${url}/api/link/historian/${BATCH}/chunks/1`, {
          method: 'PUT',
          headers: LINK_JSON,
          body: JSON.stringify(body(samples)),
        })
      const first = await put()
      assert.equal(first.status, 200)
      const answer = await first.json()
      assert.deepEqual(answer, { batchId: BATCH, chunk: 1, samples: 600 })
      // A change in the cloud after the first store: a second write of the chunk would undo it.
      await w.h.handle.db.updateTable('historian_points').set({ value: 12345 }).where('org_id', '=', w.org.id).execute()
      const second = await put()
      assert.equal(second.status, 200)
      assert.deepEqual(await second.json(), answer)
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 600, chunks: 1, series: 1 })
      assert.ok((await cloudSamples(w)).every((s) => s[3] === 12345))
      // Twice at once: one stores, the other finds it.
      const [a, b] = await Promise.all([0, 1].map(() => asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 2, body(samples)))))
      assert.deepEqual(a, b)
      assert.equal((await countRows(w.h.handle.db, w.org.id)).chunks, 2)
    })

    it('the same chunk number with another sample count is refused with 409 and stores nothing', async (t) => {
      const w = await world(t, dialect)
      const samples = await chunkOf(w, 0, 100)
      await asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 0, body(samples)))
      await assert.rejects(
        asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 0, body(samples.slice(0, 50)))),
        { code: 'Conflict' },
      )
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 100, chunks: 1, series: 1 })
    })

    it('the same chunk number with other samples of the same count is refused with 409 and stores nothing', async (t) => {
      const w = await world(t, dialect)
      const samples = await chunkOf(w, 0, 100)
      await asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 0, body(samples)))
      const before = await cloudSamples(w)
      const other = await chunkOf(w, 1, 100)
      await assert.rejects(
        asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 0, body(other))),
        { code: 'Conflict' },
      )
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 100, chunks: 1, series: 1 })
      assert.deepEqual(await cloudSamples(w), before)
    })

    it("a batch whose samples changed on the site between a cut and the resume (a forced import took some over) is sent again from chunk 0: the cloud's samples of it equal the site's", async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      await assert.rejects(uploadBatchSamples(cutting(http, 4), w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 }))
      assert.equal((await countRows(w.h.handle.db, w.org.id)).points, 1200)
      // 100 samples of chunk 0 (ins_crusher/power, first in byte order) now belong to the forced batch: every later
      // sample of BATCH moved 100 positions back, so chunk 3 now starts at what was position 1 300.
      await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced', siteCode: SITE, instanceId: 'ins_crusher', tagKey: 'power', from: 100, n: 100 })
      assert.equal((await siteSamples(w)).length, TOTAL - 100)
      const second = cutting(http)
      const progress = await uploadBatchSamples(second, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 })
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
      assert.equal(progress.restarted, true)
      assert.deepEqual(second.sent, [0, 1, 2, 3, 4, 5, 6, 7])
      assert.equal(progress.samples, TOTAL - 100)
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL - 100, chunks: 8, series: SERIES.length })
      // The forced batch's own upload brings the samples it took; nothing twice, nothing lost.
      await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: 'bat_forced', siteCode: SITE }, { chunkSize: 400 })
      const forced = await samplesOfBatch(w.site.db, w.org.id, SITE, 'bat_forced')
      assert.equal(forced.length, 100)
      assert.deepEqual(await samplesOfBatch(w.h.handle.db, w.org.id, SITE, 'bat_forced'), forced)
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
      assert.equal((await countRows(w.h.handle.db, w.org.id)).points, TOTAL)
      // Once more: every chunk the cloud holds matches, nothing is sent or restarted.
      const third = cutting(http)
      const again = await uploadBatchSamples(third, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 })
      assert.deepEqual(third.sent, [])
      assert.deepEqual([again.skippedChunks, again.restarted], [8, false])
    })

    it('a chunk the cloud holds past the end of a batch that lost its last samples restarts the upload too (the chunks before it unchanged)', async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      // In byte order the batch ends with ins_pump/flow (700) then ins_Älv/level (50): chunk 3 holds their last 100
      // samples. Forced imports take exactly those over: chunks 0–2 stay as they were, chunk 3 is gone.
      await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced1', siteCode: SITE, instanceId: 'ins_pump', tagKey: 'flow', from: 650, n: 50 })
      await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced2', siteCode: SITE, instanceId: 'ins_Älv', tagKey: 'level', from: 0, n: 50 })
      assert.equal((await siteSamples(w)).length, TOTAL - 100)
      const second = cutting(http)
      const progress = await uploadBatchSamples(second, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      assert.equal(progress.restarted, true)
      assert.deepEqual(second.sent, [0, 1, 2])
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL - 100, chunks: 3, series: SERIES.length })
    })

    it('a batch sent whole, whose samples a forced import took over and that forced batch then deleted on the site before its own upload: sending the batch again (its row recorded again) leaves none of those samples in the cloud', async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced', siteCode: SITE, instanceId: 'ins_pump', tagKey: 'flow', from: 10, n: 30 })
      await w.site.db.deleteFrom('historian_points').where('org_id', '=', w.org.id).where('batch_id', '=', 'bat_forced').execute()
      await w.site.db.deleteFrom('historian_batches').where('org_id', '=', w.org.id).where('id', '=', 'bat_forced').execute()
      const progress = await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      assert.equal(progress.restarted, true)
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
      assert.equal((await countRows(w.h.handle.db, w.org.id)).points, TOTAL - 30)
    })

    it("a forced import landing in the middle of an upload: the next upload (the batch's row recorded again) finds a changed chunk and sends the batch again; the cloud ends equal to the site", async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      let puts = 0
      const midway: LinkHttp = {
        async request(path, init) {
          if (init.method === 'PUT' && ++puts === 3)
            await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced', siteCode: SITE, instanceId: 'ins_crusher', tagKey: 'power', from: 0, n: 40 })
          return http.request(path, init)
        },
      }
      await uploadBatchSamples(midway, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 })
      // The pass read on by time (keyset pages), so it sent the 40 samples the forced batch took as the batch's: the
      // cloud holds 40 the site no longer attributes to it, and the chunks it holds are no longer the site's.
      assert.equal((await cloudSamples(w)).length, TOTAL)
      assert.equal((await siteSamples(w)).length, TOTAL - 40)
      const second = cutting(http)
      const progress = await uploadBatchSamples(second, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 })
      assert.equal(progress.restarted, true)
      assert.deepEqual(second.sent, [0, 1, 2, 3, 4, 5, 6, 7])
      assert.deepEqual(await cloudSamples(w), await siteSamples(w))
    })

    it("a restart (DELETE) forgets the server's chunks of the batch and removes its samples in the cloud; another site is 403, another server's batch the uniform 404, removing nothing", async (t) => {
      const w = await world(t, dialect)
      const { url, http } = await startCloud(t, w.chunks, w.org, PEER)
      await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      const other: LinkPeer = { serverId: 'srv_other', sites: [SITE, 'pit-2'] }
      await assert.rejects(
        asOrg(w.org, () => w.chunks.restartBatch(w.org.id, other, BATCH, SITE)),
        { code: 'NotFound' },
      )
      const notLinked = await fetch(`${url}/api/link/historian/${BATCH}/chunks?site=pit-2`, { method: 'DELETE', headers: LINK })
      assert.equal(notLinked.status, 403)
      assert.equal((await notLinked.json()).code, 'LinkSiteNotLinked')
      const noSite = await fetch(`${url}/api/link/historian/${BATCH}/chunks`, { method: 'DELETE', headers: LINK })
      assert.equal(noSite.status, 400)
      assert.equal((await noSite.json()).code, 'ValidationFailed')
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL, chunks: 4, series: SERIES.length })
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${url}/api/link/historian/${BATCH}/chunks?site=${SITE}`, { method: 'DELETE', headers: LINK })
        assert.equal(res.status, 200)
        assert.deepEqual(await res.json(), { batchId: BATCH, chunks: [], digests: [], samples: 0, chunkSize: null })
        assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 0, chunks: 0, series: SERIES.length })
      }
    })

    it("a batch the cloud shows, sent again after the site changed its samples: while the resend runs the cloud shows the new samples up to its position and the old ones past it, never fewer; the batch row's arrival leaves exactly the site's", async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      const upload = (via: LinkHttp) => uploadBatchSamples(via, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 400 })
      const push = async (seq: number) => {
        const row = await w.site.db.selectFrom('historian_batches').selectAll().where('id', '=', BATCH).executeTakeFirstOrThrow()
        const changes = [change(seq, 'historian_batches', row)]
        const pushed = await withOrgScope(w.org.id, () =>
          applyPush(
            { handle: w.h.appHandle, clock: w.h.clock },
            { orgId: w.org.id, serverId: PEER.serverId, sites: PEER.sites, epoch: 'ep1', after: { tx: 0, seq: seq - 1 }, changes },
          ),
        )
        assert.equal(pushed.applied, 1)
      }
      await upload(http)
      await push(1)
      const old = await cloudSamples(w)
      assert.equal(old.length, TOTAL)
      // Forced imports take 40 samples of the batch's first series in byte order (ins_crusher/power) and the whole of
      // its last (ins_Älv/level): every chunk moves, and the batch now ends earlier.
      await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced1', siteCode: SITE, instanceId: 'ins_crusher', tagKey: 'power', from: 100, n: 40 })
      await seedForcedBatch(w.site.db, w.org.id, { id: 'bat_forced2', siteCode: SITE, instanceId: 'ins_Älv', tagKey: 'level', from: 0, n: 50 })
      const fresh = await siteSamples(w)
      assert.equal(fresh.length, TOTAL - 90)
      const past = (key: LinkSample) => (s: LinkSample) => byteOrder(s[0], key[0]) || byteOrder(s[1], key[1]) || s[2] - key[2]

      // The restart, cut before its first chunk: the cloud still shows every old sample (it showed none here before).
      const first = cutting(http, 1)
      await assert.rejects(upload(first), /connection was cut/)
      assert.deepEqual(await cloudSamples(w), old)
      // Three chunks replaced, then cut: the new samples up to chunk 2's last, the old ones past it.
      const second = cutting(http, 4)
      await assert.rejects(upload(second), /connection was cut/)
      assert.deepEqual(second.sent, [0, 1, 2])
      const upTo = fresh[3 * 400 - 1]!
      assert.deepEqual(await cloudSamples(w), [...fresh.slice(0, 3 * 400), ...old.filter((s) => past(upTo)(s) > 0)])
      // The rest: every new sample is there, and the old ones past the new last sample wait for the batch row.
      const third = cutting(http)
      const progress = await upload(third)
      assert.deepEqual([third.sent, progress.restarted], [[3, 4, 5, 6, 7], false])
      const tail = old.filter((s) => past(fresh.at(-1)!)(s) > 0)
      assert.equal(tail.length, 50)
      assert.deepEqual(await cloudSamples(w), [...fresh, ...tail])
      await push(2)
      assert.deepEqual(await cloudSamples(w), fresh)
      assert.deepEqual(await w.h.handle.db.selectFrom('link_chunk_spans').select('batch_id').where('org_id', '=', w.org.id).execute(), [])
      // The batches that took samples over bring them with their own uploads: nothing twice, nothing lost.
      for (const id of ['bat_forced1', 'bat_forced2']) await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id, siteCode: SITE }, { chunkSize: 400 })
      assert.equal((await countRows(w.h.handle.db, w.org.id)).points, TOTAL)
    })

    it("a batch the site deleted takes its samples and the server's chunks in the cloud along with its row; a tombstone from another site or of an unknown id removes no sample", async (t) => {
      const w = await world(t, dialect)
      const { http } = await startCloud(t, w.chunks, w.org, PEER)
      await uploadBatchSamples(http, w.site.db, 'sqlite', w.org.id, { id: BATCH, siteCode: SITE }, { chunkSize: 1000 })
      const row = await w.site.db.selectFrom('historian_batches').selectAll().where('id', '=', BATCH).executeTakeFirstOrThrow()
      const push = (changes: Change[], after: number, peer = PEER) =>
        withOrgScope(w.org.id, () =>
          applyPush(
            { handle: w.h.appHandle, clock: w.h.clock },
            { orgId: w.org.id, serverId: peer.serverId, sites: peer.sites, epoch: 'ep1', after: { tx: 0, seq: after }, changes },
          ),
        )
      assert.equal((await push([change(1, 'historian_batches', row)], 0)).applied, 1)
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL, chunks: 4, series: SERIES.length })
      // Another server of the organisation (site pit-2) deleting a batch of that id in its site, and this server deleting
      // an id the cloud never received: no sample goes (no scan either: only the named site's batch is looked at).
      const other: LinkPeer = { serverId: 'srv_other', sites: ['pit-2'] }
      await plant(w.h.handle.db, w.org.id, 'pit-2', INSTANCES)
      assert.equal((await push([change(1, 'historian_batches', { ...row, site_code: 'pit-2' }, { op: 'delete' })], 0, other)).applied, 1)
      assert.equal((await push([change(2, 'historian_batches', { ...row, id: 'bat_never' }, { op: 'delete' })], 1)).applied, 1)
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: TOTAL, chunks: 4, series: SERIES.length })
      // The site's own tombstone: the row, every sample of the batch and the chunks go; another batch's samples in the
      // same series and time span stay.
      const series = await w.h.handle.db.selectFrom('historian_series').select('id').where('org_id', '=', w.org.id).execute()
      const keep = series.map((s, i) => ({ org_id: w.org.id, series_id: s.id, ts: T0 + 250 + i, value: i, text: null, quality: 192, batch_id: 'bat_keep' }))
      await w.h.handle.db.insertInto('historian_points').values(keep).execute()
      assert.equal((await push([change(3, 'historian_batches', row, { op: 'delete' })], 2)).applied, 1)
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: keep.length, chunks: 0, series: SERIES.length })
      assert.equal(await w.h.handle.db.selectFrom('historian_batches').select('id').where('org_id', '=', w.org.id).executeTakeFirst(), undefined)
      assert.equal((await samplesOfBatch(w.h.handle.db, w.org.id, SITE, 'bat_keep')).length, keep.length)
    })

    it('a corrupted chunk (its checksum does not match) or a cut body is refused with 400 and stores nothing', async (t) => {
      const w = await world(t, dialect)
      const { url } = await startCloud(t, w.chunks, w.org, PEER)
      const samples = await chunkOf(w, 0, 300)
      const sent = body(samples)
      sent.samples = samples.map((s, i) => (i === 17 ? [s[0], s[1], s[2], 99.5, s[4], s[5]] : s))
      const put = (payload: string) => fetch(`${url}/api/link/historian/${BATCH}/chunks/0`, { method: 'PUT', headers: LINK_JSON, body: payload })
      const corrupted = await put(JSON.stringify(sent))
      assert.equal(corrupted.status, 400)
      assert.equal((await corrupted.json()).code, 'LinkChecksumMismatch')
      const whole = JSON.stringify(body(samples))
      const cut = await put(whole.slice(0, Math.floor(whole.length / 2)))
      assert.equal(cut.status, 400)
      assert.equal((await cut.json()).code, 'MalformedBody')
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 0, chunks: 0, series: 0 })
      assert.equal((await put(whole)).status, 200)
    })

    it('a peer announcing another link protocol (or none) is refused with 409 LinkVersionMismatch, storing nothing', async (t) => {
      const w = await world(t, dialect)
      const { url } = await startCloud(t, w.chunks, w.org, PEER)
      const samples = await chunkOf(w, 0, 10)
      for (const protocol of ['1', String(LINK_PROTOCOL + 1), undefined]) {
        const res = await fetch(`${url}/api/link/historian/${BATCH}/chunks/0`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...(protocol ? { 'sitegrid-link-protocol': protocol } : {}) },
          body: JSON.stringify(body(samples)),
        })
        assert.equal(res.status, 409)
        assert.equal((await res.json()).code, 'LinkVersionMismatch')
        assert.equal(res.headers.get('sitegrid-link-protocol'), String(LINK_PROTOCOL))
      }
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 0, chunks: 0, series: 0 })
    })

    it("a chunk for a site that is not one of the server's sites is refused with 403 LinkSiteNotLinked and stores nothing", async (t) => {
      const w = await world(t, dialect)
      await plant(w.h.handle.db, w.org.id, 'pit-2', INSTANCES)
      const { url } = await startCloud(t, w.chunks, w.org, PEER)
      const samples = await chunkOf(w, 0, 50)
      const res = await fetch(`${url}/api/link/historian/${BATCH}/chunks/0`, {
        method: 'PUT',
        headers: LINK_JSON,
        body: JSON.stringify(body(samples, 'pit-2')),
      })
      assert.equal(res.status, 403)
      assert.equal((await res.json()).code, 'LinkSiteNotLinked')
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 0, chunks: 0, series: 0 })
    })

    it('samples naming an instance the site does not have (another organisation holds it) are refused with 422 naming each, storing nothing', async (t) => {
      const w = await world(t, dialect)
      const other = await w.h.createOrg()
      await plant(w.h.handle.db, other.id, SITE, ['ins_theirs'])
      const samples = (await chunkOf(w, 0, 20)).map((s, i): LinkSample => (i >= 18 ? ['ins_theirs', s[1], s[2], s[3], s[4], s[5]] : s))
      samples.sort((a, b) => Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])) || a[2] - b[2])
      await assert.rejects(
        asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 0, body(samples))),
        (err: { code?: string; errors?: Array<{ pointer: string }> }) => {
          assert.equal(err.code, 'UnprocessableEntity')
          assert.equal(err.errors?.length, 2)
          return true
        },
      )
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 0, chunks: 0, series: 0 })
      assert.deepEqual(await countRows(w.h.handle.db, other.id), { points: 0, chunks: 0, series: 0 })
    })

    it("a batch the cloud holds under another site, or that another site server sent, is the uniform 404; another organisation's batch of that id is out of reach", async (t) => {
      const w = await world(t, dialect)
      await plant(w.h.handle.db, w.org.id, 'pit-2', INSTANCES)
      const two: LinkPeer = { serverId: 'srv_pit', sites: [SITE, 'pit-2'] }
      await seedBatch(w.h.handle.db, w.org.id, { id: 'bat_pit2', siteCode: 'pit-2', series: [{ instanceId: 'ins_pump', tagKey: 'flow', n: 5 }] })
      const before = await countRows(w.h.handle.db, w.org.id)
      const samples = await chunkOf(w, 0, 40)
      await assert.rejects(
        asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, two, 'bat_pit2', 0, body(samples))),
        { code: 'NotFound' },
      )
      // Another server's batch: its chunks arrived first.
      await asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, { serverId: 'srv_other', sites: [SITE] }, BATCH, 0, body(samples)))
      const mid = await countRows(w.h.handle.db, w.org.id)
      await assert.rejects(
        asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 1, body(samples))),
        { code: 'NotFound' },
      )
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), mid)
      assert.equal(mid.points - before.points, 40)
      // Another organisation with a batch of the same id: a chunk lands in the principal's organisation only.
      const other = await w.h.createOrg()
      await plant(w.h.handle.db, other.id, SITE, INSTANCES)
      await seedBatch(w.h.handle.db, other.id, { id: 'bat_shared', siteCode: SITE, series: [{ instanceId: 'ins_pump', tagKey: 'flow', n: 40 }] })
      const theirs = await samplesOfBatch(w.h.handle.db, other.id, SITE, 'bat_shared')
      await asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, 'bat_shared', 0, body(samples)))
      assert.deepEqual(await samplesOfBatch(w.h.handle.db, other.id, SITE, 'bat_shared'), theirs)
      assert.deepEqual(await asOrg(other, () => w.chunks.listChunks(other.id, PEER, 'bat_shared')), {
        batchId: 'bat_shared',
        chunks: [],
        digests: [],
        samples: 0,
        chunkSize: null,
      })
    })

    it('samples out of order, a key twice or a value a column cannot hold are refused with 400 naming the sample, storing nothing', async (t) => {
      const w = await world(t, dialect)
      const { url } = await startCloud(t, w.chunks, w.org, PEER)
      const samples = await chunkOf(w, 0, 30)
      const cases: Array<[string, unknown[], string]> = [
        ['reordered', [samples[1], samples[0], ...samples.slice(2)], '/samples/1'],
        ['a key twice', [samples[0], samples[0], ...samples.slice(1)], '/samples/1'],
        ['a fractional ts', samples.map((s, i) => (i === 3 ? [s[0], s[1], s[2] + 0.5, s[3], s[4], s[5]] : s)), '/samples/3/2'],
        ['a text value', samples.map((s, i) => (i === 4 ? [s[0], s[1], s[2], 'x', s[4], s[5]] : s)), '/samples/4/3'],
        ['quality out of range', samples.map((s, i) => (i === 5 ? [s[0], s[1], s[2], s[3], s[4], 40_000] : s)), '/samples/5/5'],
        ['NUL in text', samples.map((s, i) => (i === 6 ? [s[0], s[1], s[2], s[3], 'a\u0000b', s[5]] : s)), '/samples/6/4'],
        [
          'a tag key past 200 characters',
          samples.map((s, i) => (i === 7 ? [s[0], randomBytes(3000).toString('base64'), s[2], s[3], s[4], s[5]] : s)),
          '/samples/7/1',
        ],
      ]
      for (const [name, bad, pointer] of cases) {
        // The service checks what the route's schema and input guard check too (a caller of the service skips them).
        await assert.rejects(
          asOrg(w.org, () => w.chunks.receiveChunk(w.org.id, PEER, BATCH, 0, body(bad as LinkSample[]))),
          (err: { code?: string; errors?: Array<{ pointer: string }> }) => {
            assert.equal(err.code, 'ValidationFailed', name)
            assert.ok(
              err.errors?.some((e) => e.pointer === pointer),
              `${name}: ${JSON.stringify(err.errors)}`,
            )
            return true
          },
        )
        const res = await fetch(`${url}/api/link/historian/${BATCH}/chunks/0`, {
          method: 'PUT',
          headers: LINK_JSON,
          body: JSON.stringify(body(bad as LinkSample[])),
        })
        assert.equal(res.status, 400, name)
        assert.equal((await res.json()).code, 'ValidationFailed', name)
      }
      assert.deepEqual(await countRows(w.h.handle.db, w.org.id), { points: 0, chunks: 0, series: 0 })
    })
  })
}
