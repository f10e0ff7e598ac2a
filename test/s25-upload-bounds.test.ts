// Session 25, the inputs that are not JSON bodies: s25-boundary-values.test.ts sweeps every JSON body's fields at
// their bounds; this suite does the same for the uploads — the historian's CSV import (every layout), a tenant package
// and the electrical network's streamed document — with extreme cells and values. After each accepted upload every
// read of what it stored is asked: none may answer a 5xx or outside its OpenAPI schema. It found:
// - an aggregate bucket of 366d holding a sample of the year 0000 began before it: `start` -000001-12-04T…, not an
//   RFC 3339 date-time (both databases); it now states 0000-01-01T00:00:00.000Z;
// - imported values of 5e-324 and 1e-300 (or a product with `scale` that small) were stored, and PostgreSQL's
//   aggregate reads of the tag failed on float underflow (500); a value other than 0 is now at least 1e-100 in magnitude;
// - a package's historian batch whose `tags` JSON held a firstTs of 1.8e308 was imported, and every read of the
//   batch answered 500; the stored JSON's shape is now a rule of the row (row-rules.ts);
// - a stored pickup of 5e-324 A made a trip time's `multiple` Infinity (null where a number is declared) and reported
//   a fault far above pickup as not tripping; the ratio saturates and the time comes from logarithms.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readFileSync } from 'node:fs'
import { SAMPLES_DIR } from '../src/modules/historian/parse/test-support.ts'
import { multipart, type Part } from '../src/modules/historian/test-setup.ts'
import { describeTable } from '../src/modules/tenant-transfer/introspect.ts'
import { EXPORTED_TABLES } from '../src/modules/tenant-transfer/tables.ts'
import { FIRST_ISO_MS, LAST_ISO_MS } from '../src/http/input-guard.ts'
import { harness, testDialects } from './harness.ts'
import { urlFor } from './hardening/input-cases.ts'
import { answerJudge, callerFor, label, NO_RATE_LIMIT, openApiDocument, operations, seedTenant, type Tenant } from './hardening/support.ts'
import { apply, repack, stage, unpack } from './support/tenant-package.ts'

const FIRST = '0000-01-01T00:00:00.000Z'
const LAST = '9999-12-31T23:59:59.999Z'

/** One import of the sweep: a layout, its options, a trend file and the historian tags it names. */
interface Upload {
  name: string
  format: string
  options?: Record<string, string>
  trend: string
  /** Each historian tag with its mapping's scale (empty: none). */
  tags: Array<[tag: string, scale: string]>
}

const LONG_TAG = 'L'.repeat(200)
const LONG_TEXT = `"${'t'.repeat(100_000)}"`

