// Issue 24, defect 5: every value an import reads has one outcome, counted (stored, collided, rejected, duplicate in
// the file, sentinel, empty): valuesRead is their sum in every batch, and samplesStored is what the database holds.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { testDialects, type Harness } from '../../../test/harness.ts'
import { parseAll, type FormatName } from './parse/index.ts'
import { SAMPLES_DIR } from './parse/test-support.ts'
import { FLUSH_SAMPLES } from './service/write-pipeline.ts'
import { FIXTURES, plant, series, sharedHarness, standardParts, upload, type Plant } from './test-setup.ts'

interface Figures {
  id: string | null
  format: string
  status: string
  rowsRead: number
  valuesRead: number
  samplesStored: number
  collisions: number
  replaced: number
  rowsRejected: number
  duplicatesInFile: number
  sentinelValues: number
  emptyValues: number
}

const TALL = new Set(['long', 'ignition-tall', 'aveva-history', 'proficy', 'piconfig'])

const figures = (b: Figures) => {
  const { format, status, rowsRead, valuesRead, samplesStored, collisions, replaced, rowsRejected, duplicatesInFile, sentinelValues, emptyValues } = b
  return { format, status, rowsRead, valuesRead, samplesStored, collisions, replaced, rowsRejected, duplicatesInFile, sentinelValues, emptyValues }
}

