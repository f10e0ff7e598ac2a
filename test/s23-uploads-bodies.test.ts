// Session 23, hostile bodies: every text body is UTF-8. A byte that is not UTF-8 used to become U+FFFD on the way in
// (Fastify's, stream-json's and the historian reader's decoding) and the changed text was stored; it is now refused
// naming its line and column, and a text sent in another declared charset (latin1, utf-16) is a 415 naming it. Each
// refusal leaves every row of the organisation as it was; U+FFFD itself, sent as its UTF-8 bytes, is still text.
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import { harness, testDialects } from './harness.ts'
import { NO_RATE_LIMIT, seedTenant, snapshotDiff, snapshotOrg } from './hardening/support.ts'
import { multipart } from '../src/modules/historian/test-setup.ts'

interface Problem {
  code: string
  detail: string
  errors?: Array<{ in: string; pointer: string; message: string }>
}

const bytes = (...pieces: Array<string | number[]>) => Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))))

for (const dialect of testDialects()) {
  test(`${dialect}: a text body that is not UTF-8, or declared in another charset, is refused naming where; nothing is written (session 23)`, async (t) => {
    const h = await harness(t, dialect, NO_RATE_LIMIT)
    const tenant = await seedTenant(h, 'U8')
    const { site, controller, instance, tag } = tenant.ids
    const call = (method: 'POST' | 'PUT', url: string, type: string, payload: Buffer | Readable) =>
      h.inject(tenant.owner, { method, url, payload, headers: { 'content-type': type } })
    const bulk = `/api/sites/${site}/instances/bulk`
    const network = `/api/sites/${site}/electrical/network`
    const instanceJson = (name: Buffer | string) =>
      bytes('[{"id":"U8-new","name":"', typeof name === 'string' ? name : [...name], `","typeId":"t","assetNumber":"a","controllerId":"${controller}"}]`)
    const csvHeader = 'id,name,typeId,assetNumber,controllerId\n'
    const nodeDocument = (name: number[]) =>
      bytes('{"nodes":[\n{"id":"U8-n1","name":"a"', ',"nodeType":1},\n{"id":"U8-n2","name":"', name, '","nodeType":1}\n],"edges":[]}')
    // The network's document in pieces of 7 bytes: a sequence split between two chunks is UTF-8 all the same.
    const inPieces = (body: Buffer) => Readable.from(Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => body.subarray(i * 7, i * 7 + 7)))
    const before = await snapshotOrg(h, tenant.org.id)

    const refusals: Array<[string, 'POST' | 'PUT', string, string, Buffer | Readable, string, RegExp]> = [
      [
        'bulk JSON, 0xFF in a name',
        'POST',
        bulk,
        'application/json',
        instanceJson(Buffer.from([0x41, 0xff])),
        '/line/1',
        /byte 0xFF at column 26 \(byte 26 of the body/,
      ],
      ['bulk JSON, a sequence cut short at its end', 'POST', bulk, 'application/json', bytes('[1,"', [0xe2, 0x82]), '/line/1', /byte 0xE2 at column 5 /],
      [
        'bulk CSV, a Latin-1 é on line 3',
        'POST',
        bulk,
        'text/csv',
        bytes(csvHeader, `U8-a,a,t,a,${controller}\nU8-b,caf`, [0xe9], `,t,a,${controller}\n`),
        '/line/3',
        /byte 0xE9 at column 9 /,
      ],
      [
        'network, an overlong NUL on line 3, sent in pieces',
        'PUT',
        network,
        'application/json',
        inPieces(nodeDocument([0xc0, 0x80])),
        '/line/3',
        /byte 0xC0 at column 23 \(byte 74 of the body/,
      ],
      ['network, whole, 0xFF on line 3', 'PUT', network, 'application/json', nodeDocument([0xff]), '/line/3', /byte 0xFF at column 23 /],
      [
        'live samples, a lone continuation byte',
        'POST',
        `/api/sites/${site}/historian/samples?batchKey=u8`,
        'text/plain',
        bytes(`${instance},${tag},2024-01-01T00:00:00Z,"`, [0x80], '"\n'),
        '/line/1',
        /byte 0x80 /,
      ],
    ]
    for (const [label, method, url, type, payload, pointer, message] of refusals) {
      const res = await call(method, url, type, payload)
      assert.equal(res.statusCode, 400, `${label}: ${res.body}`)
      const problem = res.json() as Problem
      assert.equal(problem.code, 'MalformedBody', label)
      assert.equal(problem.errors?.[0]?.in, 'body', label)
      assert.equal(problem.errors?.[0]?.pointer, pointer, `${label}: ${problem.errors?.[0]?.message}`)
      assert.match(problem.errors![0]!.message, /^must be UTF-8 text/, label)
      assert.match(problem.errors![0]!.message, message, label)
    }

    // The historian's files: 422 naming the file and the line.
    const form = (trend: Buffer, mapping: Buffer) =>
      multipart([
        { name: 'site_id', value: site },
        { name: 'format', value: 'long' },
        { name: 'mapping_csv', filename: 'mapping.csv', content: mapping },
        { name: 'trend_csv', filename: 'trend.csv', content: trend },
      ])
    const mapping = Buffer.from(`historian_tag,instance_id,tag_key\nT1,${instance},${tag}\n`)
    const trend = Buffer.from('Timestamp,TagName,Value,Quality\n2024-03-01 00:00:00,T1,1.5,100\n')
    const files: Array<[string, Buffer, Buffer, string, string]> = [
      ['trend file, 0xFF in a tag on line 3', bytes(trend.toString(), '2024-03-01 00:00:01,T', [0xff], ',1.5,100\n'), mapping, '/trend_csv', 'line 3: '],
      ['trend file, cut inside a sequence at its end', bytes(trend.toString(), '2024-03-01 00:00:01,T', [0xf0, 0x9f]), mapping, '/trend_csv', 'line 3: '],
      [
        'mapping file, a Latin-1 ü on line 2',
        trend,
        bytes('historian_tag,instance_id,tag_key\nT', [0xfc], `,${instance},${tag}\n`),
        '/mapping_csv',
        'line 2: ',
      ],
    ]
    for (const [label, trendFile, mappingFile, pointer, line] of files) {
      const body = form(trendFile, mappingFile)
      const res = await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload: body.payload, headers: body.headers })
      assert.equal(res.statusCode, 422, `${label}: ${res.body}`)
      const problem = res.json() as Problem
      assert.equal(problem.code, 'HistorianCsvInvalid', label)
      assert.equal(problem.errors?.[0]?.pointer, pointer, label)
      assert.ok(problem.errors![0]!.message.startsWith(`${line}The file is not UTF-8 text`), `${label}: ${problem.errors![0]!.message}`)
    }

    // A file name that is not UTF-8 (the form's headers are decoded with U+FFFD in its place): 400 naming the part.
    const named = multipart([
      { name: 'site_id', value: site },
      { name: 'format', value: 'long' },
      { name: 'mapping_csv', filename: 'mapping.csv', content: mapping },
      { name: 'trend_csv', filename: 'trend\ufffd.csv', content: trend },
    ])
    const replacement = named.payload.indexOf(Buffer.from('\ufffd'))
    const payload = Buffer.concat([named.payload.subarray(0, replacement), Buffer.from([0xff]), named.payload.subarray(replacement + 3)])
    const badName = await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload, headers: named.headers })
    assert.equal(badName.statusCode, 400, badName.body)
    const nameProblem = badName.json() as Problem
    assert.deepEqual([nameProblem.code, nameProblem.errors?.[0]?.in, nameProblem.errors?.[0]?.pointer], ['ValidationFailed', 'part', '/trend_csv'])
    assert.match(nameProblem.errors![0]!.message, /^\(its file name\) must be UTF-8 text/)

    // A declared charset other than UTF-8: 415 naming it, the body never read.
    const charsets: Array<[string, string, Buffer]> = [
      ['POST', 'application/json; charset=latin1', instanceJson('caf\u00e9')],
      ['POST', 'text/csv;charset=utf-16', Buffer.from(`${csvHeader}U8-c,a,t,a,${controller}\n`, 'utf16le')],
      ['PUT', 'application/json; charset="ISO-8859-1"', nodeDocument([0x41])],
      ['POST', 'application/json; charset=utf-8; charset=latin1', instanceJson('a')],
      ['POST', 'application/json; charset=', instanceJson('a')],
    ]
    for (const [method, type, payload] of charsets) {
      const res = await call(method as 'POST', method === 'PUT' ? network : bulk, type, payload)
      assert.equal(res.statusCode, 415, `${type}: ${res.body}`)
      const problem = res.json() as Problem & { acceptedCharsets: string[] }
      assert.equal(problem.code, 'UnsupportedMediaType')
      assert.match(problem.detail, /^The body is sent with charset=(latin1|utf-16|iso-8859-1|""): send (application\/json|text\/csv) as UTF-8/)
      assert.deepEqual(problem.acceptedCharsets, ['utf-8'])
    }
    assert.deepEqual(snapshotDiff(before, await snapshotOrg(h, tenant.org.id)), [], 'no row changed')

    // UTF-8 itself, declared or not, in one piece or split between chunks, U+FFFD sent as its bytes included, is read.
    const accepted: Array<['POST' | 'PUT', string, string, Buffer | Readable]> = [
      ['POST', bulk, 'application/json; charset=UTF-8', instanceJson('caf\u00e9 \ufffd \u{1f600}')],
      ['POST', bulk, 'text/csv; charset="utf-8"', Buffer.from(`${csvHeader}U8-d,\u00fc\u00df\u{1f600},t,a,${controller}\n`)],
      ['PUT', network, 'application/json', inPieces(nodeDocument([...Buffer.from('\u20ac\u{1f600}\ufffd')]))],
    ]
    for (const [method, url, type, payload] of accepted) {
      const res = await call(method, url, type, payload)
      assert.equal(res.statusCode, 200, `${type}: ${res.body}`)
    }
    const stored = await h.inject(tenant.owner, { method: 'GET', url: `/api/sites/${site}/instances/U8-new` })
    assert.equal((stored.json() as { name: string }).name, 'caf\u00e9 \ufffd \u{1f600}')
    const node = await h.inject(tenant.owner, { method: 'GET', url: `/api/sites/${site}/electrical/nodes/U8-n2` })
    assert.equal((node.json() as { name: string }).name, '\u20ac\u{1f600}\ufffd')
  })
}
