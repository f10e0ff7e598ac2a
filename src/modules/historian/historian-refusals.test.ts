import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { assertNothingStored, fixture, plant, standardParts, upload, type Plant, sharedHarness } from './test-setup.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: historian refused uploads`, () => {
    const shared = sharedHarness(dialect)
    describe('refused uploads store nothing', () => {
      const cases: Array<[string, (p: Plant) => ReturnType<typeof standardParts>, number, string, string | undefined]> = [
        [
          'a header that does not fit the layout',
          (p) => standardParts(p.siteCode, 'long', fixture('long-bad-header.csv'), 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
          422,
          'HistorianHeaderInvalid',
          '/trend_csv',
        ],
        [
          'an unrecognised layout with format=auto',
          (p) => standardParts(p.siteCode, 'auto', fixture('unknown-layout.csv'), 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
          422,
          'HistorianFormatUndetected',
          '/trend_csv',
        ],
        [
          'an empty trend file',
          (p) => standardParts(p.siteCode, 'long', '', 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
          422,
          'HistorianHeaderInvalid',
          '/trend_csv',
        ],
        [
          'an unterminated quote',
          (p) => standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-01-01T00:00:00Z,"A,1\n', 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
          422,
          'HistorianCsvInvalid',
          '/trend_csv',
        ],
        [
          'a mapping with empty cells and a bad scale',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping-bad.csv')),
          422,
          'HistorianMappingInvalid',
          '/mapping_csv',
        ],
        [
          'a mapping with a tag mapped twice',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping-duplicate.csv')),
          422,
          'HistorianMappingInvalid',
          '/mapping_csv',
        ],
        [
          'a mapping naming an unknown instance',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), 'historian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_ghost,q\n'),
          422,
          'HistorianMappingInvalid',
          '/mapping_csv',
        ],
        ['an unknown format', (p) => standardParts(p.siteCode, 'excel', fixture('long.csv'), fixture('mapping.csv')), 400, 'ValidationFailed', '/format'],
        [
          'a missing site_id',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping.csv')).filter((x) => x.name !== 'site_id'),
          400,
          'ValidationFailed',
          '/site_id',
        ],
        [
          'a missing format',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping.csv')).filter((x) => x.name !== 'format'),
          400,
          'ValidationFailed',
          '/format',
        ],
        [
          'a missing mapping_csv',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping.csv')).filter((x) => x.name !== 'mapping_csv'),
          400,
          'ValidationFailed',
          '/mapping_csv',
        ],
        [
          'a missing trend_csv',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping.csv')).filter((x) => x.name !== 'trend_csv'),
          400,
          'ValidationFailed',
          '/trend_csv',
        ],
        [
          'an unknown part',
          (p) => [{ name: 'colour', value: 'blue' }, ...standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping.csv'))],
          400,
          'ValidationFailed',
          '/colour',
        ],
        [
          'a bad timezone',
          (p) => standardParts(p.siteCode, 'long', fixture('long.csv'), fixture('mapping.csv'), { timezone: 'Mars/Olympus' }),
          400,
          'ValidationFailed',
          '/timezone',
        ],
        [
          'an unknown site',
          () => standardParts('nowhere', 'long', fixture('long.csv'), 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
          404,
          'NotFound',
          undefined,
        ],
        [
          'a field after trend_csv',
          (p) => [
            ...standardParts(p.siteCode, 'long', 'timestamp,tag,value\n2024-01-01T00:00:00Z,A,1\n', 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
            { name: 'force', value: 'true' },
          ],
          400,
          'ValidationFailed',
          '/force',
        ],
      ]
      for (const [what, parts, status, code, pointer] of cases) {
        it(`${what}: ${status} ${code}${pointer ? ` naming ${pointer}` : ''}`, async () => {
          const h = shared()
          const p = await plant(h)
          const res = await upload(h, p.owner, parts(p))
          assert.equal(res.statusCode, status, res.body)
          assert.equal(res.json().code, code)
          if (pointer !== undefined) assert.equal(res.json().errors[0].pointer, pointer)
          await assertNothingStored(h, p)
        })
      }

      it('a mapping problem names its line', async () => {
        const h = shared()
        const p = await plant(h)
        const res = await upload(
          h,
          p.owner,
          standardParts(p.siteCode, 'long', fixture('long.csv'), 'historian_tag,instance_id,tag_key\nA,ins_pump,p\nB,ins_ghost,q\n'),
        )
        assert.equal(res.json().line, 3)
        assert.match(res.json().errors[0].message, /^line 3: .*ins_ghost/)
      })

      it("a mapping tag_key over 200 characters or instance_id over 100 (as an instance's) is 422 naming the file, line and column; 200 and 100 pass", async () => {
        const h = shared()
        const p = await plant(h, { instances: ['ins_pump', 'i'.repeat(100)] })
        const trend = 'timestamp,tag,value\n2024-01-01T00:00:00Z,A,1\n2024-01-01T00:00:00Z,B,2\n'
        const mapping = (tagKey: string, instanceId: string) => `historian_tag,instance_id,tag_key\nA,ins_pump,${tagKey}\nB,${instanceId},q\n`
        const refusals = async (tagKey: string, instanceId: string) => {
          const res = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, mapping(tagKey, instanceId)))
          assert.equal(res.statusCode, 422, res.body)
          assert.equal(res.json().code, 'HistorianMappingInvalid')
          await assertNothingStored(h, p)
          return res.json().errors.map((e: { pointer: string; message: string }) => [e.pointer, e.message])
        }
        // A few KiB of key passed PostgreSQL's btree limit of its series index (a 500) as a tenant package's did.
        assert.deepEqual(await refusals('k'.repeat(3000), 'i'.repeat(100)), [['/mapping_csv', 'line 2: tag_key is longer than 200 characters']])
        assert.deepEqual(await refusals('p', 'i'.repeat(101)), [['/mapping_csv', 'line 3: instance_id is longer than 100 characters']])
        const longest = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, mapping('k'.repeat(200), 'i'.repeat(100))))
        assert.equal(longest.statusCode, 201, longest.body)
      })

      it('a trend file over SITEGRID_HISTORIAN_MAX_FILE_BYTES is 413, apart from the JSON body limit', async (t) => {
        const h = await harness(t, dialect, { SITEGRID_HISTORIAN_MAX_FILE_BYTES: '2048', SITEGRID_BODY_LIMIT_BYTES: '1024' })
        const p = await plant(h)
        const rows = Array.from({ length: 200 }, (_, i) => `2024-05-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z,A,${i}`)
        const res = await upload(
          h,
          p.owner,
          standardParts(p.siteCode, 'long', `timestamp,tag,value\n${rows.join('\n')}\n`, 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
        )
        assert.equal(res.statusCode, 413, res.body)
        assert.equal(res.json().code, 'PayloadTooLarge')
        await assertNothingStored(h, p)
        const small = await upload(
          h,
          p.owner,
          standardParts(p.siteCode, 'long', `timestamp,tag,value\n${rows.slice(0, 20).join('\n')}\n`, 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'),
        )
        assert.equal(small.statusCode, 201, small.body)
      })

      it("a part past the form's limits after trend_csv is 413, and the batch it had begun leaves no trace", async () => {
        const h = shared()
        const p = await plant(h)
        // Every field once, both files (the most parts the form holds), then one part more.
        const everyField = {
          force: 'false',
          dryRun: 'false',
          timezone: 'UTC',
          separator: ',',
          decimal: '.',
          dateOrder: 'ymd',
          qualityScale: 'opc',
          sentinels: 'NA',
          maxRejections: '10',
        }
        const parts = [
          ...standardParts(
            p.siteCode,
            'long',
            'timestamp,tag,value\n2024-01-01T00:00:00Z,A,1\n',
            'historian_tag,instance_id,tag_key\nA,ins_pump,p\n',
            everyField,
          ),
          { name: 'colour', value: 'blue' },
        ]
        const res = await upload(h, p.owner, parts)
        assert.equal(res.statusCode, 413, res.body)
        assert.equal(res.json().code, 'PayloadTooLarge')
        assert.match(res.json().errors[0].message, /^has more (parts|fields) than this upload accepts/)
        await assertNothingStored(h, p)
      })

      it('a multipart body that does not follow its own boundary, or ends inside a part, is 400 MalformedBody', async () => {
        const h = shared()
        const p = await plant(h)
        const part = (name: string, value: string, filename?: string) =>
          `--b\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`
        const head = part('site_id', p.siteCode) + part('format', 'long') + part('mapping_csv', 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n', 'm.csv')
        const bodies = {
          'another boundary': head.replaceAll('--b', '--other') + '--other--\r\n',
          'cut inside trend_csv': `${head}--b\r\nContent-Disposition: form-data; name="trend_csv"; filename="t.csv"\r\n\r\ntimestamp,tag,value\n2024-01-01T00:00:00Z,A,1\n`,
          'cut inside a part header': `${head}--b\r\nContent-Disposition: form-da`,
        }
        for (const [what, payload] of Object.entries(bodies)) {
          const res = await h.inject(p.owner, {
            method: 'POST',
            url: '/api/historian/import-batches',
            headers: { 'content-type': 'multipart/form-data; boundary=b' },
            payload,
          })
          assert.equal(res.statusCode, 400, `${what}: ${res.body}`)
          assert.equal(res.json().code, 'MalformedBody', what)
        }
        await assertNothingStored(h, p)
      })

      it('a JSON body is 415', async () => {
        const h = shared()
        const p = await plant(h)
        const res = await h.inject(p.owner, { method: 'POST', url: '/api/historian/import-batches', payload: { site_id: p.siteCode } })
        assert.equal(res.statusCode, 415)
        await assertNothingStored(h, p)
      })
    })
  })
}