async function storedOf(h: Harness, orgId: string, batchId: string): Promise<number> {
  const row = await h.handle.db
    .selectFrom('historian_points')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('batch_id', '=', batchId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * The accounting of one answered batch: the identity, one value a row in the one-sample-a-row layouts, the stored
 * count equal to the database's rows of the batch, and the list's summary showing the same counters.
 */
async function assertAccounted(h: Harness, p: Plant, b: Figures): Promise<void> {
  const outcomes = b.samplesStored + b.collisions + b.rowsRejected + b.duplicatesInFile + b.sentinelValues + b.emptyValues
  assert.equal(b.valuesRead, outcomes, `valuesRead = the sum of the outcomes: ${JSON.stringify(figures(b))}`)
  assert.ok(b.replaced <= b.samplesStored)
  if (TALL.has(b.format)) assert.equal(b.valuesRead, b.rowsRead)
  if (b.id === null) return
  assert.equal(await storedOf(h, p.owner.org.id, b.id), b.samplesStored, 'samplesStored is what the database holds of the batch')
  const list = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches?siteId=${p.siteCode}&limit=200` })
  const listed = (list.json() as { items: Figures[] }).items.find((x) => x.id === b.id)
  assert.deepEqual(figures(listed!), figures(b))
}

const csvCell = (s: string) => (/[",;\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)

/** Every tag of the file mapped (instance ins_boiler1, keys t0, t1, …) but the last one, which stays unmapped. */
async function mappingOf(bytes: Buffer, format: FormatName | 'auto', timezone: string): Promise<string> {
  const { samples } = await parseAll([bytes], { format, timezone })
  const tags = [...new Set(samples.map((s) => s.tag))]
  const mapped = tags.length > 1 ? tags.slice(0, -1) : tags
  return `historian_tag,instance_id,tag_key\n${mapped.map((t, i) => `${csvCell(t)},ins_boiler1,t${i}`).join('\n')}\n`
}

/** Every format of the fixtures (test/fixtures/historian and the third-party samples), with the options they need. */
const FILES: Array<{ path: string; format: FormatName | 'auto'; parts: Record<string, string> }> = [
  { path: `${FIXTURES}long.csv`, format: 'long', parts: { timezone: 'Europe/Paris', sentinels: '-9999' } },
  { path: `${FIXTURES}long-dst-paris.csv`, format: 'auto', parts: { timezone: 'Europe/Paris' } },
  { path: `${FIXTURES}long-semicolon.csv`, format: 'auto', parts: {} },
  { path: `${FIXTURES}wide.csv`, format: 'auto', parts: { timezone: 'Europe/Berlin', sentinels: '888.8' } },
  { path: `${FIXTURES}ignition-tall.csv`, format: 'auto', parts: { timezone: 'Europe/Paris' } },
  { path: `${FIXTURES}aveva-history.csv`, format: 'aveva-history', parts: {} },
  { path: `${FIXTURES}proficy.csv`, format: 'auto', parts: {} },
  { path: `${FIXTURES}citect-pa.csv`, format: 'citect-pa', parts: {} },
  { path: `${FIXTURES}piconfig.csv`, format: 'auto', parts: {} },
  { path: `${SAMPLES_DIR}hurence_chemistry_long.csv`, format: 'auto', parts: { sentinels: '-9999' } },
  { path: `${SAMPLES_DIR}hurence_echantillons_export_long.csv`, format: 'auto', parts: {} },
  { path: `${SAMPLES_DIR}logisland_heating_controller_wide.csv`, format: 'auto', parts: { sentinels: '888.8' } },
  { path: `${SAMPLES_DIR}osisoft_pidata_piconfig.csv`, format: 'auto', parts: {} },
]

const PAIRS = 'historian_tag,instance_id,tag_key\nA,ins_pump,a\nB,ins_pump,b\n'

for (const dialect of testDialects()) {
  describe(`${dialect}: historian accounting`, () => {
    const shared = sharedHarness(dialect)

    it("every value of every fixture file is accounted for, in a dry run and in the import, and the stored count is the database's", async (t) => {
      const h = shared()
      for (const file of FILES) {
        const p = await plant(h)
        const bytes = readFileSync(file.path)
        const mapping = await mappingOf(bytes, file.format, file.parts.timezone ?? 'UTC')
        const dry = await upload(h, p.owner, standardParts(p.siteCode, file.format, bytes, mapping, { ...file.parts, dryRun: 'true' }))
        assert.equal(dry.statusCode, 200, `${file.path}: ${dry.body}`)
        await assertAccounted(h, p, dry.json())
        const res = await upload(h, p.owner, standardParts(p.siteCode, file.format, bytes, mapping, file.parts))
        assert.equal(res.statusCode, 201, `${file.path}: ${res.body}`)
        const batch = res.json() as Figures
        await assertAccounted(h, p, batch)
        // The same import again with force: every sample replaces its twin.
        const forced = await upload(h, p.owner, standardParts(p.siteCode, file.format, bytes, mapping, { ...file.parts, force: 'true' }))
        assert.equal(forced.statusCode, 201, forced.body)
        await assertAccounted(h, p, forced.json())
        assert.equal(forced.json().replaced, batch.samplesStored)
        t.diagnostic(`accounting ${dialect} ${file.path.split('/').at(-1)}: ${JSON.stringify(figures(batch))}`)
      }
    })

    it('the two 02:30 rows of the autumn change in Paris are two samples (+02:00 then +01:00); the spring-gap 02:30 is rejected with its reason', async () => {
      const h = shared()
      const p = await plant(h)
      const trend =
        'timestamp,tag,value\n2024-10-27 01:30:00,A,1\n2024-10-27 02:30:00,A,2\n2024-10-27 02:30:00,A,3\n2024-10-27 03:30:00,A,4\n2024-03-31 02:30:00,A,5\n'
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, PAIRS, { timezone: 'Europe/Paris' }))
      assert.equal(res.statusCode, 201, res.body)
      const batch = res.json()
      assert.deepEqual(figures(batch), {
        format: 'long',
        status: 'complete',
        rowsRead: 5,
        valuesRead: 5,
        samplesStored: 4,
        collisions: 0,
        replaced: 0,
        rowsRejected: 1,
        duplicatesInFile: 0,
        sentinelValues: 0,
        emptyValues: 0,
      })
      assert.deepEqual(batch.rejections.first, [
        { line: 6, reason: 'local time 2024-03-31 02:30:00.000 does not exist in Europe/Paris (skipped by the spring-forward change)' },
      ])
      const read = await series(h, p, 'instanceId=ins_pump&tag=a')
      assert.deepEqual(
        read.samples.map((s) => [s.ts, s.value]),
        [
          ['2024-10-26T23:30:00.000Z', 1],
          ['2024-10-27T00:30:00.000Z', 2],
          ['2024-10-27T01:30:00.000Z', 3],
          ['2024-10-27T02:30:00.000Z', 4],
        ],
      )
    })

    it('a long file mixing the repeated hour, the gap, duplicates, sentinels, empties, bad values, unmapped tags and collisions: each counted once, with force too', async () => {
      const h = shared()
      const p = await plant(h)
      const options = { timezone: 'Europe/Paris', sentinels: '-9999' }
      const prior = await upload(h, p.owner, standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-06-01 00:00:00,A,100\n', PAIRS, options))
      assert.equal(prior.statusCode, 201, prior.body)
      const trend = [
        'timestamp,tag,value',
        '2024-10-27 01:30:00,A,1',
        '2024-10-27 02:30:00,A,2',
        '2024-10-27 02:30:00,A,3',
        '2024-10-27 03:30:00,A,4', // 4 stored
        '2024-03-31 02:30:00,A,5', // rejected: the gap
        '2024-05-01 00:00:00,B,6',
        '2024-05-01 00:00:00,B,7', // a duplicate; the later row is stored
        '2024-05-01 00:01:00,B,-9999',
        '2024-05-01 00:02:00,B,', // a sentinel, an empty value
        '2024-05-01 00:03:00,B,1.2.3',
        '2024-05-01 00:04:00,X,1',
        'not a time,B,1', // rejected: a bad number, an unmapped tag, a bad time
        '2024-06-01 00:00:00,A,8', // collides with the prior batch
      ].join('\n')
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, PAIRS, options))
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(figures(res.json()), {
        format: 'long',
        status: 'complete',
        rowsRead: 13,
        valuesRead: 13,
        samplesStored: 5,
        collisions: 1,
        replaced: 0,
        rowsRejected: 4,
        duplicatesInFile: 1,
        sentinelValues: 1,
        emptyValues: 1,
      })
      await assertAccounted(h, p, res.json())
      assert.deepEqual(
        (await series(h, p, 'instanceId=ins_pump&tag=b')).samples.map((s) => [s.ts, s.value]),
        [['2024-04-30T22:00:00.000Z', 7]],
      )
      const forced = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, PAIRS, { ...options, force: 'true' }))
      assert.equal(forced.statusCode, 201, forced.body)
      assert.deepEqual(figures(forced.json()), {
        format: 'long',
        status: 'complete',
        rowsRead: 13,
        valuesRead: 13,
        samplesStored: 6,
        collisions: 0,
        replaced: 6,
        rowsRejected: 4,
        duplicatesInFile: 1,
        sentinelValues: 1,
        emptyValues: 1,
      })
      await assertAccounted(h, p, forced.json())
    })

    it('a wide file: one value a tag column of each row (missing cells empty, a row refused whole once), each counted once', async () => {
      const h = shared()
      const p = await plant(h)
      const trend = [
        'time,A,B,,X',
        '2024-01-01 00:00:00,1,2,,3', // A, B stored (A later a duplicate); unnamed column empty; X unmapped
        '2024-01-01 00:01:00,888.8,', // A sentinel; B empty; two cells missing: empty
        '2024-01-01 00:02:00,1.2.3,4, ,5', // A rejected; B stored; a blank under the unnamed column: empty; X unmapped
        'bad,1,2,,3', // refused whole: its time
        '2024-01-01 00:03:00,1,2,,3,9', // refused whole: too many fields
        '2024-01-01 00:00:00,7,,,', // A stored (the earlier A a duplicate); three empty
      ].join('\n')
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'wide', trend, PAIRS, { sentinels: '888.8' }))
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(figures(res.json()), {
        format: 'wide',
        status: 'complete',
        rowsRead: 6,
        valuesRead: 18,
        samplesStored: 3,
        collisions: 0,
        replaced: 0,
        rowsRejected: 5,
        duplicatesInFile: 1,
        sentinelValues: 1,
        emptyValues: 8,
      })
      await assertAccounted(h, p, res.json())
    })

    it('a duplicate more than a write transaction apart is counted too (the later row kept), with and without force', async () => {
      const h = shared()
      const p = await plant(h)
      const start = Date.UTC(2024, 0, 1)
      const n = FLUSH_SAMPLES + 10
      let trend = 'timestamp,tag,value\n'
      for (let i = 0; i < n - 1; i++) trend += `${new Date(start + i * 1000).toISOString()},A,${i}\n`
      trend += `${new Date(start).toISOString()},A,-1\n`
      const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, PAIRS))
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(figures(res.json()), {
        format: 'long',
        status: 'complete',
        rowsRead: n,
        valuesRead: n,
        samplesStored: n - 1,
        collisions: 0,
        replaced: 0,
        rowsRejected: 0,
        duplicatesInFile: 1,
        sentinelValues: 0,
        emptyValues: 0,
      })
      await assertAccounted(h, p, res.json())
      assert.deepEqual(
        (await series(h, p, `instanceId=ins_pump&tag=a&limit=1`)).samples.map((s) => s.value),
        [-1],
      )
      const forced = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, PAIRS, { force: 'true' }))
      assert.equal(forced.statusCode, 201, forced.body)
      assert.deepEqual(figures(forced.json()), {
        format: 'long',
        status: 'complete',
        rowsRead: n,
        valuesRead: n,
        samplesStored: n - 1,
        collisions: 0,
        replaced: n - 1,
        rowsRejected: 0,
        duplicatesInFile: 1,
        sentinelValues: 0,
        emptyValues: 0,
      })
      await assertAccounted(h, p, forced.json())
    })

    it('random small long and wide files (fast-check): the accounting closes in every batch, dry runs and forced ones included', async () => {
      const h = shared()
      const p = await plant(h)
      const times = [
        '2024-10-27 01:30:00',
        '2024-10-27 02:00:00',
        '2024-10-27 02:30:00',
        '2024-03-31 02:30:00',
        '2024-05-01 00:00:00',
        '2024-05-01 00:01:00',
        'never',
      ]
      const values = ['1', '2.5', '-9999', '', ' ', 'Running', '1.2.3']
      const time = fc.constantFrom(...times)
      const value = fc.constantFrom(...values)
      const long = fc
        .array(fc.tuple(time, fc.constantFrom('A', 'B', 'X'), value), { minLength: 1, maxLength: 25 })
        .map((rows) => ({ format: 'long', trend: `timestamp,tag,value\n${rows.map((r) => r.join(',')).join('\n')}\n` }))
      const wide = fc
        .array(fc.tuple(time, fc.array(value, { maxLength: 4 })), { minLength: 1, maxLength: 15 })
        .map((rows) => ({ format: 'wide', trend: `time,A,B,X\n${rows.map(([t, cells]) => [t, ...cells].join(',')).join('\n')}\n` }))
      let run = 0
      await fc.assert(
        fc.asyncProperty(fc.oneof(long, wide), fc.constantFrom('import', 'force', 'dryRun'), async (file, mode) => {
          run++
          // A unit of its own makes each run's mapping (and so its pair of files) new: no 409 for a repeated file.
          const mapping = `historian_tag,instance_id,tag_key,unit\nA,ins_pump,a,u${run}\nB,ins_pump,b,u${run}\n`
          const extra = { timezone: 'Europe/Paris', sentinels: '-9999', ...(mode === 'import' ? {} : { [mode]: 'true' }) }
          const res = await upload(h, p.owner, standardParts(p.siteCode, file.format, file.trend, mapping, extra))
          assert.equal(res.statusCode, mode === 'dryRun' ? 200 : 201, res.body)
          await assertAccounted(h, p, res.json())
        }),
        { numRuns: 40, seed: 24 },
      )
    })
  })
}