/** Rows at the extremes each layout can express (times, values, qualities), in the layout's own forms. */
function uploads(): Upload[] {
  const values = ['1e100', '-1e100', '1.0000000000000002e100', '-1e101', '5e-324', '-0', '0', '1e-300', '1.7976931348623157e308', 'Infinity', '-Infinity']
  const longRows = (tag: string, quality: string) =>
    [
      `0000-01-01 00:00:00,${tag},1e100,${quality}`,
      `0000-01-01T00:00:00Z,${tag},-1e100,${quality}`,
      `9999-12-31 23:59:59.9999999,${tag},-1e100,${quality}`,
      `9999-12-31T23:59:59.999Z,${tag},1,${quality}`,
      `9999999999999,${tag},2,${quality}`,
      `0000000000000,${tag},3,${quality}`,
      `31/12/9999 23:59:59,${tag},4,${quality}`,
      `01/01/0000 00:00:00,${tag},5,${quality}`,
      `2024-10-27 02:30:00,${tag},6,${quality}`,
      `2024-03-31 02:30:00,${tag},7,${quality}`,
      `2024-03-31 03:00:00.0000001,${tag},8,${quality}`,
      ...values.map((v, i) => `2024-01-01 00:00:${String(i).padStart(2, '0')}.999999999,${tag},${v},${quality}`),
    ].join('\n')
  const qualities = ['100', '0', '100.0000001', '101', '-1', '1e300', '65535', '65536', '99.99999999999999']
  return [
    {
      name: 'long, Paris, every extreme',
      format: 'long',
      options: { timezone: 'Europe/Paris' },
      trend: `Timestamp,TagName,Value,Quality\n${longRows('T1', '100')}\n${longRows(LONG_TAG, '50')}\n${qualities.map((q, i) => `2024-02-01 00:00:0${i},T2,${i},${q}`).join('\n')}\n2024-02-02 00:00:00,T3,${LONG_TEXT},100\n2024-02-02 00:00:01,T4,1e100,100\n2024-02-02 00:00:02,T5,5e-324,100\n2024-02-02 00:00:03,T6,1,100\n`,
      tags: [
        ['T1', ''],
        [LONG_TAG, '1'],
        ['T2', '1e300'],
        ['T3', ''],
        ['T4', '1e-300'],
        ['T5', '1e300'],
        ['T6', '1e100'],
      ],
    },
    {
      name: 'long, New York, sentinels at the extremes',
      format: 'long',
      options: { timezone: 'America/New_York', sentinels: '1e100,-1e100,-0,5e-324,1.7976931348623157e308', dateOrder: 'mdy' },
      trend: `Timestamp,TagName,Value,Quality\n${longRows('T1', '100').replaceAll('31/12/9999', '12/31/9999')}\n`,
      tags: [['T1', '']],
    },
    {
      name: 'wide, Pacific/Kiritimati (+14)',
      format: 'wide',
      options: { timezone: 'Pacific/Kiritimati' },
      trend: `Zeit;A;B;${LONG_TAG}\n01.01.0000 00:00:00;1e100;-1e100;1\n31.12.9999 23:59:59.999;5e-324;-0;2\n1.1.0000 00:00:00.5;1,5;1e101;3\n`,
      tags: [
        ['A', '1e-300'],
        ['B', '1e300'],
        [LONG_TAG, ''],
      ],
    },
    {
      name: 'ignition-tall, Pago Pago (-11)',
      format: 'ignition-tall',
      options: { timezone: 'Pacific/Pago_Pago' },
      trend: `Path,Value,Quality,Timestamp\n[default]X,1e100,Good,12/31/9999 11:59:59 PM\n[default]X,-1e100,192,1/1/0000 12:00:00 AM\n[default]X,1,65535,2024-01-01 00:00:00\n[default]X,2,65536,2024-01-01 00:00:01\n[default]X,${LONG_TEXT},0,2024-01-01 00:00:02\n`,
      tags: [['[default]X', '']],
    },
    {
      name: 'aveva-history',
      format: 'aveva-history',
      trend: `DateTime,TagName,Value,vValue,Quality,QualityDetail,wwRetrievalMode\n0000-01-01 00:00:00.0000000,A,1e100,1e100,0,192,Delta\n9999-12-31 23:59:59.9999999,A,-1e100,-1e100,0,65535,Delta\n2024-01-01 00:00:00.0000000,A,1,1,16,65536,Delta\n2024-01-01 00:00:01.0000000,A,NULL,${LONG_TEXT},0,192,Delta\n`,
      tags: [['A', '']],
    },
    {
      name: 'proficy, Chatham (+13:45)',
      format: 'proficy',
      options: { timezone: 'Pacific/Chatham' },
      trend: `[Data]\nTagname,TimeStamp,Value,DataQuality\nP1,12/31/9999 23:59:59,1e100,Good\nP1,1/1/0000 00:00:00,-1e100,100\nP1,1/1/00 00:00:00,5e-324,0\nP1,12/31/99 23:59,1e-300,99\n`,
      tags: [['P1', '1e300']],
    },
    {
      name: 'citect-pa: Milliseconds at its largest',
      format: 'citect-pa',
      trend: `Time,Milliseconds,Pen1,Pen2\n31/12/9999 23:59:59,999,1e100,On\n31/12/9999 23:59:59,9999999999999999,1,On\n01/01/0000 00:00:00,0,-1e100,Off\n01/01/2024 00:00:00,-1,1,Off\n`,
      tags: [
        ['Pen1', ''],
        ['Pen2', ''],
      ],
    },
    // The third-party exports (shared/data/historian-samples) whole, with extreme rows in their own forms appended.
    {
      name: 'hurence_chemistry_long.csv + extremes',
      format: 'auto',
      trend: `${sample('hurence_chemistry_long.csv').trimEnd()}\n31/12/9999 23:59:59;067_PI01;1e100;100.0\n01/01/0000 00:00:00;067_PI01;-1e100;0.0\n01/01/2020 00:00:00;067_PI01;5e-324;100.0\n01/01/2020 00:00:01;067_PI02;1,5e99;100.1\n`,
      tags: [
        ['067_PI01', ''],
        ['067_PI02', '1e-300'],
      ],
    },
    {
      name: 'logisland_heating_controller_wide.csv + extremes, sentinel 888.8',
      format: 'auto',
      options: { sentinels: '888.8,1e100' },
      trend: `${sample('logisland_heating_controller_wide.csv').trimEnd()}\n31.12.9999 23:59:59.999;1e100;-1e100\n01.01.0000 00:00:00.000;5e-324;-0\n`,
      tags: [
        ['temperatur_sensor_1', ''],
        ['temperatur_sensor_2', '1e300'],
      ],
    },
    {
      name: 'osisoft_pidata_piconfig.csv + extremes',
      format: 'piconfig',
      trend: `${sample('osisoft_pidata_piconfig.csv').trimEnd()}\nX,1e100,GOOD,31-Dec-9999 23:59:59.99999\nX,-1e100,GOOD,01-Jan-0000 00:00:00\n`,
      tags: [
        ['Building_Data_101215.AnalogValue1.PresentValue', ''],
        ['X', ''],
      ],
    },
    {
      name: 'piconfig',
      format: 'piconfig',
      trend: `@table piarc\n@mode edit,t\n@istr tag,value,status,time\nS1,1e100,GOOD,31-Dec-9999 23:59:59.99999\nS1,-1e100,GOOD,01-Jan-0000 00:00:00\nS1,${LONG_TEXT},GOOD,01-Jan-00 00:00:00\nS1,5e-324,GOOD,31-Dec-99 23:59:59\n`,
      tags: [['S1', '']],
    },
  ]
}

