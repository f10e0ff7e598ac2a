import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import type { Harness } from '../../../test/harness.ts'
import { testDialects } from '../../../test/harness.ts'
import { connectDatabase } from '../../db/connect.ts'
import { withOrgScope } from '../../db/tenant-scope.ts'
import type { Actor } from '../../identity.ts'
import type { OrgId } from '../../ids.ts'
import { findConfigVersion } from '../edges/store.ts'
import { streamBatchSamples } from './link.ts'
import { createLiveIngest } from './service/live.ts'
import { closeEndedLiveBatches, LIVE_WINDOW_MS, lockOpenBatch } from './service/open-batch.ts'
import { sweepHistorianRetention } from './service/retention.ts'
import { livePlant, sampleCount, series, sharedHarness, type Plant } from './test-setup.ts'

// Issue 30: a gateway's live pushes of one 10-minute UTC window share one `open` batch (service/open-batch.ts).
// The clock starts a minute into the window 12:00–12:10.
const WINDOW = Date.parse('2024-05-01T12:00:00Z')
const MIN = 60_000
const DAY = 86_400_000
const iso = (ms: number) => new Date(ms).toISOString()
const ENV = {
  SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES: '100',
  SITEGRID_HISTORIAN_LIVE_MAX_SKEW_MS: String(MIN),
  SITEGRID_HISTORIAN_LIVE_MAX_AGE_MS: String(3 * DAY),
}

const sample = (ts: number, value: number, tagKey = 'speed', instanceId = 'ins_pump') => ({ instanceId, tagKey, ts, value })

function push(h: Harness, p: Plant, batchKey: string, samples: unknown[], apiKey = p.member.apiKey) {
  return h.inject(
    { org: p.owner.org, apiKey },
    { method: 'POST', url: `/api/sites/${p.siteCode}/historian/samples?batchKey=${encodeURIComponent(batchKey)}`, payload: { samples } },
  )
}

async function answered(h: Harness, p: Plant, batchKey: string, samples: unknown[], apiKey?: string) {
  const res = await push(h, p, batchKey, samples, apiKey)
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as { historianBatchId: string; stored: number; duplicates: number; refused: number; replayed: boolean }
}

const batchOf = async (h: Harness, p: Plant, id: string) => (await h.inject(p.member, { url: `/api/historian/import-batches/${id}` })).json()
const listed = async (h: Harness, p: Plant) => (await h.inject(p.member, { url: `/api/historian/import-batches?siteId=${p.siteCode}` })).json().items

