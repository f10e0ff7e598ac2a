// Issue 14, mass assignment (OWASP API3) and excessive data exposure: every write of the OpenAPI document, the
// multipart historian import (its parts) and the binary tenant package (its records).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import { gunzipSync, gzipSync } from 'node:zlib'
import { multipart, type Part } from '../../src/modules/historian/test-setup.ts'
import { harness, sleep, testDialects, type Harness } from '../harness.ts'
import { responseValidator } from '../support/response-validator.ts'
import {
  callerFor,
  changedRows,
  exampleOf,
  fillPath,
  jsonBodySchema,
  label,
  leaksIn,
  NO_RATE_LIMIT,
  openApiDocument,
  operations,
  policyOf,
  parameterKind,
  pathParams,
  queryFor,
  responseChecker,
  secretIssuedBy,
  seedTenant,
  snapshotDiff,
  snapshotOrg,
  snapshotRows,
  type OpenApiDocument,
  type Operation,
  type Schema,
  type Tenant,
} from './support.ts'

const UNKNOWN = 'hardeningUnknown'

/** The object schema of a body (the object branch of `anyOf [object, null]`). */
const objectOf = (s: Schema | undefined): Schema | undefined => (s?.type === 'object' ? s : s?.anyOf?.find((b) => b.type === 'object'))

/**
 * Every place in `body` where its schema allows no extra property: JSON pointers and the object found there.
 * Generated from the schema: objects, their object-valued properties, and the first item of arrays.
 */
function closedObjects(schema: Schema | undefined, value: unknown, pointer = ''): Array<{ pointer: string; target: Record<string, unknown> }> {
  const out: Array<{ pointer: string; target: Record<string, unknown> }> = []
  if (Array.isArray(value) && schema?.type === 'array' && value.length > 0) return closedObjects(schema.items, value[0], `${pointer}/0`)
  const object = objectOf(schema)
  if (!object || value === null || typeof value !== 'object' || Array.isArray(value)) return out
  const target = value as Record<string, unknown>
  if (object.additionalProperties === false) out.push({ pointer, target })
  for (const [k, sub] of Object.entries(object.properties ?? {})) if (k in target) out.push(...closedObjects(sub, target[k], `${pointer}/${k}`))
  return out
}

/** Response properties a client must not set: in the 2xx answer's schema, not in the request's. */
function readOnlyProperties(op: Operation, request: Schema): Array<[string, Schema]> {
  const ok = Object.entries(op.spec.responses).find(([status]) => status.startsWith('2'))
  const response = objectOf(ok?.[1].content?.['application/json']?.schema)
  const requestProps = objectOf(request)?.properties ?? {}
  return Object.entries(response?.properties ?? {}).filter(([k]) => !(k in requestProps))
}

async function setUp(t: Parameters<typeof harness>[0], dialect: 'sqlite' | 'postgres', mode: 'site' | 'cloud' = 'site') {
  const h = await harness(t, dialect, { ...NO_RATE_LIMIT, SITEGRID_MODE: mode })
  const tenant = await seedTenant(h, 'MA')
  const doc = await openApiDocument(h)
  await sleep(200) // the seeding key's lastUsedAt flush lands before the first snapshot
  return { h, tenant, ops: operations(doc) }
}

const urlOf = (op: Operation, tenant: Tenant, now: number) =>
  fillPath(op.path, Object.fromEntries(pathParams(op).map((p) => [p.name, tenant.ids[parameterKind(op.path, p.name)!]]))) + queryFor(op, now, {}, tenant.ids)

/** A schema, its `$ref` resolved against the document's components. */
function resolved(doc: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
  const ref = typeof schema?.$ref === 'string' ? schema.$ref : undefined
  return ref ? doc.components?.schemas?.[ref.replace('#/components/schemas/', '')] : schema
}

/** The organisation's rows without the tables named (a staged package, an audit row the import writes by design). */
function snapshotWithout(snapshot: string, tables: readonly string[]): string {
  const all = JSON.parse(snapshot) as Record<string, string[]>
  for (const table of tables) delete all[table]
  return JSON.stringify(all)
}

