import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Harness } from '../../../test/harness.ts'
import { testDialects } from '../../../test/harness.ts'
import { withOrgScope } from '../../db/tenant-scope.ts'
import { CLI_ACTOR } from '../../identity.ts'
import type { OrgId } from '../../ids.ts'
import { findConfigVersion } from '../edges/store.ts'
import { createLiveIngest } from './service/live.ts'
import type { LiveItem } from './service/live-samples.ts'
import { livePlant, sampleCount, series, sharedHarness, standardParts, upload, type Plant } from './test-setup.ts'

// Issue 30, live samples (POST …/historian/samples). The clock is pinned at NOW; the window is 1 min ahead, 1 h behind.
const NOW = Date.parse('2024-05-01T12:00:00Z')
const MIN = 60_000
const at = (minutes: number) => new Date(NOW + minutes * MIN).toISOString()
const ENV = {
  SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES: '60',
  SITEGRID_HISTORIAN_LIVE_MAX_SKEW_MS: String(MIN),
  SITEGRID_HISTORIAN_LIVE_MAX_AGE_MS: String(60 * MIN),
}

function push(h: Harness, p: Plant, batchKey: string, body: unknown, contentType = 'application/json') {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  return h.inject(p.member, {
    method: 'POST',
    url: `/api/sites/${p.siteCode}/historian/samples?batchKey=${encodeURIComponent(batchKey)}`,
    payload,
    headers: { 'content-type': contentType },
  })
}

const raw = async (h: Harness, p: Plant, instanceId: string, tag: string) =>
  (await series(h, p, `instanceId=${instanceId}&tag=${tag}&from=${at(-120)}&to=${at(120)}`)).samples.map((s) => [s.ts, s.value ?? s.text, s.quality])