const sample = (name: string) => readFileSync(SAMPLES_DIR + name, 'utf8')

const csvCell = (s: string) => (/[",;\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)

for (const dialect of testDialects()) {
  describe(`${dialect}: uploads with values at their bounds are stored or refused, and every read answers what they stored as documented`, () => {
    it('historian CSV imports of every layout with extreme times, values, qualities, scales, sentinels and texts: 0 × 5xx, 0 answers outside their schema', async (t) => {
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: 'site' })
      const tenant = await seedTenant(h, 'UB')
      const ops = operations(await openApiDocument(h))
      const problems: string[] = []
      const op = (method: string, path: string) => ops.find((o) => o.method === method && o.path === path)!
      const judge = answerJudge(problems)
      let cases = 0
      let accepted = 0
      let reads = 0
      for (const u of uploads()) {
        const mapping = `historian_tag,instance_id,tag_key,unit,scale\n${u.tags.map(([tag, scale], i) => `${csvCell(tag)},${tenant.ids.instance},${i === 1 ? 'k'.repeat(200) : `t${i}`},u,${scale}`).join('\n')}\n`
        const parts: Part[] = [
          { name: 'site_id', value: tenant.ids.site },
          { name: 'format', value: u.format },
          ...Object.entries(u.options ?? {}).map(([name, value]) => ({ name, value })),
          { name: 'mapping_csv', filename: 'mapping.csv', content: mapping },
          { name: 'trend_csv', filename: 'trend.csv', content: u.trend },
        ]
        const body = multipart(parts)
        const imported = judge(
          op('POST', '/api/historian/import-batches'),
          await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload: body.payload, headers: body.headers }),
          `import ${u.name}`,
        )
        cases++
        if (imported.statusCode !== 201) {
          problems.push(`import ${u.name}: not accepted, ${imported.statusCode} ${imported.body.slice(0, 300)}`)
          continue
        }
        accepted++
        const batchId = (imported.json() as { id: string }).id
        if (u.name.startsWith('long, Paris')) {
          // Values nearer 0 than 1e-100 (5e-324, 1e-300 as read, 5e-324 × 1e300 rounding to 5e-24 stays) are rejected
          // naming the rule; the years 0000 and 9999 are stored.
          const report = await h.inject(tenant.owner, { url: `/api/historian/import-batches/${batchId}/rejections` })
          const reasons = (report.json() as { rejections: Array<{ reason: string }> }).rejections.map((r) => r.reason)
          assert.ok(reasons.includes('value 5e-324 is not 0 or a number at least 1e-100 in magnitude'), reasons.join('\n'))
          assert.ok(reasons.includes('value 1e-300 is not 0 or a number at least 1e-100 in magnitude'), reasons.join('\n'))
          const timeRange = (imported.json() as { timeRange: { from: string; to: string } }).timeRange
          assert.deepEqual(timeRange, { from: FIRST, to: LAST })
        }
        const read = async (method: string, path: string, url: string, payload?: unknown) => {
          reads++
          const where = `${method} ${url.slice(0, 160)} ${payload ? JSON.stringify(payload).slice(0, 200) : ''} after ${u.name}`
          // A streamed answer (CSV) that fails after its head is a response cut short, not a status.
          const res = await h
            .inject(tenant.owner, { method: method as 'GET', url, ...(payload ? { payload: payload as object } : {}) })
            .catch((err: Error) => void problems.push(`${where}: ${err.message}`))
          if (!res) return
          return judge(op(method, path), res, where)
        }
        await read('GET', '/api/historian/import-batches/{batchId}', `/api/historian/import-batches/${batchId}`)
        await read('GET', '/api/historian/import-batches/{batchId}/rejections', `/api/historian/import-batches/${batchId}/rejections`)
        await read('GET', '/api/historian/import-batches/{batchId}/rejections', `/api/historian/import-batches/${batchId}/rejections?as=csv`)
        await read('GET', '/api/historian/import-batches/{batchId}/collisions', `/api/historian/import-batches/${batchId}/collisions`)
        await read('GET', '/api/historian/import-batches', `/api/historian/import-batches?siteId=${tenant.ids.site}`)
        await read('GET', '/api/sites/{siteId}/historian/tags', `/api/sites/${tenant.ids.site}/historian/tags`)
        const site = tenant.ids.site
        const range = (from: string, to: string) => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`
        const windows = [range(FIRST, LAST), range('9999-12-31T00:00:00Z', LAST)]
        const modes = [
          '',
          'format=csv',
          'NOWINDOW',
          'NOWINDOW&bucket=366d',
          'bucket=1ms',
          'bucket=366d',
          'bucket=366d&format=csv',
          'bucket=1ms&includeBad=true',
          'mode=interpolated&interval=1d',
          'mode=interpolated&interval=366d&format=csv',
          'mode=interpolated&interval=1ms',
          'mode=plot&width=10000',
          'mode=plot&width=1&format=csv',
          'mode=plot&width=7&interpolation=step',
        ]
        for (const [i] of u.tags.entries()) {
          const tag = i === 1 ? 'k'.repeat(200) : `t${i}`
          const base = `/api/sites/${site}/historian/series?instanceId=${tenant.ids.instance}&tag=${tag}`
          for (const w of windows)
            for (const m of modes)
              if (m.startsWith('NOWINDOW')) {
                if (w === windows[0]) await read('GET', '/api/sites/{siteId}/historian/series', `${base}${m.slice(8)}`)
              } else await read('GET', '/api/sites/{siteId}/historian/series', `${base}&${w}${m ? `&${m}` : ''}`)
          for (const at of [FIRST, LAST, '0000-01-01T00:00:00.001Z', '2024-01-01T00:00:05Z', '9999-12-31T23:59:59.998Z'])
            await read('GET', '/api/sites/{siteId}/historian/series', `${base}&mode=at&at=${encodeURIComponent(at)}`)
          for (const mode of [{ mode: 'raw' }, { mode: 'aggregate', bucket: '366d' }, { mode: 'interpolated', interval: '366d' }, { mode: 'plot', width: 100 }])
            for (const format of ['json', 'csv'])
              await read('POST', '/api/sites/{siteId}/historian/series/query', `/api/sites/${site}/historian/series/query`, {
                series: [{ instanceId: tenant.ids.instance, tag }],
                from: FIRST,
                to: LAST,
                ...mode,
                ...(format === 'csv' ? { format } : {}),
              })
        }
      }
      // A scale of 0 would store every value as 0: the mapping is refused naming its line, and nothing is stored.
      const zero = multipart([
        { name: 'site_id', value: tenant.ids.site },
        { name: 'format', value: 'long' },
        { name: 'mapping_csv', filename: 'mapping.csv', content: `historian_tag,instance_id,tag_key,unit,scale\nZ,${tenant.ids.instance},z,u,0\n` },
        { name: 'trend_csv', filename: 'trend.csv', content: 'Timestamp,TagName,Value,Quality\n2024-01-01 00:00:00,Z,1,100\n' },
      ])
      const refused = judge(
        op('POST', '/api/historian/import-batches'),
        await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload: zero.payload, headers: zero.headers }),
        'import with scale 0',
      )
      assert.equal(refused.statusCode, 422, refused.body)
      assert.match(refused.body, /line 2/)
      for (const l of h
        .logs()
        .filter((l) => Number(l.level) >= 50)
        .slice(0, 3))
        console.log(`# LOG ${JSON.stringify(l).slice(0, 1500)}`)
      console.log(`# upload bounds, historian (${dialect}): ${cases} imports, ${accepted} accepted, ${reads} reads; ${problems.length} problems`)
      for (const problem of problems.slice(0, 6)) console.log(`# upload bounds problem: ${problem.slice(0, 1200)}`)
      // Every import is built to be accepted (its extreme rows rejected one by one): a refused one reads nothing.
      assert.equal(accepted, cases, `${accepted} of ${cases} imports accepted`)
      assert.deepEqual(problems, [])
    })
  })
}

