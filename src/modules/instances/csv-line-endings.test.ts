// Issue 24, left open: a CSV saved with CRLF line ends names the same lines as the same file with LF ends (`\r\n` is one
// line break; a lone `\r` inside a quoted field is data, outside one a line break of its own).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { createController, equipmentSetup, rowCount } from '../controllers/test-support.ts'
import { parseCsvRecords } from './csv.ts'

const BULK = '/api/sites/S1/instances/bulk'
const CSV = { 'content-type': 'text/csv' }

/** A file with a quoted field over two lines, a lone CR inside a quoted field, a blank line, and two bad lines. */
function badFile(controllerId: string, eol: '\n' | '\r\n'): string {
  return [
    'id,name,typeId,assetNumber,controllerId,config',
    `CV-1,"Conveyor${eol}main",conveyor,A1,${controllerId},`,
    `CV-2,"CR\rinside",conveyor,A2,${controllerId},`,
    '',
    `CV-3,,conveyor,A3,${controllerId},`,
    `CV-4,Bad config,conveyor,A4,${controllerId},{nope`,
  ].join(eol)
}

describe('CSV line endings', () => {
  it('CRLF and LF files give the same records on the same lines; a lone CR in a quoted field is data', () => {
    for (const eol of ['\n', '\r\n'] as const) {
      const records = parseCsvRecords(badFile('c', eol))
      assert.deepEqual(
        records.map((r) => r.line),
        [1, 2, 4, 6, 7],
        JSON.stringify(eol),
      )
      assert.equal(records[1]!.fields[1], `Conveyor${eol}main`)
      assert.equal(records[2]!.fields[1], 'CR\rinside')
    }
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: instances bulk CSV line endings`, () => {
    it('the same bad CSV with LF and with CRLF line ends answers the same 422 naming the same lines, and a NUL the same line', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const answers = []
      for (const eol of ['\n', '\r\n'] as const) {
        const res = await as('POST', BULK, badFile(c.id, eol), CSV)
        assert.equal(res.statusCode, 422, res.body)
        answers.push(res.json().errors.map((e: { pointer: string }) => e.pointer))
      }
      assert.deepEqual(answers, [
        ['/line/6/name', '/line/7/config'],
        ['/line/6/name', '/line/7/config'],
      ])
      const nul = []
      for (const eol of ['\n', '\r\n'] as const) {
        const res = await as('POST', BULK, badFile(c.id, eol).replace(',A3,', ',A\u00003,'), CSV)
        assert.equal(res.statusCode, 400, res.body)
        nul.push(res.json().errors[0].pointer)
      }
      assert.deepEqual(nul, ['/line/6', '/line/6'])
      assert.equal(await rowCount(h, 'instances', org.id), 0)
    })
  })
}