for (const dialect of testDialects()) {
  describe(`${dialect}: historian live samples`, () => {
    const shared = sharedHarness(dialect, ENV)

    it('a sample of an instance that maps no tags is refused as such, not as an unknown instance', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const res = await push(h, p, 'gw1-unmapped', {
        samples: [
          { instanceId: 'ins_boiler1', tagKey: 'speed', ts: at(0), value: 1 },
          { instanceId: 'ins_ghost', tagKey: 'speed', ts: at(0), value: 1 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(0), value: 1 },
        ],
      })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(
        res.json().refusals.map((r: { index: number; reason: string }) => [r.index, r.reason]),
        [
          [0, "instance 'ins_boiler1' has no tag mappings: map the tag key 'speed' first"],
          [1, "instance 'ins_ghost' does not exist in this site"],
        ],
      )
    })

    it('a timestamp of a day or hour that does not exist is refused, never rolled over into the next (push and read)', async () => {
      const h = shared()
      const p = await livePlant(h, Date.parse('2024-02-29T12:30:00Z'))
      const res = await push(
        h,
        p,
        'gw1-calendar',
        'ins_pump,speed,2024-02-30T12:00:00Z,1\nins_pump,speed,2024-02-29T24:00:00Z,2\nins_pump,speed,2024-02-29T12:00:00Z,3\n',
        'text/plain',
      )
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(
        res.json().refusals.map((r: { index: number; reason: string }) => [r.index, r.reason]),
        [
          [0, "timestamp '2024-02-30T12:00:00Z': epoch milliseconds, or an ISO 8601 date and time that exists, with Z or an offset"],
          [1, "timestamp '2024-02-29T24:00:00Z': epoch milliseconds, or an ISO 8601 date and time that exists, with Z or an offset"],
        ],
      )
      for (const from of ['2024-02-30T00:00:00Z', '2024-02-29T00:00:00']) {
        const read = await h.inject(p.member, {
          method: 'GET',
          url: `/api/sites/${p.siteCode}/historian/series?instanceId=ins_pump&tag=speed&from=${encodeURIComponent(from)}`,
        })
        assert.equal(read.statusCode, 400, from)
        assert.equal(read.json().errors[0].pointer, '/from')
      }
    })

    it('JSON: stored and read at once; unknown instances and tag keys, timestamps outside the window and bad samples refused one by one', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const res = await push(h, p, 'gw1-0001', {
        samples: [
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-2), value: 10.5 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: NOW - MIN, value: 11, quality: 'uncertain' },
          { instanceId: 'ins_ghost', tagKey: 'speed', ts: at(0), value: 1 },
          { instanceId: 'ins_pump', tagKey: 'flow', ts: at(0), value: 1 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(2), value: 1 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-61), value: 1 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(0), value: 1, text: 'both' },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: '2024-05-01 12:00', value: 1 },
          { instanceId: 'ins_motor', tagKey: 'state', ts: at(0), text: 'RUNNING', quality: 0 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(1), value: 12 },
        ],
      })
      assert.equal(res.statusCode, 200, res.body)
      const answer = res.json()
      assert.deepEqual([answer.batchKey, answer.received, answer.stored, answer.duplicates, answer.refused, answer.replayed], ['gw1-0001', 10, 4, 0, 6, false])
      assert.deepEqual(
        answer.refusals.map((r: { index: number; reason: string }) => [r.index, r.reason.replace(/ .*/, '')]),
        [
          [2, 'instance'],
          [3, 'tag'],
          [4, 'timestamp'],
          [5, 'timestamp'],
          [6, 'exactly'],
          [7, 'timestamp'],
        ],
      )
      assert.match(answer.refusals[2].reason, /in the future/)
      assert.match(answer.refusals[3].reason, /too old/)
      assert.match(answer.refusals[1].reason, /tag key 'flow'/)
      assert.deepEqual(await raw(h, p, 'ins_pump', 'speed'), [
        [at(-2), 10.5, 'good'],
        [at(-1), 11, 'uncertain'],
        [at(1), 12, 'good'],
      ])
      assert.deepEqual(await raw(h, p, 'ins_motor', 'state'), [[at(0), 'RUNNING', 'bad']])
      // The samples form the gateway's open batch of format `live` (historian-open-batches.test.ts), its counts those of the answer.
      const batch = (await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${answer.historianBatchId}` })).json()
      assert.deepEqual(
        [batch.format, batch.status, batch.samplesStored, batch.rowsRejected, batch.valuesRead, batch.tags.length, batch.trendFileName],
        ['live', 'open', 4, 6, 10, 2, 'gw1-0001'],
      )
      // Deleting that batch deletes its samples.
      assert.equal((await h.inject(p.owner, { method: 'DELETE', url: `/api/historian/import-batches/${answer.historianBatchId}` })).statusCode, 204)
      assert.equal(await sampleCount(h, p.owner.org.id), 0)
    })

    it('lines: quoted text states with doubled quotes, epoch and ISO timestamps, quality names and codes, CRLF; unreadable lines refused by index', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const lines = [
        `ins_pump,speed,${NOW - 3 * MIN},1.5`,
        `ins_pump,speed,${at(-2)},-2e1,uncertain\r`,
        '',
        `ins_motor,state,${NOW},"say ""hi"", then stop",bad`,
        `ins_pump,speed,${NOW},fast`,
        `ins_pump,speed,${NOW},1,excellent`,
        `ins_pump,speed,${NOW}`,
        `ins_pump,speed,"${NOW},1`,
        `ins_pump,speed,${NOW + MIN},7,64`,
        `ins_motor,state,${NOW},"${'x'.repeat(1001)}"`,
      ]
      const res = await push(h, p, 'lines-1', `${lines.join('\n')}\n`, 'text/plain; charset=utf-8')
      assert.equal(res.statusCode, 200, res.body)
      const answer = res.json()
      assert.deepEqual([answer.received, answer.stored, answer.refused, answer.duplicates], [9, 4, 5, 0])
      assert.deepEqual(
        answer.refusals.map((r: { index: number }) => r.index),
        [4, 5, 6, 7, 9],
      )
      assert.match(answer.refusals[0].reason, /value 'fast' is not a finite number/)
      assert.match(answer.refusals[1].reason, /quality 'excellent'/)
      assert.match(answer.refusals[2].reason, /has 3 fields/)
      assert.match(answer.refusals[3].reason, /quoted field does not close/)
      assert.match(answer.refusals[4].reason, /longer than 1000 characters/)
      assert.deepEqual(await raw(h, p, 'ins_pump', 'speed'), [
        [at(-3), 1.5, 'good'],
        [at(-2), -20, 'uncertain'],
        [at(1), 7, 'uncertain'],
      ])
      assert.deepEqual(await raw(h, p, 'ins_motor', 'state'), [[at(0), 'say "hi", then stop', 'bad']])
      // text/csv is the same format.
      const csv = await push(h, p, 'lines-2', `ins_pump,speed,${at(-4)},3\r\n`, 'text/csv')
      assert.deepEqual([csv.statusCode, csv.json().stored], [200, 1])
    })

    it('lines: a UTF-8 byte order mark before the first line (a CSV saved by a spreadsheet) is not part of its instance id, as in an import', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const res = await push(h, p, 'lines-bom', `\uFEFFins_pump,speed,${at(-5)},4\r\nins_pump,speed,${at(-6)},5\r\n`, 'text/csv')
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual([res.json().stored, res.json().refusals], [2, []])
    })

    it('the CSV export writes a text state a spreadsheet would run as a formula with a quote before it (OWASP CSV injection); numbers as they are', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const states = ['=HYPERLINK("http://evil.example","open")', '+1+cmd', '-FAULT', '@SUM(A1)', '\tTAB', 'RUNNING']
      const samples = [
        ...states.map((text, i) => ({ instanceId: 'ins_motor', tagKey: 'state', ts: at(-10 + i), text })),
        { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-3), value: -12.5 },
        { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-2), value: -1e-7 },
      ]
      const res = await h.inject(p.member, { method: 'POST', url: `/api/sites/${p.siteCode}/historian/samples?batchKey=csv-formula`, payload: { samples } })
      assert.equal(res.json().stored, samples.length, res.body)
      const csv = async (instanceId: string, tag: string) => {
        const read = await h.inject(p.member, {
          method: 'GET',
          url: `/api/sites/${p.siteCode}/historian/series?instanceId=${instanceId}&tag=${tag}&from=${at(-120)}&to=${at(120)}&format=csv`,
        })
        assert.equal(read.statusCode, 200, read.body)
        return read.body.trimEnd().split('\r\n').slice(1)
      }
      const texts = (await csv('ins_motor', 'state')).map((line) => line.split(',').slice(4, -2).join(','))
      assert.deepEqual(texts, ['"\'=HYPERLINK(""http://evil.example"",""open"")"', "'+1+cmd", "'-FAULT", "'@SUM(A1)", "'\tTAB", 'RUNNING'])
      assert.deepEqual(
        (await csv('ins_pump', 'speed')).map((line) => line.split(',')[3]),
        ['-12.5', '-1e-7'],
      )
      // The JSON read answers the stored text as it is.
      assert.deepEqual(
        (await raw(h, p, 'ins_motor', 'state')).map(([, text]) => text),
        states,
      )
    })

    it('a sample at a tag and timestamp already stored (import or earlier push) keeps the stored value; a repeat within a push is a duplicate', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const imported = await upload(
        h,
        p.owner,
        standardParts(p.siteCode, 'long', `timestamp,tag,value,quality\n${at(-10)},S,100,Good\n`, 'historian_tag,instance_id,tag_key\nS,ins_pump,speed\n'),
      )
      assert.equal(imported.statusCode, 201, imported.body)
      const first = await push(h, p, 'a', { samples: [{ instanceId: 'ins_pump', tagKey: 'speed', ts: at(-5), value: 1 }] })
      assert.equal(first.json().stored, 1)
      const second = await push(h, p, 'b', {
        samples: [
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-10), value: 2 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-5), value: 3 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-4), value: 4 },
          { instanceId: 'ins_pump', tagKey: 'speed', ts: at(-4), value: 5 },
        ],
      })
      assert.deepEqual([second.json().stored, second.json().duplicates, second.json().refused], [1, 3, 0])
      assert.deepEqual(await raw(h, p, 'ins_pump', 'speed'), [
        [at(-10), 100, 'good'],
        [at(-5), 1, 'good'],
        [at(-4), 5, 'good'],
      ])
    })

    it('a batch id pushed again stores nothing twice and answers the first answer, also to 50 resends at once; other batch ids with the same samples at once store each once', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const samples = (from: number) => Array.from({ length: 30 }, (_, i) => ({ instanceId: 'ins_pump', tagKey: 'speed', ts: at(from + i), value: i }))
      const body = { samples: [...samples(-50), { instanceId: 'ins_ghost', tagKey: 'speed', ts: at(0), value: 0 }] }
      const first = await push(h, p, 'gw-7', body)
      assert.equal(first.statusCode, 200, first.body)
      const again = await push(h, p, 'gw-7', body)
      assert.equal(again.statusCode, 200, again.body)
      const { replayed: firstReplayed, ...firstAnswer } = first.json()
      const { replayed: againReplayed, ...againAnswer } = again.json()
      assert.deepEqual([firstReplayed, againReplayed], [false, true])
      assert.deepEqual(againAnswer, firstAnswer)
      assert.equal(await sampleCount(h, p.owner.org.id), 30)

      const burst = await Promise.all(Array.from({ length: 50 }, () => push(h, p, 'gw-8', { samples: samples(-30) })))
      assert.deepEqual(
        burst.map((r) => r.statusCode),
        burst.map(() => 200),
      )
      const answers = burst.map((r) => r.json())
      assert.equal(answers.filter((a) => !a.replayed).length, 1)
      const ids = new Set(answers.map((a) => a.historianBatchId))
      assert.equal(ids.size, 1)
      // The first push stored 20 new samples (10 of its 30 overlap gw-7's): every answer says so.
      assert.deepEqual(new Set(answers.map((a) => `${a.stored}/${a.duplicates}`)), new Set(['20/10']))
      assert.equal(await sampleCount(h, p.owner.org.id), 50)
      const live = await h.handle.db
        .selectFrom('historian_batches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', p.owner.org.id)
        .where('format', '=', 'live')
        .executeTakeFirstOrThrow()
      // Both batch ids were pushed by one key in one window: one (open) batch holds them.
      assert.equal(Number(live.n), 1)

      // Other batch ids carrying the same samples at once: each stores what none stored before, none fails.
      // The series exists (a sample outside their range), so no push waits on another creating it.
      assert.equal((await push(h, p, 'gw-9', { samples: [{ instanceId: 'ins_pump', tagKey: 'state', ts: at(-40), value: 0 }] })).json().stored, 1)
      const state = samples(-30).map((x) => ({ ...x, tagKey: 'state' }))
      const others = await Promise.all(Array.from({ length: 10 }, (_, i) => push(h, p, `gw-9-${i}`, { samples: state })))
      assert.deepEqual(
        others.map((r) => r.statusCode),
        others.map(() => 200),
      )
      const sum = (key: 'stored' | 'duplicates') => others.reduce((n, r) => n + (r.json()[key] as number), 0)
      assert.deepEqual([sum('stored'), sum('duplicates')], [30, 270])
      assert.equal(await sampleCount(h, p.owner.org.id), 81)
    })

    it('50 pushes at once from 10 keys of two organisations (same site code, instances and tag) beside 25 resends of one batch id in each: each push answered its own counts and refusals, stored in its own organisation; each batch id stored once per organisation', async () => {
      const h = shared()
      const plants = [await livePlant(h, NOW), await livePlant(h, NOW)]
      const keys = await Promise.all(
        plants.flatMap((p) => Array.from({ length: 5 }, async () => ({ p, key: (await h.mintKey(p.owner.org, 'member')).plaintext }))),
      )
      const as = (p: Plant, key: string) => ({ ...p, member: { org: p.owner.org, apiKey: key } })
      // Push i: 5 samples of its own (organisation i % 2, value i) and, at index i % 6, a tag key no instance maps.
      const body = (i: number) => {
        const samples: unknown[] = Array.from({ length: 5 }, (_, j) => ({ instanceId: 'ins_pump', tagKey: 'speed', ts: NOW - (i + 1) * 1000 - j, value: i }))
        samples.splice(i % 6, 0, { instanceId: 'ins_pump', tagKey: 'flow', ts: NOW - i, value: -1 })
        return { samples }
      }
      const same = (o: number) => ({
        samples: Array.from({ length: 3 + o }, (_, j) => ({ instanceId: 'ins_motor', tagKey: 'state', ts: NOW - j, value: 100 + o })),
      })
      const requests = [
        ...Array.from({ length: 50 }, (_, i) => () => {
          const k = keys[(i % 2) * 5 + (Math.floor(i / 2) % 5)]!
          return push(h, as(k.p, k.key), `c-${i}`, body(i))
        }),
        ...Array.from({ length: 50 }, (_, i) => () => push(h, as(plants[i % 2]!, keys[(i % 2) * 5]!.key), 'same', same(i % 2))),
      ]
      const results = await Promise.all(requests.map((r) => r()))
      assert.deepEqual(
        results.map((r) => r.statusCode),
        results.map(() => 200),
      )
      const answers = results.map((r) => r.json())
      assert.deepEqual(
        answers
          .slice(0, 50)
          .map((a) => [a.batchKey, a.received, a.stored, a.duplicates, a.refused, a.replayed, a.refusals.map((r: { index: number }) => r.index)]),
        Array.from({ length: 50 }, (_, i) => [`c-${i}`, 6, 5, 0, 1, false, [i % 6]]),
        'each push answered its own counts and its own refusal',
      )
      for (const o of [0, 1]) {
        const resends = answers.slice(50).filter((_, i) => i % 2 === o)
        assert.equal(resends.filter((a) => !a.replayed).length, 1, `organisation ${o}: one of the resends stored`)
        assert.deepEqual(new Set(resends.map((a) => `${a.historianBatchId} ${a.stored}`)).size, 1)
        assert.equal(resends[0].stored, 3 + o)
      }
      // Each organisation holds its own pushes' samples and batches only.
      for (const [o, p] of plants.entries()) {
        assert.equal(await sampleCount(h, p.owner.org.id), 25 * 5 + 3 + o)
        const values = (await raw(h, p, 'ins_pump', 'speed')).map(([, v]) => v as number)
        assert.deepEqual(
          [...new Set(values)].sort((a, b) => a - b),
          Array.from({ length: 25 }, (_, i) => 2 * i + o),
        )
        assert.deepEqual(new Set((await raw(h, p, 'ins_motor', 'state')).map(([, v]) => v)), new Set([100 + o]))
        const batches = await h.handle.db.selectFrom('historian_batches').select('id').where('org_id', '=', p.owner.org.id).execute()
        assert.deepEqual(new Set(batches.map((b) => b.id)), new Set(answers.filter((_, i) => i % 2 === o).map((a) => a.historianBatchId)))
      }
    })

    it('the service under 100 pushes of two organisations interleaved as one process issues them (SQLite groups them): each group one organisation, each push its own counts and refusals, a batch id stored once per organisation', async () => {
      const h = shared()
      const plants = [await livePlant(h, NOW), await livePlant(h, NOW)]
      const orgs = plants.map((p) => p.owner.org.id as OrgId)
      const live = createLiveIngest({
        handle: h.handle,
        clock: h.clock,
        sites: { require: async (_o, code) => ({ code }) },
        instances: {
          listTagMappings: async (orgId, siteCode) =>
            (
              await h.handle.db.selectFrom('instances').select(['id', 'tag_mappings']).where('org_id', '=', orgId).where('site_code', '=', siteCode).execute()
            ).map((r) => ({ instanceId: r.id, tagMappings: JSON.parse(r.tag_mappings) as Record<string, string> })),
        },
        versions: { configVersion: async (o, code) => (await findConfigVersion(h.handle.db, o, code)) ?? 0 },
        limits: { maxSamples: 60, maxSkewMs: MIN, maxAgeMs: 60 * MIN },
      })
      // Push i (organisation i % 2): 5 samples of value i and, at index i % 6, a tag key no instance maps; push 50 + i:
      // batch id 'same' in organisation i % 2 (3 + i % 2 samples).
      const items = (i: number) => {
        const samples: LiveItem[] = Array.from({ length: 5 }, (_, j) => ({
          index: 0,
          instanceId: 'ins_pump',
          tagKey: 'speed',
          ts: NOW - (i + 1) * 1000 - j,
          value: i,
          text: null,
          quality: 192,
        }))
        samples.splice(i % 6, 0, { index: 0, instanceId: 'ins_pump', tagKey: 'flow', ts: NOW - i, value: -1, text: null, quality: 192 })
        return samples.map((s, index) => ({ ...s, index }))
      }
      const same = (o: number) =>
        Array.from({ length: 3 + o }, (_, j) => ({ index: j, instanceId: 'ins_motor', tagKey: 'state', ts: NOW - j, value: 100 + o, text: null, quality: 192 }))
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          withOrgScope(orgs[i % 2]!, () =>
            i < 50 ? live.push(orgs[i % 2]!, CLI_ACTOR, 'plant-1', `c-${i}`, items(i)) : live.push(orgs[i % 2]!, CLI_ACTOR, 'plant-1', 'same', same(i % 2)),
          ),
        ),
      )
      assert.deepEqual(
        answers.slice(0, 50).map((a) => [a.batchKey, a.received, a.stored, a.duplicates, a.refused, a.replayed, a.refusals.map((r) => r.index)]),
        Array.from({ length: 50 }, (_, i) => [`c-${i}`, 6, 5, 0, 1, false, [i % 6]]),
        'each push answered its own counts and its own refusal',
      )
      for (const [o, orgId] of orgs.entries()) {
        const resends = answers.slice(50).filter((_, i) => i % 2 === o)
        assert.equal(resends.filter((a) => !a.replayed).length, 1, `organisation ${o}: one of the resends stored`)
        assert.deepEqual(new Set(resends.map((a) => `${a.historianBatchId} ${a.stored}`)), new Set([`${resends[0]!.historianBatchId} ${3 + o}`]))
        assert.equal(await sampleCount(h, orgId), 25 * 5 + 3 + o, `organisation ${o} holds its own pushes' samples only`)
        const batches = await h.handle.db.selectFrom('historian_batches').select('id').where('org_id', '=', orgId).execute()
        assert.deepEqual(new Set(batches.map((b) => b.id)), new Set(answers.filter((_, i) => i % 2 === o).map((a) => a.historianBatchId)))
        const values = (await raw(h, plants[o]!, 'ins_pump', 'speed')).map(([, v]) => v as number)
        assert.deepEqual(
          [...new Set(values)].sort((a, b) => a - b),
          Array.from({ length: 25 }, (_, i) => 2 * i + o),
        )
      }
    })

    it('refused whole, nothing stored: 413 above the batch size, 400 without a batch id, 415 another type, 404 an unknown site', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const many = Array.from({ length: 61 }, (_, i) => ({ instanceId: 'ins_pump', tagKey: 'speed', ts: NOW - i, value: i }))
      const tooMany = await push(h, p, 'big', { samples: many })
      assert.equal(tooMany.statusCode, 413, tooMany.body)
      assert.match(tooMany.json().detail, /holds 61 samples; at most 60/)
      const lines = many.map((s) => `ins_pump,speed,${s.ts},${s.value}`).join('\n')
      assert.equal((await push(h, p, 'big', lines, 'text/plain')).statusCode, 413)
      // 60 is the limit itself: taken.
      assert.equal((await push(h, p, 'big', { samples: many.slice(1) })).json().stored, 60)
      await h.handle.db.deleteFrom('historian_points').where('org_id', '=', p.owner.org.id).execute()

      const noId = await h.inject(p.member, {
        method: 'POST',
        url: `/api/sites/${p.siteCode}/historian/samples`,
        payload: { samples: [] },
      })
      assert.equal(noId.statusCode, 400)
      assert.match(noId.body, /batchKey/)
      assert.equal((await push(h, p, 'x', 'a=1', 'application/x-www-form-urlencoded')).statusCode, 415)
      assert.equal((await push(h, p, 'bad id!', { samples: [] })).statusCode, 400)
      const unknownSite = await h.inject(p.member, {
        method: 'POST',
        url: '/api/sites/nowhere/historian/samples?batchKey=x',
        payload: { samples: [] },
      })
      assert.equal(unknownSite.statusCode, 404)
      assert.equal(await sampleCount(h, p.owner.org.id), 0)
    })

    it('a push of no samples (an empty array, a body of no lines) is a 422 naming /samples and makes no batch, also when resent', async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      for (const [body, type] of [
        [{ samples: [] }, 'application/json'],
        ['\r\n\n', 'text/plain'],
        ['', 'text/csv'],
      ] as const) {
        for (const attempt of [1, 2]) {
          const res = await push(h, p, 'empty-1', body, type)
          assert.equal(res.statusCode, 422, `${type} #${attempt}: ${res.body}`)
          assert.equal(res.json().code, 'UnprocessableEntity')
          assert.deepEqual(
            res.json().errors.map((e: { pointer: string }) => e.pointer),
            ['/samples'],
          )
        }
      }
      const batches = await h.handle.db.selectFrom('historian_batches').select('id').where('org_id', '=', p.owner.org.id).execute()
      assert.deepEqual(batches, [])
      // The same batch key then carrying samples is a first push, not a replay of the empty one.
      const later = await push(h, p, 'empty-1', { samples: [{ instanceId: 'ins_pump', tagKey: 'speed', ts: at(0), value: 1 }] })
      assert.deepEqual([later.statusCode, later.json().stored, later.json().replayed], [200, 1, false])
    })

    it("a tag key mapped after a push is taken by the next push: the site's tag mappings are read again once its equipment changed", async () => {
      const h = shared()
      const p = await livePlant(h, NOW)
      const sample = { instanceId: 'ins_pump', tagKey: 'flow', ts: at(0), value: 1 }
      const before = await push(h, p, 'map-1', { samples: [sample] })
      assert.deepEqual([before.json().stored, before.json().refused], [0, 1])
      // A tag key the API adds or one any writer adds (the fleet link, a tenant import): both move the version.
      const mapped = await h.inject(p.owner, {
        method: 'PUT',
        url: `/api/sites/${p.siteCode}/instances/ins_pump`,
        payload: { tagMappings: { speed: 'N7:0', state: 'N7:1', flow: 'N7:2' } },
      })
      assert.equal(mapped.statusCode, 200, mapped.body)
      const after = await push(h, p, 'map-2', { samples: [sample] })
      assert.deepEqual([after.json().stored, after.json().refused], [1, 0])
      await h.handle.db
        .updateTable('instances')
        .set({ tag_mappings: JSON.stringify({ speed: 'N7:0' }), tag_count: 1 })
        .where('org_id', '=', p.owner.org.id)
        .where('id', '=', 'ins_pump')
        .execute()
      const removed = await push(h, p, 'map-3', { samples: [{ ...sample, ts: at(-1) }] })
      assert.deepEqual([removed.json().stored, removed.json().refused], [0, 1])
    })
  })
}