/** What the sweep puts in a column of a package's row, by the column's declared type (value-rules.ts's kinds). */
type Variant = 'first' | 'last' | 'json'

const TIME_COLUMN = /(?:^|_)(?:at|ts|until)$/
const INTEGER_BOUNDS: Record<string, [number, number]> = {
  smallint: [-32_768, 32_767],
  int2: [-32_768, 32_767],
  integer: [-2_147_483_648, 2_147_483_647],
  int: [-2_147_483_648, 2_147_483_647],
  int4: [-2_147_483_648, 2_147_483_647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int8: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
}

/** Every number inside a JSON value replaced by `n` (its keys and texts kept). */
const numbersTo = (value: unknown, n: number): unknown =>
  typeof value === 'number'
    ? n * Math.sign(value || 1)
    : Array.isArray(value)
      ? value.map((v) => numbersTo(v, n))
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbersTo(v, n)]))
        : value

/** The value a column takes in a variant, or undefined to keep the row's. */
function boundOf(type: string, column: string, value: unknown, isJson: boolean, variant: Variant): unknown {
  const t = type.toLowerCase()
  if (variant === 'json') {
    if (!isJson || typeof value !== 'string') return undefined
    const parsed = JSON.parse(value) as unknown
    // The numbers inside at the largest finite double; an object also grows a key holding a text of 1 MB.
    const grown = numbersTo(parsed, Number.MAX_VALUE)
    if (grown !== null && typeof grown === 'object' && !Array.isArray(grown)) return JSON.stringify({ ...grown, zz: 'j'.repeat(1_000_000) })
    return JSON.stringify(grown)
  }
  const bounds = INTEGER_BOUNDS[t]
  if (bounds && TIME_COLUMN.test(column)) return variant === 'first' ? FIRST_ISO_MS : LAST_ISO_MS
  if (bounds) return variant === 'first' ? bounds[0] : bounds[1]
  if (/^(double precision|real|float|numeric|decimal)/.test(t)) return variant === 'first' ? -1e308 : 1e308
  return undefined
}