/** The fleet link's outbox rows of the organisation's historian batches: [op, id, status]. */
async function outboxBatches(h: Harness, p: Plant): Promise<Array<[string, string, string]>> {
  const rows = await h.handle.db
    .selectFrom('link_outbox')
    .select(['op', 'row'])
    .where('org_id', '=', p.owner.org.id)
    .where('table_name', '=', 'historian_batches')
    .orderBy('seq')
    .execute()
  return rows.map((r) => {
    const row = (typeof r.row === 'string' ? JSON.parse(r.row) : r.row) as { id: string; status: string }
    return [r.op, row.id, row.status]
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: historian open live batches`, () => {
    const shared = sharedHarness(dialect, ENV)

    it("one key's pushes of one window share an open batch: counts, coverage and time range grow, reads see every sample, the list and the read say `open`; another key has its own", async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const first = await answered(h, p, 'k-1', [sample(WINDOW, 1), sample(WINDOW + 1000, 2), sample(WINDOW, 9, 'flow')])
      h.clock.advance(MIN)
      const second = await answered(h, p, 'k-2', [sample(WINDOW + 2000, 3), sample(WINDOW + 500, 4, 'state', 'ins_motor')])
      h.clock.advance(7 * MIN)
      const third = await answered(h, p, 'k-3', [sample(WINDOW + 3000, 5), sample(WINDOW + 3000, 6)])
      assert.deepEqual(new Set([first.historianBatchId, second.historianBatchId, third.historianBatchId]).size, 1)
      const batch = await batchOf(h, p, first.historianBatchId)
      assert.deepEqual(
        [batch.status, batch.completedAt, batch.samplesStored, batch.rowsRead, batch.rowsRejected, batch.valuesRead, batch.duplicatesInFile, batch.collisions],
        ['open', null, 5, 7, 1, 7, 1, 0],
      )
      assert.deepEqual(batch.timeRange, { from: new Date(WINDOW).toISOString(), to: new Date(WINDOW + 3000).toISOString() })
      assert.deepEqual(
        batch.tags.map((t: { instanceId: string; tagKey: string; samples: number }) => `${t.instanceId}/${t.tagKey} ${t.samples}`),
        ['ins_pump/speed 4', 'ins_motor/state 1'],
      )
      assert.deepEqual(
        batch.rejections.first.map((r: { line: number; reason: string }) => [r.line, r.reason.replace(/: .*/, '')]),
        [[3, 'push k-1']],
      )
      const summary = (await listed(h, p)).find((b: { id: string }) => b.id === first.historianBatchId)
      assert.deepEqual([summary.status, summary.samplesStored, summary.tagCount], ['open', 5, 2])
      const read = await series(h, p, `instanceId=ins_pump&tag=speed&from=${new Date(WINDOW - MIN).toISOString()}&to=${new Date(WINDOW + MIN).toISOString()}`)
      assert.deepEqual(
        read.samples.map((s) => s.value),
        [1, 2, 3, 6],
      )
      // Every retrieval mode reads the open batch: a value at a time between two pushes' samples, a bucket's count.
      const at = await h.inject(p.member, { url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=speed&mode=at&at=${iso(WINDOW + 1500)}` })
      assert.equal(at.json().points[0].value, 2.5, at.body)
      const buckets = await series(h, p, `instanceId=ins_pump&tag=speed&bucket=1h&from=${iso(WINDOW)}&to=${iso(WINDOW + 60 * MIN)}`)
      assert.equal(buckets.buckets[0]!.count, 4)
      // Another gateway (key) pushing in the same window and site: a batch of its own.
      const other = (await h.mintKey(p.owner.org, 'member')).plaintext
      const theirs = await answered(h, p, 'o-1', [sample(WINDOW + 4000, 7)], other)
      assert.notEqual(theirs.historianBatchId, first.historianBatchId)
      assert.equal((await batchOf(h, p, theirs.historianBatchId)).status, 'open')
    })

    it('a sample an earlier push of the open batch stored is a duplicate under another batch key: the stored value is kept', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      await answered(h, p, 'a', [sample(WINDOW, 1)])
      const again = await answered(h, p, 'b', [sample(WINDOW, 2), sample(WINDOW + 1, 3)])
      assert.deepEqual([again.stored, again.duplicates], [1, 1])
      const batch = await batchOf(h, p, again.historianBatchId)
      assert.deepEqual([batch.samplesStored, batch.collisions, batch.valuesRead], [2, 1, 3])
      const read = await series(h, p, `instanceId=ins_pump&tag=speed&from=${new Date(WINDOW).toISOString()}&to=${new Date(WINDOW + MIN).toISOString()}`)
      assert.deepEqual(
        read.samples.map((s) => s.value),
        [1, 3],
      )
    })

    it("the first push after the window closes the gateway's batch (complete) and opens the next one", async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const first = await answered(h, p, 'w1', [sample(WINDOW, 1)])
      h.clock.set(WINDOW + LIVE_WINDOW_MS + 5 * 1000)
      const next = await answered(h, p, 'w2', [sample(WINDOW + LIVE_WINDOW_MS, 2)])
      assert.notEqual(next.historianBatchId, first.historianBatchId)
      const closed = await batchOf(h, p, first.historianBatchId)
      assert.deepEqual([closed.status, closed.completedAt, closed.samplesStored], ['complete', new Date(WINDOW + LIVE_WINDOW_MS + 5000).toISOString(), 1])
      assert.deepEqual([(await batchOf(h, p, next.historianBatchId)).status], ['open'])
      // Closed, its samples are still read.
      assert.equal(await sampleCount(h, p.owner.org.id), 2)
    })

    it('the close job closes an open batch whose window ended with no push after it, and leaves the current one open', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const idle = await answered(h, p, 'idle', [sample(WINDOW, 1)])
      const orgs = [p.owner.org.id]
      assert.deepEqual(await closeEndedLiveBatches(h.handle, h.clock, { orgs }), { closed: 0 })
      assert.equal((await batchOf(h, p, idle.historianBatchId)).status, 'open')
      h.clock.set(WINDOW + LIVE_WINDOW_MS + 30_000)
      assert.deepEqual(await closeEndedLiveBatches(h.handle, h.clock, { orgs }), { closed: 1 })
      const closed = await batchOf(h, p, idle.historianBatchId)
      assert.deepEqual([closed.status, closed.completedAt], ['complete', new Date(WINDOW + LIVE_WINDOW_MS + 30_000).toISOString()])
      // A push now opens a new batch; the job leaves it, as its window has not ended.
      const current = await answered(h, p, 'current', [sample(WINDOW + LIVE_WINDOW_MS, 2)])
      assert.deepEqual(await closeEndedLiveBatches(h.handle, h.clock, { orgs }), { closed: 0 })
      assert.equal((await batchOf(h, p, current.historianBatchId)).status, 'open')
    })

    it('a resend answers the first answer and stores nothing, while the batch is open and after it closed', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const body = [sample(WINDOW, 1), sample(WINDOW + 1, 2), sample(WINDOW, 0, 'flow')]
      const { replayed, ...first } = await answered(h, p, 'r-1', body)
      await answered(h, p, 'r-2', [sample(WINDOW + 2, 3)])
      const counts = async () => {
        const b = await batchOf(h, p, first.historianBatchId)
        return [b.samplesStored, b.rowsRead, b.rowsRejected, await sampleCount(h, p.owner.org.id)]
      }
      assert.deepEqual(await counts(), [3, 4, 1, 3])
      const resends = await Promise.all(Array.from({ length: 10 }, () => answered(h, p, 'r-1', body)))
      for (const { replayed: again, ...answer } of resends) {
        assert.equal(again, true)
        assert.deepEqual(answer, first)
      }
      assert.deepEqual(await counts(), [3, 4, 1, 3])
      h.clock.set(WINDOW + LIVE_WINDOW_MS + MIN)
      const { replayed: late, ...lateAnswer } = await answered(h, p, 'r-1', body)
      assert.deepEqual([replayed, late, lateAnswer], [false, true, first])
      assert.deepEqual(await counts(), [3, 4, 1, 3])
      // The replay opened no batch.
      assert.equal((await listed(h, p)).length, 1)
    })

    it('concurrent pushes of one gateway (on PostgreSQL from two processes) lose no count: one batch holds every push', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const orgId = p.owner.org.id as OrgId
      const actor: Actor = { kind: 'apiKey', subject: 'key-gw', role: 'member' }
      const deps = (handle: typeof h.handle) => ({
        handle,
        clock: h.clock,
        sites: { require: async (_o: OrgId, code: string) => ({ code }) },
        instances: {
          listTagMappings: async (o: OrgId, siteCode: string) =>
            (await handle.db.selectFrom('instances').select(['id', 'tag_mappings']).where('org_id', '=', o).where('site_code', '=', siteCode).execute()).map(
              (r) => ({ instanceId: r.id, tagMappings: JSON.parse(r.tag_mappings) as Record<string, string> }),
            ),
        },
        versions: { configVersion: async (o: OrgId, code: string) => (await findConfigVersion(handle.db, o, code)) ?? 0 },
        limits: { maxSamples: 100, maxSkewMs: MIN, maxAgeMs: 3 * DAY },
      })
      // PostgreSQL: a second pool, as a second serving process of the cell would have. SQLite: one process a file.
      const second = dialect === 'postgres' ? await connectDatabase(h.config.databaseUrl, { poolSize: 4 }) : h.handle
      try {
        const ingests = [createLiveIngest(deps(h.handle)), createLiveIngest(deps(second))]
        // The series exist (a first push), so no push waits on another creating them.
        await withOrgScope(orgId, () => ingests[0]!.push(orgId, actor, p.siteCode, 'seed', [{ index: 0, ...sample(WINDOW - 1, 0), text: null, quality: 192 }]))
        const pushes = 40
        const answers = await Promise.all(
          Array.from({ length: pushes }, (_, i) =>
            withOrgScope(orgId, () =>
              ingests[i % 2]!.push(
                orgId,
                actor,
                p.siteCode,
                `c-${i}`,
                Array.from({ length: 5 }, (_, j) => ({ index: j, ...sample(WINDOW + i * 10 + j, i), text: null, quality: 192 })),
              ),
            ),
          ),
        )
        const ids = new Set(answers.map((a) => a.historianBatchId))
        assert.equal(ids.size, 1)
        const rows = await h.handle.db.selectFrom('historian_batches').selectAll().where('org_id', '=', orgId).execute()
        assert.equal(rows.length, 1)
        const [row] = rows
        assert.deepEqual([row!.status, row!.samples_stored, row!.rows_read], ['open', 1 + pushes * 5, 1 + pushes * 5])
        assert.equal((JSON.parse(row!.tags) as Array<{ samples: number }>)[0]!.samples, 1 + pushes * 5)
        assert.equal(await sampleCount(h, orgId), 1 + pushes * 5)
      } finally {
        if (second !== h.handle) await second.close()
      }
    })

    it('the fleet link: an open batch is not in the outbox and its samples are not streamed; once closed it goes up once, as complete', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const a = await answered(h, p, 'f-1', [sample(WINDOW, 1)])
      await answered(h, p, 'f-2', [sample(WINDOW + 1, 2)])
      assert.deepEqual(await outboxBatches(h, p), [])
      await assert.rejects(
        async () => {
          for await (const _ of streamBatchSamples(h.handle.db, h.dialect, p.owner.org.id, a.historianBatchId, { chunkSize: 10 })) assert.fail('streamed')
        },
        (err: Error) => err instanceof TypeError && /still open/.test(err.message),
      )
      h.clock.set(WINDOW + LIVE_WINDOW_MS)
      await closeEndedLiveBatches(h.handle, h.clock, { orgs: [p.owner.org.id] })
      assert.deepEqual(await outboxBatches(h, p), [['upsert', a.historianBatchId, 'complete']])
      const chunks = []
      for await (const c of streamBatchSamples(h.handle.db, h.dialect, p.owner.org.id, a.historianBatchId, { chunkSize: 10 })) chunks.push(c.rows.length)
      assert.deepEqual(chunks, [2])
      // The next window's pushes: still only the closed batch's one change.
      const next = await answered(h, p, 'f-3', [sample(WINDOW + LIVE_WINDOW_MS, 3)])
      await answered(h, p, 'f-4', [sample(WINDOW + LIVE_WINDOW_MS + 1, 4)])
      assert.deepEqual(await outboxBatches(h, p), [['upsert', a.historianBatchId, 'complete']])
      // Deleting an open batch records nothing either: the cloud never saw it.
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${next.historianBatchId}` })).statusCode, 204)
      assert.deepEqual(await outboxBatches(h, p), [['upsert', a.historianBatchId, 'complete']])
    })

    it('deleting an open batch deletes its samples and key rows; the next push opens a new batch, and a resend of a deleted key stores anew', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const a = await answered(h, p, 'd-1', [sample(WINDOW, 1), sample(WINDOW + 1, 2)])
      await answered(h, p, 'd-2', [sample(WINDOW + 2, 3)])
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${a.historianBatchId}` })).statusCode, 204)
      assert.equal(await sampleCount(h, p.owner.org.id), 0)
      const after = await answered(h, p, 'd-3', [sample(WINDOW + 3, 4)])
      assert.notEqual(after.historianBatchId, a.historianBatchId)
      const resent = await answered(h, p, 'd-1', [sample(WINDOW, 1)])
      assert.deepEqual([resent.replayed, resent.stored, resent.historianBatchId], [false, 1, after.historianBatchId])
      assert.deepEqual([(await batchOf(h, p, after.historianBatchId)).samplesStored], [2])
    })

    it('an open batch deleted while its gateway pushes: every push answered, no sample left without its batch, every count its samples', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const first = await answered(h, p, 'z-0', [sample(WINDOW, 0)])
      let target = first.historianBatchId
      if (dialect === 'postgres') {
        // The delete takes the gateway's lock (held here by another connection, as a push in another process would).
        const row = await h.handle.db.selectFrom('historian_batches').select('created_by').where('id', '=', first.historianBatchId).executeTakeFirstOrThrow()
        const other = await connectDatabase(h.config.databaseUrl, { poolSize: 1 })
        let release!: () => void
        let locked!: () => void
        const isLocked = new Promise<void>((resolve) => (locked = resolve))
        const holding = other.db.transaction().execute(async (trx) => {
          await lockOpenBatch(trx, other, p.owner.org.id as OrgId, p.siteCode, row.created_by)
          locked()
          await new Promise<void>((resolve) => (release = resolve))
        })
        await isLocked
        let isDeleted = false
        const deleting = h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${first.historianBatchId}` }).then((r) => {
          isDeleted = true
          return r
        })
        await new Promise((resolve) => setTimeout(resolve, 300))
        assert.equal(isDeleted, false, 'the delete waits for the gateway lock')
        release()
        await holding
        await other.close()
        assert.equal((await deleting).statusCode, 204)
        target = (await answered(h, p, 'z-again', [sample(WINDOW, 0)])).historianBatchId
        assert.notEqual(target, first.historianBatchId)
      }
      const pushes = (from: number) =>
        Array.from({ length: 15 }, (_, i) => push(h, p, `z-${from + i}`, [sample(WINDOW + from + i, i), sample(WINDOW + from + i, i, 'state')]))
      const results = await Promise.all([...pushes(1), h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${target}` }), ...pushes(16)])
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [...Array<number>(15).fill(200), 204, ...Array<number>(15).fill(200)],
      )
      const orgId = p.owner.org.id
      const points = await h.handle.db.selectFrom('historian_points').select(['batch_id']).where('org_id', '=', orgId).execute()
      const batches = await h.handle.db.selectFrom('historian_batches').select(['id', 'samples_stored']).where('org_id', '=', orgId).execute()
      assert.deepEqual(
        points.filter((pt) => !batches.some((b) => b.id === pt.batch_id)),
        [],
        'samples of a deleted batch',
      )
      for (const b of batches) assert.equal(b.samples_stored, points.filter((pt) => pt.batch_id === b.id).length, `batch ${b.id}`)
    })

    it('retention over an open batch deletes its old samples and leaves it open with the counts it stored; the next push still goes into it', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const a = await answered(h, p, 'ret-1', [sample(WINDOW - 2 * DAY, 1), sample(WINDOW, 2)])
      const policy = await h.inject(p.owner, { method: 'PUT', url: `/api/sites/${p.siteCode}/historian/retention`, payload: { retentionDays: 1 } })
      assert.equal(policy.statusCode, 200, policy.body)
      const swept = await sweepHistorianRetention(h.handle, h.clock, { orgs: [p.owner.org.id] })
      assert.equal(swept.deleted, 1)
      const batch = await batchOf(h, p, a.historianBatchId)
      assert.deepEqual([batch.status, batch.samplesStored, await sampleCount(h, p.owner.org.id)], ['open', 2, 1])
      const next = await answered(h, p, 'ret-2', [sample(WINDOW + 1, 3)])
      assert.equal(next.historianBatchId, a.historianBatchId)
      assert.equal((await batchOf(h, p, a.historianBatchId)).samplesStored, 3)
    })

    it('a tenant export carries an open batch as it stands (open, its samples); imported, it is read at once and the close job closes it after its window', async () => {
      const h = shared()
      const p = await livePlant(h, WINDOW + MIN)
      const a = await answered(h, p, 'x-1', [sample(WINDOW, 1), sample(WINDOW + 1, 2)])
      const exported = await h.inject(p.owner, { url: `/api/admin/orgs/${p.owner.org.slug}/tenant/export` })
      assert.equal(exported.statusCode, 200, exported.body)
      const rows = gunzipSync(exported.rawPayload)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; part?: string; row?: Record<string, unknown> })
        .filter((r) => r.type === 'row')
      const batch = rows.find((r) => r.part === 'historian_batches')!.row!
      assert.deepEqual([batch.id, batch.status, batch.samples_stored], [a.historianBatchId, 'open', 2])
      assert.equal(rows.filter((r) => r.part === 'historian_samples' && r.row!.batch_id === a.historianBatchId).length, 2)
      // Imported where the batch is gone (as on a new server): back, open, read at once.
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${a.historianBatchId}` })).statusCode, 204)
      const staged = await h.inject(p.owner, {
        method: 'PUT',
        url: `/api/admin/orgs/${p.owner.org.slug}/tenant/import/package`,
        headers: { 'content-type': 'application/gzip' },
        payload: exported.rawPayload,
      })
      assert.equal(staged.statusCode, 200, staged.body)
      const applied = await h.inject(p.owner, { method: 'POST', url: `/api/admin/orgs/${p.owner.org.slug}/tenant/import?force=true` })
      assert.equal(applied.statusCode, 200, applied.body)
      assert.deepEqual([(await batchOf(h, p, a.historianBatchId)).status, await sampleCount(h, p.owner.org.id)], ['open', 2])
      h.clock.set(WINDOW + LIVE_WINDOW_MS)
      assert.deepEqual(await closeEndedLiveBatches(h.handle, h.clock, { orgs: [p.owner.org.id] }), { closed: 1 })
      assert.equal((await batchOf(h, p, a.historianBatchId)).status, 'complete')
    })
  })
}
