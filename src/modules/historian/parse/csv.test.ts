import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { CsvRows, CsvTokenizer, readCsvBatches } from './csv.ts'
import type { CsvRow } from './csv.ts'
import { HistorianCsvInvalid } from './errors.ts'
import type { Separator } from './options.ts'
import { splitAt } from './test-support.ts'

function tokenize(chunks: readonly (Uint8Array | string)[], separator?: Separator): CsvRow[] {
  const tokenizer = new CsvTokenizer({ separator })
  const rows = new CsvRows()
  for (const chunk of chunks) tokenizer.push(chunk, rows)
  tokenizer.end(rows)
  return rows.toArray()
}

const fields = (text: string, separator?: Separator) => tokenize([text], separator).map((r) => r.fields)

describe('CsvTokenizer', () => {
  it('reads RFC 4180 quoting: separators, doubled quotes and newlines inside quotes', () => {
    assert.deepEqual(fields('a,"b,c","say ""hi""","two\nlines"\n'), [['a', 'b,c', 'say "hi"', 'two\nlines']])
  })

  it('numbers rows by the line they start on, counting newlines inside quotes and blank lines', () => {
    const rows = tokenize(['h1,h2\n"x\ny",1\n\nz,2\n'])
    assert.deepEqual(rows, [
      { line: 1, fields: ['h1', 'h2'] },
      { line: 2, fields: ['x\ny', '1'] },
      { line: 5, fields: ['z', '2'] },
    ])
  })

  it('reads a chunk larger than it decodes at once alike, multi-byte characters and quoted newlines across the cuts', () => {
    let text = 'tag;value;note\n'
    for (let i = 0; text.length < 200_000; i++) text += `Ü-${i};${i},5;"ein ""€"" und\nzwei; ${'é'.repeat(i % 7)}"\n`
    const bytes = Buffer.from(text, 'utf8')
    assert.ok(bytes.length > 3 * 32 * 1024)
    const whole = tokenize([bytes])
    assert.deepEqual(whole, tokenize([text]))
    assert.equal(whole.length, text.split('\n').length / 2)
  })

  it('handles CRLF, a UTF-8 BOM, a missing final newline and trailing empty fields', () => {
    const bytes = Buffer.from('\uFEFFa;b;;\r\n"q";2;;\r\nlast;3', 'utf8')
    assert.deepEqual(
      tokenize([bytes]).map((r) => r.fields),
      [
        ['a', 'b', '', ''],
        ['q', '2', '', ''],
        ['last', '3'],
      ],
    )
  })

  it('keeps a CRLF inside quotes but drops the CR of the row terminator after a quoted field', () => {
    assert.deepEqual(fields('"a\r\nb","c"\r\nd,e\r\n'), [
      ['a\r\nb', 'c'],
      ['d', 'e'],
    ])
  })

  it('detects the separator from the first line that is not a * comment or [Section]', () => {
    const tokenizer = new CsvTokenizer()
    const rows = new CsvRows()
    tokenizer.push('* comment, with, commas\n[Data]\nTagname;TimeStamp;Value\n', rows)
    assert.equal(tokenizer.separator, ';')
    assert.deepEqual(rows.at(2).fields, ['Tagname', 'TimeStamp', 'Value'])
  })

  it('reuses its row objects once the list is cleared: a file costs no object a row', () => {
    const tokenizer = new CsvTokenizer()
    const rows = new CsvRows()
    tokenizer.push('a,b,c\n1,2,3\n', rows)
    const [first, second] = [rows.at(0), rows.at(1)]
    rows.clear()
    tokenizer.push('4,5\n"6,7",8,9,10\n', rows)
    assert.equal(rows.length, 2)
    assert.equal(rows.at(0), first)
    assert.equal(rows.at(1), second)
    assert.deepEqual(rows.toArray(), [
      { line: 3, fields: ['4', '5'] },
      { line: 4, fields: ['6,7', '8', '9', '10'] },
    ])
  })

  it('reads tab-separated files and keeps quotes inside unquoted fields literally', () => {
    assert.deepEqual(fields('a\tb"c\n1\t2\n'), [
      ['a', 'b"c'],
      ['1', '2'],
    ])
  })

  it('refuses a quote that never closes, naming the line it opened on', () => {
    assert.throws(
      () => tokenize(['a,b\n1,"open\n2,3\n']),
      (error: unknown) => error instanceof HistorianCsvInvalid && error.line === 2,
    )
  })

  it('refuses UTF-16 input', () => {
    assert.throws(() => tokenize([Buffer.from([0xff, 0xfe, 0x61, 0x00])]), HistorianCsvInvalid)
  })

  it('refuses a row longer than maxRowChars instead of buffering without bound', () => {
    const tokenizer = new CsvTokenizer({ maxRowChars: 100 })
    assert.throws(() => tokenizer.push(`a,"${'x'.repeat(200)}`, new CsvRows()), /over 100 characters/)
  })

  it('gives the same rows whatever the chunk boundaries, even inside UTF-8 sequences and CRLF', () => {
    const text = 'Zeit;"Kessel; ""Vorlauf"""\r\n1.2.2024 10:00;61,5\r\n\r\n"multi\r\nline";wärme ü\r\n;;\r\nend;"x"'
    const bytes = Buffer.from(text, 'utf8')
    const expected = tokenize([bytes])
    for (let cut = 1; cut < bytes.length; cut++) {
      assert.deepEqual(tokenize(splitAt(bytes, [cut])), expected, `cut at ${cut}`)
    }
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        assert.deepEqual(tokenize(splitAt(bytes, cuts)), expected)
      }),
      { numRuns: 300 },
    )
  })

  it('round-trips arbitrary fields written with RFC 4180 quoting, split anywhere', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'Z', '1', ',', '"', '\n', '\r\n', ' ', 'é', ';') })
    const record = fc.array(field, { minLength: 2, maxLength: 5 }).filter((r) => r.some((f) => f !== ''))
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }), (records, cuts) => {
        const quote = (f: string) => `"${f.replaceAll('"', '""')}"`
        const bytes = Buffer.from(records.map((r) => r.map(quote).join(',')).join('\r\n'), 'utf8')
        const rows = tokenize(
          splitAt(
            bytes,
            cuts.map((c) => c % bytes.length),
          ),
          ',',
        )
        assert.deepEqual(
          rows.map((r) => r.fields),
          records,
        )
      }),
      { numRuns: 300 },
    )
  })
})

describe('readCsvBatches', () => {
  it('yields one array of rows per input chunk', async () => {
    const batches: CsvRow[][] = []
    for await (const batch of readCsvBatches(['a,b\n1,2\n', '3,4\n5,', '6'])) batches.push(batch)
    assert.deepEqual(
      batches.map((b) => b.map((r) => r.fields.join('|'))),
      [['a|b', '1|2'], ['3|4'], ['5|6']],
    )
  })
})
