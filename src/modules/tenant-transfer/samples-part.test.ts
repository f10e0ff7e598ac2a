import assert from 'node:assert/strict'
import { gunzipSync } from 'node:zlib'
import { describe, it } from 'node:test'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'
import type { OrgId } from '../../ids.ts'
import { ensureSeries, seriesKey } from '../historian/store/queries.ts'
import type { Org } from '../../identity.ts'

type Cred = { org: Org; apiKey: string }
type Sample = {
  site_code: string
  instance_id: string
  tag_key: string
  ts: number
  value: number | null
  text: string | null
  quality: number
  batch_id: string
}

const T0 = Date.UTC(2025, 4, 1)

/**
 * Series created in an order unlike the package's (byte order of site, instance, tag), one of them larger than the
 * export's page (2 000 samples), the others small enough to be read together.
 */
const SERIES: Array<{ site: string; instanceId: string; tagKey: string; n: number }> = [
  { site: 'SP', instanceId: 'zeta', tagKey: 'flow', n: 3 },
  { site: 'SP', instanceId: 'Élan', tagKey: 'flow', n: 2 },
  { site: 'SP', instanceId: 'alpha', tagKey: 'flow', n: 2_345 },
  { site: 'SP', instanceId: 'alpha', tagKey: 'Flow', n: 4 },
  { site: 'SP-B', instanceId: 'alpha', tagKey: 'flow', n: 5 },
  { site: 'SP', instanceId: 'beta', tagKey: 'x', n: 1 },
]

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

async function seedSamples(h: Harness, cred: Cred, other: Org): Promise<Sample[]> {
  for (const code of ['SP', 'SP-B']) {
    assert.equal(
      (await h.inject(cred, { method: 'POST', url: '/api/sites', payload: { code, name: code, timeZone: 'UTC', location: 'x', status: 2 } })).statusCode,
      201,
    )
  }
  const db = h.handle.db
  await db
    .insertInto('sites')
    .values({ org_id: other.id, code: 'SP', name: 'other', description: null, time_zone: 'UTC', location: 'x', status: 2, created_at: T0, updated_at: T0 })
    .execute()
  const samples: Sample[] = []
  for (const [k, s] of SERIES.entries()) {
    // Another organisation's series between ours: never in this organisation's package.
    const theirs = await ensureSeries(db, other.id as OrgId, 'SP', [{ instanceId: `${s.instanceId}-${k}`, tagKey: 'flow' }])
    await db
      .insertInto('historian_points')
      .values({ org_id: other.id, series_id: [...theirs.values()][0]!, ts: T0, value: 1, text: null, quality: 192, batch_id: 'bat_other' })
      .execute()
    const id = (await ensureSeries(db, cred.org.id as OrgId, s.site, [{ instanceId: s.instanceId, tagKey: s.tagKey }])).get(seriesKey(s.instanceId, s.tagKey))!
    const rows: Sample[] = Array.from({ length: s.n }, (_, i) => ({
      site_code: s.site,
      instance_id: s.instanceId,
      tag_key: s.tagKey,
      ts: T0 + (s.n - i) * 1000 + k,
      value: i % 7 === 0 ? null : i / 4,
      text: i % 7 === 0 ? `t${i}` : null,
      quality: i % 3 === 0 ? 64 : 192,
      batch_id: 'bat_1',
    }))
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('historian_points')
        .values(
          rows
            .slice(i, i + 500)
            .map((r) => ({ org_id: cred.org.id, series_id: id, ts: r.ts, value: r.value, text: r.text, quality: r.quality, batch_id: r.batch_id })),
        )
        .execute()
    }
    samples.push(...rows)
  }
  return samples.sort(
    (a, b) => byteOrder(a.site_code, b.site_code) || byteOrder(a.instance_id, b.instance_id) || byteOrder(a.tag_key, b.tag_key) || a.ts - b.ts,
  )
}

function samplesOf(pkg: Buffer): Sample[] {
  return gunzipSync(pkg)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; part?: string; row?: Sample })
    .filter((r) => r.type === 'row' && r.part === 'historian_samples')
    .map((r) => r.row!)
}

for (const dialect of testDialects()) {
  describe(`${dialect}: tenant package historian_samples part`, () => {
    it('holds every sample of the organisation (none of another) in key order, byte order, across series smaller and larger than a page; a re-import finds each unchanged and writes back missing ones into their series', async (t) => {
      const h = await harness(t, dialect)
      const { org, key } = await h.orgWithKey('owner')
      const other = (await h.orgWithKey('owner')).org
      const cred = { org, apiKey: key }
      const expected = await seedSamples(h, cred, other)

      const res = await h.inject(cred, { method: 'GET', url: `/api/admin/orgs/${org.slug}/tenant/export` })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(samplesOf(res.rawPayload), expected)

      const site = await h.inject(cred, { method: 'GET', url: `/api/admin/orgs/${org.slug}/tenant/export?siteId=SP-B` })
      assert.deepEqual(
        samplesOf(site.rawPayload),
        expected.filter((s) => s.site_code === 'SP-B'),
      )

      const staged = await h.inject(cred, {
        method: 'PUT',
        url: `/api/admin/orgs/${org.slug}/tenant/import/package`,
        headers: { 'content-type': 'application/gzip' },
        payload: res.rawPayload,
      })
      assert.equal(staged.statusCode, 200, staged.body)
      const dry = await h.inject(cred, { method: 'POST', url: `/api/admin/orgs/${org.slug}/tenant/import?dryRun=true` })
      assert.equal(dry.statusCode, 200, dry.body)
      assert.deepEqual(dry.json().parts.historian_samples, { create: 0, replace: 0, unchanged: expected.length })

      // Samples gone from existing series (the large one and a small one): the import writes them back into those
      // series, across several batches, and the next export is the first one again.
      const gone = (
        await h.handle.db
          .selectFrom('historian_series')
          .select('id')
          .where('org_id', '=', org.id)
          .where('site_code', '=', 'SP')
          .where('instance_id', 'in', ['alpha', 'zeta'])
          .execute()
      ).map((r) => Number(r.id))
      await h.handle.db.deleteFrom('historian_points').where('org_id', '=', org.id).where('series_id', 'in', gone).execute()
      const restored = await h.inject(cred, { method: 'POST', url: `/api/admin/orgs/${org.slug}/tenant/import` })
      assert.equal(restored.statusCode, 200, restored.body)
      const removed = expected.filter((s) => s.site_code === 'SP' && ['alpha', 'zeta'].includes(s.instance_id)).length
      assert.deepEqual(restored.json().parts.historian_samples, { create: removed, replace: 0, unchanged: expected.length - removed })
      assert.deepEqual(samplesOf((await h.inject(cred, { method: 'GET', url: `/api/admin/orgs/${org.slug}/tenant/export` })).rawPayload), expected)
      assert.equal((await h.handle.db.selectFrom('historian_series').select('id').where('org_id', '=', org.id).execute()).length, SERIES.length)
    })
  })
}