type PackageRecord = Record<string, unknown> & { type: string }

/** A package's records (gunzipped JSON lines). */
const unpack = (gz: Buffer): PackageRecord[] =>
  gunzipSync(gz)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as PackageRecord)

/** Records back to a package whose counts and checksums are all right again (tenant-transfer/format.ts), so that a tampered field is the only thing wrong. */
function repack(records: PackageRecord[]): Buffer {
  const whole = createHash('sha256')
  let text = ''
  let part: { hash: ReturnType<typeof createHash>; count: number } | undefined
  for (const record of records) {
    if (record.type === 'end') {
      text += `${JSON.stringify({ ...record, sha256: whole.digest('hex') })}\n`
      continue
    }
    let line = `${JSON.stringify(record)}\n`
    if (record.type === 'row') {
      part ??= { hash: createHash('sha256'), count: 0 }
      part.hash.update(line)
      part.count++
    } else if (record.type === 'partEnd') {
      line = `${JSON.stringify({ ...record, count: part?.count ?? 0, sha256: (part?.hash ?? createHash('sha256')).digest('hex') })}\n`
      part = undefined
    }
    whole.update(line)
    text += line
  }
  return gzipSync(text)
}

/** The historian import's multipart form (mapping and two samples) with `extra` parts before or after trend_csv. */
function historianForm(tenant: Tenant, extra: Part[], where: 'before' | 'after'): ReturnType<typeof multipart> {
  const fields: Part[] = [
    { name: 'site_id', value: tenant.ids.site },
    { name: 'format', value: 'long' },
    { name: 'mapping_csv', filename: 'mapping.csv', content: `historian_tag,instance_id,tag_key\nT9,${tenant.ids.instance},t9\n` },
  ]
  const trend: Part = { name: 'trend_csv', filename: 'trend.csv', content: 'timestamp,tag,value\n2024-03-01T00:00:00Z,T9,1\n2024-03-01T00:01:00Z,T9,2\n' }
  return multipart(where === 'before' ? [...fields, ...extra, trend] : [...fields, trend, ...extra])
}

/** A 400 whose `errors` name exactly `pointer`. */
const namesExactly = (res: Awaited<ReturnType<Harness['inject']>>, pointer: string) =>
  res.statusCode === 400 && JSON.stringify((res.json().errors as Array<{ pointer: string }> | undefined)?.map((e) => e.pointer)) === JSON.stringify([pointer])

