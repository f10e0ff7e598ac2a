import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { createController, equipmentSetup, rowCount, snapshot } from '../controllers/test-support.ts'
import { MAX_FIELD_PROBLEMS } from '../../http/problem.ts'
import { MAX_LINE_PROBLEMS } from './bulk.ts'
import { MAX_CSV_COLUMNS, parseCsvRecords } from './csv.ts'

const URL = '/api/sites/S1/instances'
const BULK = `${URL}/bulk`
const CSV = { 'content-type': 'text/csv' }

const item = (id: string, controllerId: string, over: Record<string, unknown> = {}) => ({
  id,
  name: `Equipment ${id}`,
  typeId: 'pump',
  assetNumber: `A-${id}`,
  controllerId,
  ...over,
})

describe('CSV records', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, and reports where each record starts', () => {
    const records = parseCsvRecords('\ufeffa,b\r\n"x, y","say ""hi"""\n"multi\nline",2\n\n3,4')
    assert.deepEqual(records, [
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x, y', 'say "hi"'] },
      { line: 3, fields: ['multi\nline', '2'] },
      { line: 6, fields: ['3', '4'] },
    ])
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: instances bulk`, () => {
    it('dryRun reports created, updated, unchanged and refused by line and writes nothing', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      await as('POST', URL, item('P1', c.id, { config: { a: 1, b: 2 } }))
      await as('POST', URL, item('P2', c.id))
      const before = await snapshot(h, org)
      const body = [
        item('P1', c.id, { config: { b: 2, a: 1 } }),
        item('P2', c.id, { name: 'renamed' }),
        item('P3', c.id),
        item('P4', 'ctl_nope'),
        { id: 'P5', name: '' },
        item('P3', c.id),
        'not an object',
      ]
      const res = await as('POST', `${BULK}?dryRun=true`, body)
      assert.equal(res.statusCode, 200, res.body)
      const report = res.json()
      assert.deepEqual([report.dryRun, report.created, report.updated, report.unchanged, report.refused], [true, 1, 1, 1, 4])
      assert.deepEqual(
        report.lines.map((l: { line: number; outcome: string }) => [l.line, l.outcome]),
        [
          [1, 'unchanged'],
          [2, 'updated'],
          [3, 'created'],
          [4, 'refused'],
          [5, 'refused'],
          [6, 'refused'],
          [7, 'refused'],
        ],
      )
      assert.deepEqual(report.lines[3].errors, [{ pointer: '/controllerId', message: 'names no controller of this site' }])
      assert.ok(
        report.lines[4].errors.some(
          (e: { pointer: string; message: string }) => e.pointer === '/name' && e.message === 'must NOT have fewer than 1 characters',
        ),
      )
      assert.ok(
        report.lines[4].errors.some((e: { pointer: string; message: string }) => e.pointer === '/typeId' && e.message === 'is required'),
        JSON.stringify(report.lines[4].errors),
      )
      assert.match(report.lines[5].errors[0].message, /line 3/)
      assert.equal(report.lines[6].id, null)
      assert.equal(await snapshot(h, org), before)
    })

    it('without dryRun it is all or nothing: one refused line is a 422 with the report and nothing is written', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      await as('POST', URL, item('P1', c.id))
      const before = await snapshot(h, org)
      const res = await as('POST', BULK, [item('P1', c.id, { name: 'changed' }), item('P2', c.id), item('P3', c.id, { tagMappings: { a: 1 } })])
      assert.equal(res.statusCode, 422)
      assert.equal(res.json().code, 'UnprocessableEntity')
      assert.equal(res.json().report.refused, 1)
      assert.equal(res.json().report.dryRun, false)
      assert.deepEqual(
        res.json().errors.map((e: { pointer: string }) => e.pointer),
        ['/2/tagMappings/a'],
      )
      assert.equal(await snapshot(h, org), before)
    })

    it('a clean batch creates and replaces whole (absent optional fields cleared) in one go', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      await as('POST', URL, item('P1', c.id, { area: 'North', tagMappings: { run: 'R' } }))
      const res = await as('POST', BULK, [item('P1', c.id), item('P2', c.id, { tagMappings: { run: 'X', speed: 'Y' } })])
      assert.equal(res.statusCode, 200)
      assert.deepEqual([res.json().created, res.json().updated, res.json().unchanged, res.json().refused, res.json().dryRun], [1, 1, 0, 0, false])
      const p1 = (await as('GET', `${URL}/P1`)).json()
      assert.deepEqual([p1.area, p1.tagMappings], [null, {}])
      assert.equal(await rowCount(h, 'instances', org.id), 2)
      assert.equal((await as('GET', `/api/sites/S1/controllers/${c.id}`)).json().pollBudget.mappedTags, 2)
      const again = (await as('POST', BULK, [item('P1', c.id), item('P2', c.id, { tagMappings: { speed: 'Y', run: 'X' } })])).json()
      assert.equal(again.unchanged, 2)
    })

    it('a bulk of 5 000 lines is written in several multi-row statements: every row as sent, one audit row, one outbox row each', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const controllers = [await createController(as), await createController(as)]
      const id = (i: number) => `I${String(i).padStart(4, '0')}`
      const body = Array.from({ length: 5000 }, (_, i) =>
        item(id(i), controllers[i % 2]!.id, { tagMappings: { run: `N${i}:B3/0`, speed: `N${i}:F8/1` }, ...(i % 3 === 0 ? { area: `Area ${i}` } : {}) }),
      )
      const res = await as('POST', BULK, body)
      assert.equal(res.statusCode, 200)
      assert.deepEqual([res.json().created, res.json().updated, res.json().unchanged, res.json().refused], [5000, 0, 0, 0])
      const rows = await h.handle.db
        .selectFrom('instances')
        .select(['id', 'name', 'controller_id', 'area', 'tag_mappings', 'tag_count'])
        .where('org_id', '=', org.id)
        .orderBy('id')
        .execute()
      assert.equal(rows.length, 5000)
      rows.forEach((r, i) => {
        assert.deepEqual(
          r,
          {
            id: id(i),
            name: `Equipment ${id(i)}`,
            controller_id: controllers[i % 2]!.id,
            area: i % 3 === 0 ? `Area ${i}` : null,
            tag_mappings: JSON.stringify({ run: `N${i}:B3/0`, speed: `N${i}:F8/1` }),
            tag_count: 2,
          },
          id(i),
        )
      })
      const audits = await h.handle.db.selectFrom('audit_events').select('detail').where('org_id', '=', org.id).where('action', '=', 'instance.bulk').execute()
      assert.deepEqual(
        audits.map((a) => JSON.parse(a.detail!)),
        [{ created: 5000, updated: 0, unchanged: 0 }],
      )
      const outbox = await h.handle.db
        .selectFrom('link_outbox')
        .select((eb) => [eb.fn.countAll().as('n'), eb.fn.count('row_key').distinct().as('keys')])
        .where('org_id', '=', org.id)
        .where('table_name', '=', 'instances')
        .where('op', '=', 'upsert')
        .executeTakeFirstOrThrow()
      assert.deepEqual([Number(outbox.n), Number(outbox.keys)], [5000, 5000])
      assert.equal((await as('GET', `/api/sites/S1/controllers/${controllers[1]!.id}`)).json().pollBudget.mappedTags, 5000)
    })

    it('CSV: header columns name the fields, tag:NAME columns add mappings, empty cells are absent; lines are file lines', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const csv = [
        'id,name,typeId,assetNumber,controllerId,area,tag:running,tag:speed,config',
        `CV-1,"Conveyor, main",conveyor,A1,${c.id},Stockpile,Program:Main.CV1.Run,,"{""beltWidthMm"":1200}"`,
        `CV-2,Conveyor 2,conveyor,A2,${c.id},,R2,S2,`,
        `CV-3,,conveyor,A3,${c.id},,,,`,
        `CV-4,Bad config,conveyor,A4,${c.id},,,,{nope`,
      ].join('\r\n')
      const dry = await as('POST', `${BULK}?dryRun=true`, csv, CSV)
      assert.equal(dry.statusCode, 200, dry.body)
      assert.deepEqual(
        dry.json().lines.map((l: { line: number; outcome: string }) => [l.line, l.outcome]),
        [
          [2, 'created'],
          [3, 'created'],
          [4, 'refused'],
          [5, 'refused'],
        ],
      )
      assert.equal(dry.json().lines[2].errors[0].pointer, '/name')
      assert.equal(dry.json().lines[3].errors[0].pointer, '/config')
      assert.equal(await rowCount(h, 'instances', org.id), 0)
      const refused = await as('POST', BULK, csv, CSV)
      assert.equal(refused.statusCode, 422)
      assert.deepEqual(
        refused.json().errors.map((e: { pointer: string }) => e.pointer),
        ['/line/4/name', '/line/5/config'],
      )
      const good = csv.split('\r\n').slice(0, 3).join('\n')
      const res = await as('POST', BULK, good, CSV)
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().created, 2)
      const cv1 = (await as('GET', `${URL}/CV-1`)).json()
      assert.deepEqual(
        [cv1.name, cv1.area, cv1.tagMappings, cv1.config],
        ['Conveyor, main', 'Stockpile', { running: 'Program:Main.CV1.Run' }, { beltWidthMm: 1200 }],
      )
      assert.deepEqual((await as('GET', `${URL}/CV-2`)).json().tagMappings, { running: 'R2', speed: 'S2' })
    })

    it('a CSV JSON cell keeps the rules of a JSON body: nesting past 64 levels, a NUL or lone surrogate escape and a number past the largest double are refused naming the cell, never a 500 or a changed value', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const line = (column: 'config' | 'tagMappings', cell: string) =>
        `id,name,typeId,assetNumber,controllerId,${column}\nI1,n,pump,A1,${c.id},"${cell.replaceAll('"', '""')}"\n`
      const cases: Array<[string, string, string]> = [
        // Before: a stack overflow walking the config (500 on both databases).
        [line('config', `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), `/line/2/config/a${'/0'.repeat(63)}`, 'must not nest deeper than'],
        // Before: stored, and a NUL or lone surrogate that a JSON body may not carry came back in every read.
        [line('config', '{"a":"x\\u0000y"}'), '/line/2/config/a', 'NUL'],
        [line('tagMappings', '{"run":"\\ud800"}'), '/line/2/tagMappings/run', 'lone surrogate'],
        [line('tagMappings', '{"\\udc00":"Program:Main.Run"}'), '/line/2/tagMappings/\udc00', 'property name'],
        // Before: stored as null (JSON has no Infinity), a value other than the one sent.
        [line('config', '{"a":1e400}'), '/line/2/config/a', 'finite'],
      ]
      for (const [csv, pointer, rule] of cases) {
        const res = await as('POST', BULK, csv, CSV)
        assert.equal(res.statusCode, 422, `${pointer}: ${res.body.slice(0, 200)}`)
        const error = res.json().errors[0] as { pointer: string; message: string }
        assert.equal(error.pointer, pointer)
        assert.ok(error.message.includes(rule), error.message)
      }
      assert.equal(await rowCount(h, 'instances', org.id), 0)
    })

    it('a malformed request as a whole is a 400: not an array, unknown or missing CSV columns, too many lines', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      assert.equal((await as('POST', BULK, { id: 'x' })).statusCode, 400)
      assert.equal((await as('POST', BULK, 'id,name,typeId,assetNumber,controllerId,colour\nA,n,t,a,c,red', CSV)).statusCode, 400)
      assert.equal((await as('POST', BULK, 'id,name,typeId,assetNumber\nA,n,t,a', CSV)).statusCode, 400)
      assert.equal((await as('POST', BULK, 'id,name,typeId,assetNumber,controllerId\n"A,n,t,a,c', CSV)).statusCode, 400)
      assert.equal((await as('POST', BULK, '', CSV)).statusCode, 400)
      assert.equal((await as('POST', `${BULK}?dryRun=maybe`, [])).statusCode, 400)
      assert.equal((await as('POST', BULK, 'x', { 'content-type': 'text/plain' })).statusCode, 415)
      const tooMany = Array.from({ length: 5001 }, (_, i) => item(`I${i}`, c.id))
      assert.equal((await as('POST', `${BULK}?dryRun=true`, tooMany)).statusCode, 400)
      const empty = await as('POST', BULK, [])
      assert.equal(empty.statusCode, 200)
      assert.equal(empty.json().created, 0)
      assert.equal(await rowCount(h, 'instances', org.id), 0)
    })

    it(`a hostile batch is answered in proportion: a line lists at most ${MAX_LINE_PROBLEMS} problems, \`errors\` the first ${MAX_FIELD_PROBLEMS}; a CSV header of more than ${MAX_CSV_COLUMNS} columns is refused before any line is read`, async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      // One line of 60 000 unknown properties and 30 lines of 5: the report and errors stay small, each count told.
      const wide = Object.fromEntries([...Object.entries(item('W', c.id)), ...Array.from({ length: 60_000 }, (_, i) => [`u${i}`, 0])])
      const body = [wide, ...Array.from({ length: 30 }, (_, i) => ({ ...item(`N${i}`, c.id), a: 0, b: 0, c: 0, d: 0, e: 0 }))]
      const payload = JSON.stringify(body)
      const res = await as('POST', `${BULK}?dryRun=true`, body)
      assert.equal(res.statusCode, 200, res.body.slice(0, 500))
      assert.ok(res.body.length < payload.length / 10, `${res.body.length} bytes answered to ${payload.length}`)
      const lines = res.json().lines as Array<{ errors: Array<{ pointer: string; message: string }> }>
      assert.equal(lines[0]!.errors.length, MAX_LINE_PROBLEMS)
      assert.deepEqual(lines[0]!.errors.at(-1), { pointer: '', message: 'and 59991 more problems on this line' })
      assert.deepEqual(
        lines[1]!.errors.map((e) => e.pointer),
        ['/a', '/b', '/c', '/d', '/e'],
      )
      const refused = await as('POST', BULK, body)
      assert.equal(refused.statusCode, 422)
      const errors = refused.json().errors as Array<{ pointer: string }>
      assert.equal(errors.length, MAX_FIELD_PROBLEMS)
      assert.deepEqual(
        errors.slice(9, 11).map((e) => e.pointer),
        ['/0', '/1/a'],
      )
      // A header of one column too many (and one of 80 005, within the body limit): refused as a whole, naming the bound.
      const fields = 'id,name,typeId,assetNumber,controllerId'
      for (const tags of [MAX_CSV_COLUMNS - 4, 80_000]) {
        const header = `${fields},${Array.from({ length: tags }, (_, i) => `tag:t${i}`).join(',')}`
        const csv = await as('POST', BULK, `${header}\n${Array.from({ length: 5000 }, (_, i) => `L${i}`).join('\n')}`, CSV)
        assert.equal(csv.statusCode, 400, csv.body)
        assert.match(csv.json().detail, new RegExp(`the header has ${tags + 5} columns; at most ${MAX_CSV_COLUMNS}`))
      }
      const atBound = `${fields},${Array.from({ length: 1000 }, (_, i) => `tag:t${i}`).join(',')}`
      const fine = await as('POST', `${BULK}?dryRun=true`, `${atBound}\nA,n,t,a,${c.id}`, CSV)
      assert.equal(fine.statusCode, 200, fine.body.slice(0, 500))
      assert.equal(await rowCount(h, 'instances', org.id), 0)
    })

    it("bulk into another organisation's or an unknown site is the uniform 404", async (t) => {
      const { h, as } = await equipmentSetup(t, dialect)
      const other = await h.orgWithKey('owner')
      await h.inject({ org: other.org, apiKey: other.key }, { method: 'POST', url: '/api/sites', payload: { code: 'THEIRS', name: 'x' } })
      assert.equal((await as('POST', '/api/sites/THEIRS/instances/bulk?dryRun=true', [])).statusCode, 404)
      assert.equal((await as('POST', '/api/sites/NOPE/instances/bulk', [])).statusCode, 404)
    })
  })
}