for (const dialect of testDialects()) {
  describe(`${dialect}: tenant packages whose values lie at their columns' bounds are imported or refused, and every read answers them as documented`, () => {
    // The CI budget: a cloud's tenant (its site server's link records too) on PostgreSQL, a site server's on SQLite.
    for (const mode of [dialect === 'postgres' ? 'cloud' : 'site'] as const)
      it(`${mode} mode: each exported part's rows with every integer, time and real at its first and at its last bound and every JSON text at its largest (a refused column put back, until one is accepted): 0 × 5xx, 0 answers outside their schema`, async (t) => {
        const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: mode, SITEGRID_PIN_SCRYPT_LOG2N: '10' })
        const tenant = await seedTenant(h, 'PB')
        const cred = tenant.owner as { org: Tenant['org']; apiKey: string }
        const all = operations(await openApiDocument(h))
        const reads = all.filter((op) => op.method === 'GET')
        const problems: string[] = []
        const now = h.clock.now()
        const judge = answerJudge(problems)
        const exported = await h.inject(cred, { url: `/api/admin/orgs/${cred.org.slug}/tenant/export` })
        assert.equal(exported.statusCode, 200, exported.body)
        const { header, parts } = unpack(exported.rawPayload)
        // A moved key's row carries a placeholder verifier: imported with force it would end the owner key's sign-in.
        parts.set('api_keys', [])
        let imports = 0
        let accepted = 0
        const refusedColumns: string[] = []
        for (const part of header.tables) {
          const rows = parts.get(part) ?? []
          const table = EXPORTED_TABLES.find((x) => x.name === part)
          const shape = await describeTable(h.handle.db, dialect, part)
          if (rows.length === 0 || !table || !shape) continue
          for (const variant of ['first', 'last', 'json'] as const) {
            const row = { ...rows[0]! }
            const changed = new Set<string>()
            for (const column of shape.columns) {
              if (shape.primaryKey.includes(column) || column === 'org_id' || !(column in row)) continue
              const bound = boundOf(shape.types[column] ?? '', column, row[column], (table.json ?? []).includes(column), variant)
              if (bound === undefined) continue
              row[column] = bound
              changed.add(column)
            }
            while (changed.size > 0) {
              const crafted = new Map(parts)
              crafted.set(part, [row, ...rows.slice(1)])
              const where = `${part} ${variant}: ${[...changed].join(', ')}`
              const staged = await stage(h, cred, await repack(header, crafted))
              imports++
              if (staged.statusCode >= 500) problems.push(`stage ${where}: ${staged.statusCode} ${staged.body.slice(0, 300)}`)
              if (staged.statusCode !== 200) break
              const res = await apply(h, cred, '?force=true')
              if (res.statusCode >= 500) problems.push(`import ${where}: ${res.statusCode} ${res.body.slice(0, 300)}`)
              const column = (res.json() as { column?: string }).column
              if (res.statusCode === 422) {
                // The column named, else (a rule over several columns names one left as it was) the last one changed.
                const back = column !== undefined && changed.has(column) ? column : [...changed].at(-1)!
                refusedColumns.push(`${part}.${back} ${variant}`)
                row[back] = rows[0]![back]
                changed.delete(back)
                continue
              }
              if (res.statusCode !== 200) {
                refusedColumns.push(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`)
                break
              }
              accepted++
              for (const read of reads) {
                const caller = callerFor(h, read, tenant)
                judge(read, await h.inject(caller.credential, { url: urlFor(read, tenant.ids, now), headers: caller.headers }), `${label(read)} after ${where}`)
              }
              break
            }
          }
          // The part as exported again, so the next part's bounds are read alone.
          assert.equal((await stage(h, cred, await repack(header, parts))).statusCode, 200)
          assert.equal((await apply(h, cred, '?force=true')).statusCode, 200, `${part} restored`)
        }
        console.log(
          `# upload bounds, packages (${dialect}): ${imports} packages, ${accepted} imported, each followed by ${reads.length} reads; ${problems.length} problems`,
        )
        console.log(`# upload bounds, packages: refused ${refusedColumns.join('; ').slice(0, 3000)}`)
        for (const problem of problems.slice(0, 12)) console.log(`# upload bounds problem: ${problem.slice(0, 900)}`)
        assert.ok(accepted >= 10, `${accepted} packages imported: too few to look at the reads`)
        assert.deepEqual(problems, [])
      })
  })
}

/** A plant both studies can answer: grid, transformer, board, cabled load, motor, generator, breaker, capacitor. */
function studiedNetwork() {
  return {
    nodes: [
      { id: 'G', name: 'Grid', nodeType: 0, ratedVoltageV: 11000, study: { scPowerMaxMva: 500, scPowerMinMva: 400, rxRatio: 0.1 } },
      { id: 'TX', name: 'TX', nodeType: 2, study: { ratedPowerKva: 1000, hvRatedVoltageKv: 11, lvRatedVoltageKv: 0.42, ukPercent: 6, urPercent: 1 } },
      { id: 'MSB', name: 'Main board', nodeType: 3, ratedVoltageV: 400 },
      { id: 'CB1', name: 'Incomer', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 400, protectionTms: 0.3, ratedCurrentA: 630 },
      {
        id: 'L1',
        name: 'Feeder',
        nodeType: 10,
        cableLengthM: 50,
        impedanceOhms: 0.01,
        study: { activePowerKw: 100, powerFactor: 0.9, ampacityA: 250, rOhmPerKm: 0.32, xOhmPerKm: 0.07 },
      },
      {
        id: 'M1',
        name: 'Pump',
        nodeType: 8,
        ratedPowerKw: 55,
        study: { ratedPowerKw: 55, powerFactor: 0.85, efficiencyPercent: 94, lockedRotorRatio: 7, rxRatio: 0.4 },
      },
      { id: 'GEN', name: 'Diesel', nodeType: 1, study: { activePowerKw: 50, voltageSetpointPu: 1 } },
      { id: 'C1', name: 'PFC', nodeType: 11, ratedVoltageV: 400, ratedPowerKw: 50 },
    ],
    edges: [
      { sourceId: 'G', targetId: 'TX', edgeType: 3 },
      { sourceId: 'TX', targetId: 'MSB', edgeType: 3 },
      { sourceId: 'MSB', targetId: 'CB1', edgeType: 2 },
      { sourceId: 'CB1', targetId: 'L1', edgeType: 0 },
      { sourceId: 'MSB', targetId: 'M1', edgeType: 2 },
      { sourceId: 'GEN', targetId: 'MSB', edgeType: 2 },
      { sourceId: 'MSB', targetId: 'C1', edgeType: 2 },
    ],
  }
}

type NetworkDoc = ReturnType<typeof studiedNetwork>
const NODE_NUMBERS = ['ratedVoltageV', 'ratedCurrentA', 'ratedPowerKw', 'impedanceOhms', 'cableLengthM', 'protectionPickupA', 'protectionTms']

/** Every numeric field of the document: each node's ratings and study numbers, each edge's type, as paths. */
function numericPaths(doc: NetworkDoc): string[][] {
  const paths: string[][] = []
  doc.nodes.forEach((node, i) => {
    paths.push(['nodes', String(i), 'nodeType'])
    for (const field of NODE_NUMBERS) paths.push(['nodes', String(i), field])
    for (const field of Object.keys((node as { study?: object }).study ?? {})) paths.push(['nodes', String(i), 'study', field])
  })
  doc.edges.forEach((_, i) => paths.push(['edges', String(i), 'edgeType']))
  return paths
}

const getPath = (doc: unknown, path: string[]) => path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], doc)
function setPath(doc: unknown, path: string[], value: unknown) {
  const holder = getPath(doc, path.slice(0, -1)) as Record<string, unknown>
  if (value === undefined) delete holder[path.at(-1)!]
  else holder[path.at(-1)!] = value
}