for (const dialect of testDialects()) {
  for (const mode of ['site', 'cloud'] as const)
    describe(`${dialect}, ${mode} mode: mass assignment (OWASP API3), every JSON write and read of the OpenAPI document`, () => {
      it('a valid body plus an unknown property (at every closed object of the body) is a 400 naming exactly that property; plus each read-only property (in the answer, not the request) it is refused naming it or ignored; a refused request changes 0 rows; every answer matches its declared schema and leaks nothing', async (t) => {
        const { h, tenant, ops } = await setUp(t, dialect, mode)
        assert.ok(snapshotRows(await snapshotOrg(h, tenant.org.id)) >= 15, 'the snapshot sees the seeded rows')
        // In the cloud a platform administrator's operation (the configuration reload) is no tenant's: the site mode
        // runs it as the owner's, with the same body.
        const writes = ops.filter((op) => ['POST', 'PUT', 'PATCH'].includes(op.method) && jsonBodySchema(op) && policyOf(h, op) !== 'platformAdmin')
        const checkResponse = responseChecker()
        const problems: string[] = []
        let unknownTried = 0
        let unknownRefused = 0
        let readOnlyTried = 0
        let readOnlyRefused = 0
        let readOnlyIgnored = 0
        let rowsChanged = 0
        for (const op of writes) {
          const schema = jsonBodySchema(op)!
          const now = h.clock.now()
          const base = exampleOf(schema, now)
          const invalid = responseValidator(schema)(base)
          if (invalid) throw new Error(`${label(op)}: the example body does not validate: ${invalid}`)
          const caller = callerFor(h, op, tenant)
          const send = async (body: unknown) => {
            const before = await snapshotOrg(h, tenant.org.id)
            const res = await h.inject(caller.credential, {
              method: op.method as 'POST',
              url: urlOf(op, tenant, now),
              payload: JSON.stringify(body),
              headers: { ...caller.headers, 'content-type': 'application/json' },
            })
            const changed = res.statusCode >= 400 ? changedRows(before, await snapshotOrg(h, tenant.org.id)) : 0
            rowsChanged += changed
            if (changed > 0) problems.push(`${label(op)}: a refused request (${res.statusCode}) changed ${changed} rows`)
            const violation = checkResponse(op, res)
            if (violation) problems.push(violation)
            const leaks = leaksIn(res.body, secretIssuedBy(op))
            if (leaks.length) problems.push(`${label(op)}: the answer holds ${leaks.join(', ')}`)
            return res
          }
          const namesOnly = (res: Awaited<ReturnType<typeof send>>, pointer: string) =>
            res.statusCode === 400 &&
            JSON.stringify((res.json().errors as Array<{ pointer: string }> | undefined)?.map((e) => e.pointer)) === JSON.stringify([pointer])

          for (const { pointer } of closedObjects(schema, base)) {
            const body = structuredClone(base)
            const at = closedObjects(schema, body).find((c) => c.pointer === pointer)!
            at.target[UNKNOWN] = 1
            unknownTried++
            const res = await send(body)
            if (namesOnly(res, `${pointer}/${UNKNOWN}`)) unknownRefused++
            else problems.push(`${label(op)}: unknown property at ${pointer || '/'} answered ${res.statusCode} ${res.body.slice(0, 200)}`)
          }
          for (const [property, propertySchema] of readOnlyProperties(op, schema)) {
            if (objectOf(schema) === undefined) break
            const injected = exampleOf(propertySchema, now)
            const body = { ...(base as Record<string, unknown>), [property]: injected }
            readOnlyTried++
            const res = await send(body)
            if (namesOnly(res, `/${property}`)) readOnlyRefused++
            else if (res.statusCode < 300 && JSON.stringify(res.json()[property]) !== JSON.stringify(injected)) readOnlyIgnored++
            else problems.push(`${label(op)}: read-only ${property} answered ${res.statusCode} ${res.body.slice(0, 200)}`)
          }
        }
        console.log(
          `# hardening mass-assignment (${dialect}, ${mode}): ${writes.length} JSON writes; unknown properties ${unknownRefused}/${unknownTried} refused naming them; read-only properties ${readOnlyRefused} refused + ${readOnlyIgnored} ignored of ${readOnlyTried}; ${rowsChanged} rows changed by refused requests; ${problems.length} problems`,
        )
        // The cloud has no site-user writes, and the link's own (push, heartbeat, enrolment, registration, a chunk).
        assert.ok(writes.length >= (mode === 'site' ? 30 : 29), `${writes.length} writes`)
        assert.ok(readOnlyTried >= 30, `${readOnlyTried} read-only properties tried`)
        assert.deepEqual(problems, [])
        assert.equal(unknownRefused, unknownTried)
        assert.equal(readOnlyRefused + readOnlyIgnored, readOnlyTried)
        assert.equal(rowsChanged, 0)
      })

      if (mode === 'site')
        it('the multipart historian import: an unknown text part, an unknown file part and every read-only property of the batch (status, id, samplesStored, …) sent as a part, before or after trend_csv, are refused 400 naming exactly that part; nothing is stored', async (t) => {
          const { h, tenant, ops } = await setUp(t, dialect)
          const doc = await openApiDocument(h)
          const op = ops.find((o) => o.method === 'POST' && o.path === '/api/historian/import-batches')
          assert.ok(op, 'the historian import is in the OpenAPI document')
          const answer = resolved(doc, op.spec.responses['201']?.content?.['application/json']?.schema)
          const readOnly = Object.keys(objectOf(answer)?.properties ?? {})
          assert.ok(readOnly.includes('status') && readOnly.includes('id'), `the batch's properties: ${readOnly.join(', ')}`)
          const checkResponse = responseChecker()
          const cases: Array<{ what: string; part: Part; where: 'before' | 'after' }> = [
            { what: 'unknown text part', part: { name: UNKNOWN, value: '1' }, where: 'before' },
            { what: 'unknown text part', part: { name: UNKNOWN, value: '1' }, where: 'after' },
            { what: 'unknown file part', part: { name: UNKNOWN, filename: 'x.csv', content: 'a,b\n1,2\n' }, where: 'before' },
            { what: 'unknown file part', part: { name: UNKNOWN, filename: 'x.csv', content: 'a,b\n1,2\n' }, where: 'after' },
            ...readOnly.map((name) => ({
              what: 'read-only part',
              part: { name, value: name === 'status' ? 'complete' : name === 'samplesStored' ? '999' : 'bat_forged' },
              where: 'before' as const,
            })),
            { what: 'read-only part', part: { name: 'status', value: 'complete' }, where: 'after' },
            { what: 'read-only part', part: { name: 'id', value: 'bat_forged' }, where: 'after' },
          ]
          const problems: string[] = []
          const tally = { unknown: 0, readOnly: 0, refusedNamingIt: 0, rowsChanged: 0 }
          // The same form without the extra part is accepted (so each refusal is the extra part's doing); then removed.
          const plain = historianForm(tenant, [], 'before')
          const valid = await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload: plain.payload, headers: plain.headers })
          assert.equal(valid.statusCode, 201, valid.body)
          assert.equal((await h.inject(tenant.owner, { method: 'DELETE', url: `/api/historian/import-batches/${String(valid.json().id)}` })).statusCode, 204)
          await sleep(100) // the key's lastUsedAt flush lands before the first snapshot
          for (const c of cases) {
            if (c.what === 'read-only part') tally.readOnly++
            else tally.unknown++
            const form = historianForm(tenant, [c.part], c.where)
            const before = await snapshotOrg(h, tenant.org.id)
            const res = await h.inject(tenant.owner, { method: 'POST', url: '/api/historian/import-batches', payload: form.payload, headers: form.headers })
            const changed = snapshotDiff(before, await snapshotOrg(h, tenant.org.id))
            if (changed.length > 0) {
              tally.rowsChanged += changed.length
              problems.push(`${c.what} ${c.part.name} (${c.where} trend_csv) changed ${changed.join(', ')}`)
            }
            if (namesExactly(res, `/${c.part.name}`)) tally.refusedNamingIt++
            else problems.push(`${c.what} ${c.part.name} (${c.where} trend_csv) answered ${res.statusCode} ${res.body.slice(0, 200)}`)
            const violation = checkResponse(op, res)
            if (violation) problems.push(violation)
          }
          console.log(
            `# hardening mass-assignment multipart (${dialect}): ${tally.unknown} unknown parts + ${tally.readOnly} read-only parts (${readOnly.length} batch properties) tried; ${tally.refusedNamingIt}/${cases.length} refused 400 naming the part; ${tally.rowsChanged} tables changed; ${problems.length} problems`,
          )
          assert.deepEqual(problems, [])
          assert.equal(tally.refusedNamingIt, cases.length)
          assert.ok(tally.readOnly >= 15, `${tally.readOnly} read-only parts tried`)
          assert.equal(tally.rowsChanged, 0)
        })

      if (mode === 'site')
        it('the binary tenant package: a row carrying an unknown column, org_id or a server-only column (an API key verifier) in any part is refused 422 and changes 0 rows; unknown fields on the header, row, partEnd and end records and a renamed organisation in the header are ignored and change 0 rows', async (t) => {
          const { h, tenant } = await setUp(t, dialect)
          const other = await h.createOrg()
          const admin = `/api/admin/orgs/${tenant.org.slug}/tenant`
          const exported = await h.inject(tenant.owner, { method: 'GET', url: `${admin}/export` })
          assert.equal(exported.statusCode, 200)
          const records = unpack(exported.rawPayload)
          const partsWithRows = [...new Set(records.filter((r) => r.type === 'row').map((r) => String(r.part)))]
          assert.ok(partsWithRows.length >= 10, `parts with rows: ${partsWithRows.join(', ')}`)
          const firstRow = (part: string) => records.findIndex((r) => r.type === 'row' && r.part === part)
          const withRow = (part: string, extra: Record<string, unknown>) =>
            records.map((r, i) => (i === firstRow(part) ? { ...r, row: { ...(r.row as object), ...extra } } : r))
          const withRecord = (type: string, extra: Record<string, unknown>) => {
            const at = records.findIndex((r) => r.type === type)
            return records.map((r, i) => (i === at ? { ...r, ...extra } : r))
          }
          const refused: Array<{ what: string; records: PackageRecord[] }> = [
            ...partsWithRows.map((part) => ({ what: `${part}: unknown column`, records: withRow(part, { [UNKNOWN]: 1 }) })),
            ...partsWithRows.map((part) => ({ what: `${part}: org_id of another organisation`, records: withRow(part, { org_id: other.id }) })),
            { what: 'api_keys: verifier', records: withRow('api_keys', { verifier: 'f'.repeat(64) }) },
          ]
          const header = records[0]!
          const ignored: Array<{ what: string; records: PackageRecord[] }> = [
            { what: 'header: unknown field', records: withRecord('header', { [UNKNOWN]: 1 }) },
            {
              what: 'header: another organisation name and slug',
              records: [{ ...header, org: { ...(header.org as object), name: 'Forged', slug: 'forged' } }, ...records.slice(1)],
            },
            { what: 'row record: unknown field', records: withRecord('row', { [UNKNOWN]: 1 }) },
            { what: 'partEnd record: unknown field', records: withRecord('partEnd', { [UNKNOWN]: 1 }) },
            { what: 'end record: unknown field', records: withRecord('end', { [UNKNOWN]: 1 }) },
          ]
          const stageAndApply = async (pkg: Buffer) => {
            const staged = await h.inject(tenant.owner, {
              method: 'PUT',
              url: `${admin}/import/package`,
              payload: pkg,
              headers: { 'content-type': 'application/gzip' },
            })
            if (staged.statusCode !== 200) return { staged: staged.statusCode, applied: 0, res: staged }
            const res = await h.inject(tenant.owner, { method: 'POST', url: `${admin}/import` })
            return { staged: staged.statusCode, applied: res.statusCode, res }
          }
          // The staged package itself changes with every PUT (by design): compare everything else.
          const STAGING = ['tenant_import_packages', 'tenant_import_chunks']
          const problems: string[] = []
          const tally = { refused: 0, ignored: 0, tablesChanged: 0 }
          // The untouched package, repacked, is accepted: each refusal below is the tampered field's doing.
          const control = await stageAndApply(repack(records))
          assert.equal(control.applied, 200, control.res.body)
          await sleep(100) // the key's lastUsedAt flush lands before the first snapshot
          for (const c of refused) {
            const before = snapshotWithout(await snapshotOrg(h, tenant.org.id), STAGING)
            const { staged, applied, res } = await stageAndApply(repack(c.records))
            const changed = snapshotDiff(before, snapshotWithout(await snapshotOrg(h, tenant.org.id), STAGING))
            tally.tablesChanged += changed.length
            if (changed.length > 0) problems.push(`${c.what}: changed ${changed.join(', ')}`)
            const refusedRight = (staged === 422 || applied === 422) && (res.json() as { code?: string }).code === 'PackageInvalid'
            if (refusedRight) tally.refused++
            else problems.push(`${c.what}: stage ${staged}, apply ${applied}: ${res.body.slice(0, 200)}`)
          }
          for (const c of ignored) {
            // The import's own audit row is expected (and the fleet link's outbox row of it); nothing else may change.
            const AUDIT = [...STAGING, 'audit_events', 'link_outbox']
            const before = snapshotWithout(await snapshotOrg(h, tenant.org.id), AUDIT)
            const { applied, res } = await stageAndApply(repack(c.records))
            const changed = snapshotDiff(before, snapshotWithout(await snapshotOrg(h, tenant.org.id), AUDIT))
            tally.tablesChanged += changed.length
            if (changed.length > 0) problems.push(`${c.what}: changed ${changed.join(', ')}`)
            const parts = applied === 200 ? Object.values((res.json() as { parts: Record<string, { create: number; replace: number }> }).parts) : []
            if (applied === 200 && parts.every((p) => p.create === 0 && p.replace === 0)) tally.ignored++
            else problems.push(`${c.what}: apply ${applied}: ${res.body.slice(0, 200)}`)
          }
          console.log(
            `# hardening mass-assignment tenant package (${dialect}): ${partsWithRows.length} parts; ${tally.refused}/${refused.length} rows with an unknown, org_id or verifier column refused 422; ${tally.ignored}/${ignored.length} unknown record fields ignored (0 created, 0 replaced); ${tally.tablesChanged} tables changed; ${problems.length} problems`,
          )
          assert.deepEqual(problems, [])
          assert.equal(tally.refused, refused.length)
          assert.equal(tally.ignored, ignored.length)
          assert.equal(tally.tablesChanged, 0)
        })

      it("every documented read of a populated tenant (the fleet link's records included, read by the site server for the link's own routes) matches its declared schema and holds no verifier, hash, salt, secret, PIN, key plaintext, enrolment code or link credential; the key plaintext appears only in the mint answer", async (t) => {
        const { h, tenant, ops } = await setUp(t, dialect, mode)
        const checkResponse = responseChecker()
        const problems: string[] = []
        const reads = ops.filter((op) => op.method === 'GET')
        const statuses: Record<number, number> = {}
        const notFound: string[] = []
        for (const op of reads) {
          const caller = callerFor(h, op, tenant)
          const res = await h.inject(caller.credential, { method: 'GET', url: urlOf(op, tenant, h.clock.now()), headers: caller.headers })
          if (res.statusCode !== 200) notFound.push(`${label(op)}: ${res.statusCode}`)
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
          const violation = checkResponse(op, res)
          if (violation) problems.push(violation)
          const leaks = leaksIn(res.body)
          if (leaks.length) problems.push(`${label(op)}: the answer holds ${leaks.join(', ')}`)
        }
        const mint = await h.inject(tenant.owner, {
          method: 'POST',
          url: '/api/admin/api-keys',
          payload: { role: 'member', name: 'mint', expiresAt: new Date(h.clock.now() + 86_400_000).toISOString() },
        })
        assert.equal(mint.statusCode, 201)
        assert.match(mint.body, /csk_[0-9A-Za-z]{32}/, 'the mint answer carries the plaintext once')
        assert.deepEqual(leaksIn(mint.body, { isMintAnswer: true }), [])
        console.log(
          `# hardening responses (${dialect}, ${mode}): ${reads.length} documented reads, statuses ${JSON.stringify(statuses)}, ${problems.length} schema violations or leaks; not 200: ${notFound.join('; ')}`,
        )
        // The electrical analyses answer a documented 422 for the seeded network (no protection settings, no supply, no
        // study data); every other read finds the seeded resources.
        const analysis = /^GET \/api\/sites\/\{[^}]+\}\/electrical\/(nodes\/\{[^}]+\}\/(trip-time|coordination|protection-curves)|studies\/[a-z-]+): 422$/
        assert.deepEqual(
          notFound.filter((line) => !analysis.test(line)),
          [],
          'the reads found the seeded resources',
        )
        assert.deepEqual(problems, [])
      })
    })
}