for (const dialect of testDialects()) {
  describe(`${dialect}: an electrical network document with numbers at their bounds is stored or refused, and every electrical read answers it as documented`, () => {
    it('every numeric field of the nodes, their study and the edges at ±1.7976931348623157e308, 5e-324 and -0 (a refused field put back, until the document is stored), one field at a time too: 0 × 5xx, 0 answers outside their schema', async (t) => {
      const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: 'site', SITEGRID_PIN_SCRYPT_LOG2N: '10' })
      const tenant = await seedTenant(h, 'EB')
      const site = tenant.ids.site
      const all = operations(await openApiDocument(h))
      const reads = all.filter((op) => op.method === 'GET' && op.path.includes('/electrical/'))
      const put = all.find((op) => op.method === 'PUT' && op.path === '/api/sites/{siteId}/electrical/network')!
      const problems: string[] = []
      const now = h.clock.now()
      const judge = answerJudge(problems)
      const QUERIES: Record<string, Array<Record<string, string>>> = {
        '/api/sites/{siteId}/electrical/nodes/{nodeId}/trip-time': [{ faultCurrentA: '1000' }, { faultCurrentA: '1.7976931348623157e308' }],
        '/api/sites/{siteId}/electrical/nodes/{nodeId}/coordination': [{}, { faultCurrentA: '5e-324' }],
        '/api/sites/{siteId}/electrical/nodes/{nodeId}/protection-curves': [{}, { fromA: '5e-324', toA: '1.7976931348623157e308' }],
        '/api/sites/{siteId}/electrical/studies/short-circuit': [{}, { contributions: 'all', conductorEndTemperatureC: '250', lvTolerancePercent: '6' }],
        '/api/sites/{siteId}/electrical/studies/load-flow': [{}],
        '/api/sites/{siteId}/electrical/export/pandapower': [{}, { envelope: 'true' }],
      }
      let puts = 0
      let stored = 0
      let readCount = 0
      // Reads of the numbers (not the graph's shape: topology, supply paths and the edge list answer the same whatever they hold).
      const numberReads = reads.filter((op) => !/\/topology\/|\/supply-paths|\/edges$/.test(op.path))
      const readAll = async (where: string, which = reads) => {
        for (const read of which)
          for (const nodeId of read.path.includes('{nodeId}') ? ['CB1', 'L1', 'M1'] : [''])
            for (const query of QUERIES[read.path] ?? [{}]) {
              readCount++
              const url = urlFor(read, tenant.ids, now, nodeId ? { nodeId } : {}, query)
              judge(read, await h.inject(tenant.owner, { url }), `${label(read)} ${nodeId} ${new URLSearchParams(query)} after ${where}`)
            }
      }
      const store = (doc: unknown) => h.inject(tenant.owner, { method: 'PUT', url: `/api/sites/${site}/electrical/network`, payload: doc as object })
      const base = studiedNetwork()
      const paths = numericPaths(base)
      assert.equal((await store(base)).statusCode, 200)
      await readAll('the base network')
      for (const value of [Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324, -0]) {
        // Every numeric field at once; each field refused is put back, until the document is stored.
        const doc = structuredClone(base)
        const changed = new Set(paths.map((p) => p.join('/')))
        for (const p of paths) setPath(doc, p, value)
        for (;;) {
          const res = judge(put, await store(doc), `PUT every field = ${value}`)
          puts++
          if (res.statusCode === 200) break
          const named = ((res.json() as { errors?: Array<{ pointer: string }> }).errors ?? []).map((e) => e.pointer.slice(1))
          // A rule between fields (lv below hv) names one already put back: then the fields beside it go back too.
          // A field whose meaning another sets (a study parameter of the node's type) goes back with the element's.
          let pointers = [...changed].filter((p) => named.includes(p))
          if (pointers.length === 0)
            pointers = [...changed].filter((p) => named.some((n) => n.includes('/study/') && p.startsWith(`${n.slice(0, n.lastIndexOf('/'))}/`)))
          if (pointers.length === 0) pointers = [...changed].filter((p) => named.some((n) => p.startsWith(`${n.split('/').slice(0, 2).join('/')}/`)))
          assert.ok(res.statusCode < 500 && pointers.length > 0, `PUT every field = ${value}: ${res.statusCode} ${res.body.slice(0, 300)}`)
          for (const p of pointers) {
            setPath(doc, p.split('/'), getPath(base, p.split('/')))
            changed.delete(p)
          }
        }
        stored++
        console.log(`# upload bounds, network: ${value} stored in ${changed.size} of ${paths.length} numeric fields at once`)
        await readAll(`every field it keeps = ${value} (${changed.size} fields)`)
        // Each field it kept, alone.
        for (const p of changed) {
          const one = structuredClone(base)
          setPath(one, p.split('/'), value)
          const res = judge(put, await store(one), `PUT /${p} = ${value}`)
          puts++
          if (res.statusCode !== 200) continue
          stored++
          await readAll(`/${p} = ${value}`, numberReads)
        }
      }
      console.log(`# upload bounds, network (${dialect}): ${puts} documents, ${stored} stored, ${readCount} reads; ${problems.length} problems`)
      for (const problem of problems.slice(0, 12)) console.log(`# upload bounds problem: ${problem.slice(0, 900)}`)
      assert.ok(stored >= 100, `${stored} of ${puts} documents stored: too few to look at the reads`)
      assert.deepEqual(problems, [])
    })
  })
}
