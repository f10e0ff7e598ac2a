// Shared set-up of the hardening suites (issue 14): the OpenAPI document as a list of operations, a tenant
// with one resource of every kind, a snapshot of every tenant table, and the response checks.
import fc from 'fast-check'
import { sql, type Kysely } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { CLI_ACTOR, type Org } from '../../src/identity.ts'
import { endSessionsOfAccount } from '../../src/auth/sessions/end-sessions.ts'
import { createMembersService } from '../../src/modules/orgs/members-service.ts'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { harness, type Credential, type Harness, type TestDialect } from '../harness.ts'
import { baseAiConfig, CLOUD_KEY } from '../../src/modules/ai/route-test-setup.ts'
import { startFakeOpenAi } from '../support/fake-openai.ts'
import { multipart } from '../../src/modules/historian/test-setup.ts'
import { responseValidator } from '../support/response-validator.ts'
import { ENROLMENT_CODE, LINK_CREDENTIAL, LINK_HEADERS, seedCloudLink, seedSiteLink, type CloudLink } from '../support/fleet-link.ts'

export type Schema = Record<string, unknown> & {
  type?: string
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  anyOf?: Schema[]
  items?: Schema
  /** A tuple's positions (JSON Schema 2020-12, as OpenAPI 3.1 writes one). */
  prefixItems?: Schema[]
}
export interface Parameter {
  name: string
  in: 'path' | 'query' | 'header'
  required?: boolean
  schema: Schema
}
interface MediaTypes {
  [contentType: string]: { schema?: Schema }
}
export interface OperationSpec {
  parameters?: Parameter[]
  requestBody?: { content: MediaTypes }
  responses: Record<string, { content?: MediaTypes }>
  security?: unknown[]
}
export interface Operation {
  method: string
  path: string
  spec: OperationSpec
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OperationSpec>>
  components?: { schemas?: Record<string, Schema> }
}

/** A settings override common to the suites: they send thousands of requests with one credential. */
export const NO_RATE_LIMIT = { SITEGRID_RATE_LIMIT_PER_MINUTE: '100000000', SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: '100000000' }

/**
 * A harness for the suites that call every operation: no rate limit, a fast PIN hash, and AI completion against
 * loopback OpenAI-compatible fakes (the AI route tests' configuration), so that the AI operations run too.
 */
export async function harnessForEveryOperation(t: TestContext, dialect: TestDialect, mode: 'site' | 'cloud'): Promise<Harness> {
  const box = await startFakeOpenAi()
  const cloud = await startFakeOpenAi({ apiKey: CLOUD_KEY })
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-every-operation-'))
  t.after(async () => {
    await box.close()
    await cloud.close()
    rmSync(dir, { recursive: true, force: true })
  })
  writeFileSync(join(dir, 'ai.json'), JSON.stringify(baseAiConfig(box, cloud)))
  return harness(t, dialect, {
    ...NO_RATE_LIMIT,
    SITEGRID_PIN_SCRYPT_LOG2N: '10',
    SITEGRID_AI_CONFIG_FILE: join(dir, 'ai.json'),
    CLOUD_AI_KEY: CLOUD_KEY,
    SITEGRID_MODE: mode,
  })
}

/** The served OpenAPI document with every `#/components/schemas/…` reference inlined. */
export async function openApiDocument(h: Harness): Promise<OpenApiDocument> {
  return inlinedDocument((await h.inject(undefined, { url: '/openapi.json' })).json() as OpenApiDocument)
}

/** An OpenAPI document with its `#/components/schemas/…` references inlined. */
export function inlinedDocument(raw: OpenApiDocument): OpenApiDocument {
  const components = raw.components?.schemas ?? {}
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline)
    if (value === null || typeof value !== 'object') return value
    const ref = (value as { $ref?: unknown }).$ref
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return inline(components[ref.slice('#/components/schemas/'.length)])
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v)]))
  }
  return { ...raw, paths: inline(raw.paths) as OpenApiDocument['paths'] }
}

export function operations(doc: OpenApiDocument): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, spec]) => ({ method: method.toUpperCase(), path, spec })))
}

export const pathParams = (op: Operation) => (op.spec.parameters ?? []).filter((p) => p.in === 'path')
export const queryParams = (op: Operation) => (op.spec.parameters ?? []).filter((p) => p.in === 'query')
export const jsonBodySchema = (op: Operation): Schema | undefined => op.spec.requestBody?.content['application/json']?.schema
export const label = (op: Operation) => `${op.method} ${op.path}`

export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`no value for path parameter ${name} of ${path}`)
    return encodeURIComponent(value)
  })
}

/** Every resource kind a route can name, one of each in a seeded tenant. */
export interface TenantIds {
  slug: string
  site: string
  controller: string
  /** Issue 30: the edge gateway the controller is assigned to. */
  edge: string
  instance: string
  /** Issue 30: a tag key of that instance, marked discrete (historian tag marks). */
  tag: string
  node: string
  node2: string
  alarm: string
  batch: string
  key: string
  account: string
  domain: string
  user: string
  /** The fleet link (issue 26): a site server (cloud), a conflict record, a forwarded command, the linked site, a site batch sent in chunks. */
  siteServer: string
  conflict: string
  command: string
  linkSite: string
  linkBatch: string
  /** A chunk number of that batch not sent yet (distinctive, as the suites swap ids in answers by their text). */
  linkChunk: string
}

/** Which resource a path or query parameter names, by its name in the OpenAPI document. */
export const PARAMETER_KINDS: Readonly<Record<string, keyof TenantIds>> = {
  slug: 'slug',
  code: 'site',
  siteId: 'site',
  controllerId: 'controller',
  edgeId: 'edge',
  instanceId: 'instance',
  tag: 'tag',
  nodeId: 'node',
  source: 'node',
  target: 'node2',
  supplyId: 'node',
  alarmId: 'alarm',
  batchId: 'batch',
  keyId: 'key',
  accountId: 'account',
  domain: 'domain',
  userId: 'user',
}

const LINK_CHUNK = '7306151'

/**
 * Parameters whose name alone does not say what they name: `id` of the fleet link's routes, the batch of a site
 * server's historian chunks, the site of a seed. Keyed by the path's prefix.
 */
const PATH_PARAMETER_KINDS: ReadonlyArray<{ prefix: string; name: string; kind: keyof TenantIds }> = [
  { prefix: '/api/admin/site-servers/', name: 'id', kind: 'siteServer' },
  { prefix: '/api/link/conflicts/', name: 'id', kind: 'conflict' },
  { prefix: '/api/link/historian/', name: 'batchId', kind: 'linkBatch' },
  { prefix: '/api/link/historian/', name: 'n', kind: 'linkChunk' },
  { prefix: '/api/link/seed', name: 'site', kind: 'linkSite' },
]

/** Which resource a parameter of the operation at `path` names: by its path first, else by its name (PARAMETER_KINDS). */
export function parameterKind(path: string, name: string): keyof TenantIds | undefined {
  return PATH_PARAMETER_KINDS.find((k) => k.name === name && path.startsWith(k.prefix))?.kind ?? PARAMETER_KINDS[name]
}

/** An id of the same shape that names nothing: its last character changed (a digit for a number). */
export function missingLike(id: string): string {
  // A number (a chunk number) stays a number.
  if (/^[0-9]+$/.test(id)) return id.slice(0, -1) + String((Number(id.at(-1)) + 1) % 10)
  const last = id.at(-1)
  return id.slice(0, -1) + (last === 'q' ? 'r' : 'q')
}

export interface Tenant {
  org: Org
  owner: Credential
  ownerKeyId: string
  ids: TenantIds
  /** Cloud mode: the tenant's enrolled site server (its credential passes the `link` policy only). */
  link?: CloudLink
}

async function expectStatus(res: LightMyRequestResponse, status: number, what: string) {
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.body}`)
  return res.json() as Record<string, unknown>
}

/**
 * An organisation with an owner key and one of everything, made through the API as a user would (site users
 * only on a site server; a member through the members service, as a sign-in and an approval would).
 * `prefix` keeps codes and caller-given ids distinct between the tenants of one test.
 */
export async function seedTenant(h: Harness, prefix: string): Promise<Tenant> {
  const { org, key, keyId } = await h.orgWithKey('owner')
  const owner: Credential = { org, apiKey: key }
  const call = (method: string, url: string, payload?: unknown) => h.inject(owner, { method: method as 'GET', url, payload: payload as object })
  const site = `${prefix}-SITE`
  await expectStatus(await call('POST', '/api/sites', { code: site, name: `${prefix} plant` }), 201, 'site')
  const ctl = await expectStatus(
    await call('POST', `/api/sites/${site}/controllers`, {
      name: `${prefix} PLC`,
      platform: 1,
      assetNumber: `${prefix}-A1`,
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' },
    }),
    201,
    'controller',
  )
  const controller = String(ctl.id)
  const edge = `${prefix}-GW-1`
  await expectStatus(await call('POST', `/api/sites/${site}/controllers/${controller}/assign`, { edgeId: edge }), 200, 'edge assignment')
  const instance = `${prefix}-CV-101`
  const tag = `${prefix}-TAG-1`
  await expectStatus(
    await call('POST', `/api/sites/${site}/instances`, {
      id: instance,
      name: 'Conveyor',
      typeId: 'conveyor',
      assetNumber: `${prefix}-I1`,
      controllerId: controller,
      tagMappings: { [tag]: 'N7:0' },
    }),
    201,
    'instance',
  )
  await expectStatus(await call('PUT', `/api/sites/${site}/historian/tags/${instance}/${tag}`, { interpolation: 'step' }), 200, 'tag mark')
  const node = `${prefix}-MSB-1`
  const node2 = `${prefix}-CB-1`
  await expectStatus(await call('POST', `/api/sites/${site}/electrical/nodes`, { id: node, name: 'Main switchboard', nodeType: 3 }), 201, 'node')
  await expectStatus(await call('POST', `/api/sites/${site}/electrical/nodes`, { id: node2, name: 'Breaker', nodeType: 5 }), 201, 'node 2')
  await expectStatus(await call('POST', `/api/sites/${site}/electrical/edges`, { sourceId: node, targetId: node2, edgeType: 0 }), 201, 'edge')
  const events = await expectStatus(
    await call('POST', `/api/sites/${site}/alarms/events`, {
      events: [
        {
          eventId: `${prefix}-e1`,
          instanceId: instance,
          condition: 'HI_TEMP',
          priority: 'high',
          state: 'active',
          occurredAt: new Date(h.clock.now() - 60_000).toISOString(),
        },
      ],
    }),
    200,
    'alarm event',
  )
  const alarm = String((events.results as Array<{ alarmId: string }>)[0]!.alarmId)
  const upload = multipart([
    { name: 'site_id', value: site },
    { name: 'format', value: 'long' },
    { name: 'mapping_csv', filename: 'mapping.csv', content: `historian_tag,instance_id,tag_key\nT1,${instance},t0\n` },
    { name: 'trend_csv', filename: 'trend.csv', content: 'Timestamp,TagName,Value,Quality\n2024-01-01 00:00:00,T1,1.5,100\n2024-01-01 00:01:00,T1,1.6,100\n' },
  ])
  const batch = String(
    (
      await expectStatus(
        await h.inject(owner, { method: 'POST', url: '/api/historian/import-batches', payload: upload.payload, headers: upload.headers }),
        201,
        'historian batch',
      )
    ).id,
  )
  const extraKey = await h.mintKey(org, 'member', { name: `${prefix} member key` })
  const account = `oid-${prefix}-${org.slug}`
  const members = createMembersService({ handle: h.handle, clock: h.clock, endSessions: endSessionsOfAccount })
  await members.recordSignIn(org.id, { oid: account, email: `${prefix.toLowerCase()}@example.test`, name: `${prefix} user` })
  await members.approve(org.id, { actor: CLI_ACTOR, isPlatformAdmin: true }, account, 'member')
  const domain = `${prefix.toLowerCase()}-${org.slug}.example.com`
  await expectStatus(await call('POST', `/api/admin/orgs/${org.slug}/domains`, { domain }), 201, 'domain')
  let user = `usr_${prefix}-none`
  if (h.config.mode === 'site') {
    user = String(
      (
        await expectStatus(
          await call('POST', '/api/site/users', {
            email: `${prefix.toLowerCase()}@plant.example`,
            displayName: `${prefix} operator`,
            siteRole: 'member',
            pin: '482913',
          }),
          201,
          'site user',
        )
      ).id,
    )
  }
  // The fleet link (issue 26): in the cloud a site server at work for a second site; on a site server the link's
  // records (a conflict, a command on the alarm) as the cloud's pull brings them.
  let fleet: Pick<TenantIds, 'siteServer' | 'conflict' | 'command' | 'linkSite' | 'linkBatch' | 'linkChunk'>
  let link: CloudLink | undefined
  if (h.config.mode === 'cloud') {
    link = await seedCloudLink(h, owner, prefix)
    fleet = {
      siteServer: link.serverId,
      conflict: link.conflicts[0]!,
      command: link.command,
      linkSite: link.site,
      linkBatch: link.batch,
      linkChunk: LINK_CHUNK,
    }
  } else {
    const pulled = await seedSiteLink(h, org.id, { site, controller, alarm, prefix })
    fleet = { siteServer: `srv_${prefix}-none`, conflict: pulled.conflict, command: pulled.command, linkSite: site, linkBatch: batch, linkChunk: LINK_CHUNK }
  }
  return {
    org,
    owner,
    ownerKeyId: keyId,
    ids: { slug: org.slug, site, controller, edge, instance, tag, node, node2, alarm, batch, key: extraKey.keyId, account, domain, user, ...fleet },
    ...(link ? { link } : {}),
  }
}

/**
 * Every tenant table: every table of the database with an `org_id` column (read from the schema, so a storage layout
 * that changes, such as the historian's series + points of migration 1600, is followed without a list to keep), and
 * `orgs` itself. tenant-transfer/tables.ts's own test keeps that list of tables complete.
 */
function tenantTables(h: Harness): Promise<string[]> {
  let found = tenantTablesOf.get(h.handle)
  if (!found) {
    found = h.handle.db.introspection.getTables().then((tables) =>
      tables
        .filter((t) => t.name === 'orgs' || t.columns.some((c) => c.name === 'org_id'))
        .map((t) => t.name)
        .sort(),
    )
    tenantTablesOf.set(h.handle, found) // read once per database handle: the fuzzing suite snapshots after every request
  }
  return found
}
const tenantTablesOf = new WeakMap<Harness['handle'], Promise<string[]>>()

/** Every row of one organisation in every tenant table, as a comparable string. */
export async function snapshotOrg(h: Harness, orgId: string): Promise<string> {
  const db = h.handle.db as unknown as Kysely<Record<string, Record<string, unknown>>>
  const out: Record<string, string[]> = {}
  const tables = await tenantTables(h)
  if (h.handle.dialect === 'postgres') {
    // One round trip instead of one per table: the fuzzing suite takes a snapshot after every request.
    const parts = tables.map(
      (table) =>
        sql`select ${table}::text as t, row_to_json(x)::text as r from ${sql.table(table)} x where x.${sql.ref(table === 'orgs' ? 'id' : 'org_id')} = ${orgId}`,
    )
    const { rows } = await sql<{ t: string; r: string }>`${sql.join(parts, sql` union all `)}`.execute(db)
    for (const table of tables) out[table] = []
    for (const row of rows) out[row.t]!.push(row.r)
    for (const table of tables) out[table]!.sort()
    return JSON.stringify(out)
  }
  for (const table of tables) {
    const rows = await db
      .selectFrom(table)
      .selectAll()
      .where(table === 'orgs' ? 'id' : 'org_id', '=', orgId)
      .execute()
    out[table] = rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).sort()
  }
  return JSON.stringify(out)
}

/** Names the tables whose rows differ between two snapshots, with the number of rows that differ. */
export function snapshotDiff(before: string, after: string): string[] {
  const a = JSON.parse(before) as Record<string, string[]>
  const b = JSON.parse(after) as Record<string, string[]>
  const out: string[] = []
  for (const table of Object.keys(a)) {
    const left = new Set(a[table])
    const right = new Set(b[table])
    const changed = [...left].filter((r) => !right.has(r)).length + [...right].filter((r) => !left.has(r)).length
    if (changed > 0) out.push(`${table}: ${changed} rows`)
  }
  return out
}

export const changedRows = (before: string, after: string) => snapshotDiff(before, after).reduce((n, s) => n + Number(/: (\d+) rows/.exec(s)![1]), 0)

/**
 * Checks an answer against the operation's declared responses: the status must be declared and a JSON body
 * must validate against the schema declared for that status and content type.
 */
export function responseChecker() {
  const compiled = new Map<object, (value: unknown) => string | null>()
  return (op: Operation, res: LightMyRequestResponse): string | null => {
    const declared = op.spec.responses[String(res.statusCode)]
    if (!declared) return `${label(op)}: status ${res.statusCode} is not declared (${res.body.slice(0, 200)})`
    const contentType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
    if (!declared.content || res.body.length === 0) return null
    const media = declared.content[contentType]
    if (!media) return `${label(op)}: ${res.statusCode} answered ${contentType || 'no content type'}, declared ${Object.keys(declared.content).join(', ')}`
    if (!media.schema || !/json/.test(contentType)) return null
    let validate = compiled.get(media.schema)
    if (!validate) {
      validate = responseValidator(media.schema)
      compiled.set(media.schema, validate)
    }
    const error = validate(JSON.parse(res.body))
    return error && `${label(op)}: ${res.statusCode} body breaks its schema: ${error.slice(0, 400)}`
  }
}

/**
 * A judge of answers for the suites that sweep operations: each 5xx, and each answer its operation's declared
 * responses do not allow, is added to `problems` with where it came from; the answer is returned.
 */
export function answerJudge(problems: string[]) {
  const check = responseChecker()
  return (op: Operation, res: LightMyRequestResponse, where: string): LightMyRequestResponse => {
    if (res.statusCode >= 500) problems.push(`${where}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    const violation = check(op, res)
    if (violation) problems.push(`${violation.slice(0, 400)} [${where}] ${res.body.slice(0, 300)}`)
    return res
  }
}

/** Field names that would hold a credential in a response. `contentHash` is the SHA-256 of an uploaded file, not a secret. */
const SECRET_FIELD = /verifier|hash|salt|secret|password|^pin$|^newpin$/i
const ALLOWED_FIELDS = new Set(['contentHash'])
const KEY_PLAINTEXT = /csk_[0-9A-Za-z]{32}/

/** The operations that hand out a secret once, and which: every other answer holding one leaks it. */
export function secretIssuedBy(op: Operation): { isMintAnswer?: boolean; issuesEnrolmentCode?: boolean; issuesLinkCredential?: boolean } {
  const key = `${op.method} ${op.path}`
  if (key === 'POST /api/admin/api-keys') return { isMintAnswer: true }
  if (key === 'POST /api/admin/site-servers' || key === 'POST /api/admin/site-servers/{id}/enrolment-code') return { issuesEnrolmentCode: true }
  if (key === 'POST /api/link/enrol') return { issuesLinkCredential: true }
  return {}
}

/**
 * Secret-looking fields holding a string anywhere in a JSON body, any API-key plaintext (unless this answer is the
 * mint), any fleet-link enrolment code (unless it is a registration or a new code) and any link credential (unless
 * it is the enrolment's answer).
 */
export function leaksIn(body: string, options: ReturnType<typeof secretIssuedBy> = {}): string[] {
  const found: string[] = []
  if (!options.isMintAnswer && KEY_PLAINTEXT.test(body)) found.push('an API-key plaintext')
  if (!options.issuesEnrolmentCode && ENROLMENT_CODE.test(body)) found.push('a site-server enrolment code')
  if (!options.issuesLinkCredential && LINK_CREDENTIAL.test(body)) found.push('a link credential')
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return found
  }
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}/${i}`))
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        // A value: a count of redacted PINs (`redactions.pin`, a number) names a kind of secret, it holds none.
        if (SECRET_FIELD.test(k) && !ALLOWED_FIELDS.has(k) && typeof v === 'string') found.push(`${path}/${k}`)
        walk(v, `${path}/${k}`)
      }
    }
  }
  walk(parsed, '')
  return found
}

/** Headers of an answer without those that differ between identical answers (date, request id); request ids have a fixed length. */
export function stableHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _d, 'x-request-id': _r, ...rest } = headers
  return rest
}

/** A problem body without its per-request `instance` (the request id). */
export function stableBody(body: string): unknown {
  try {
    const parsed = JSON.parse(body) as unknown
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'instance' in parsed) {
      const { instance: _i, ...rest } = parsed as Record<string, unknown>
      return rest
    }
    return parsed
  } catch {
    return body
  }
}

/**
 * One schema-valid value, deterministic: `examples[0]`, the first enum or const, a date-time a day after `now`,
 * the shortest string the bounds allow; objects carry their required properties (or the first one when none is).
 */
export function exampleOf(schema: Schema | undefined, now: number): unknown {
  if (!schema) return undefined
  const s = schema as Schema & {
    const?: unknown
    enum?: unknown[]
    examples?: unknown[]
    format?: string
    minLength?: number
    pattern?: string
    minimum?: number
    minItems?: number
    exclusiveMinimum?: number
  }
  if (s.const !== undefined) return s.const
  if (s.examples?.length) return s.examples[0]
  if (s.enum?.length) return s.enum[0]
  // The last branch: for roles (owner, admin, member) the least privileged, which any caller may give.
  if (s.anyOf) return exampleOf(s.anyOf.findLast((b) => b.type !== 'null') ?? s.anyOf[0], now)
  switch (s.type) {
    case 'null':
      return null
    case 'boolean':
      return false
    case 'integer':
      return s.minimum ?? (s.exclusiveMinimum === undefined ? 1 : s.exclusiveMinimum + 1)
    case 'number':
      return s.minimum ?? (s.exclusiveMinimum === undefined ? 1 : s.exclusiveMinimum + 1)
    case 'string':
      if (s.format === 'date-time') return new Date(now + 86_400_000).toISOString()
      if (s.format === 'email' || s.pattern === '^[^@\\s]+@[^@\\s]+$') return 'someone@example.test'
      if (s.pattern === '^[0-9]{6,12}$') return '482913'
      if (s.pattern) return fc.sample(fc.stringMatching(new RegExp(s.pattern)), { seed: 42, numRuns: 1 })[0]
      return 'x'.repeat(Math.max(1, s.minLength ?? 1))
    case 'array':
      // A tuple: each position's example.
      if (s.prefixItems) return s.prefixItems.map((item) => exampleOf(item, now))
      return Array.from({ length: s.minItems ?? 0 }, () => exampleOf(s.items, now))
    case 'object': {
      const props = s.properties ?? {}
      // No required property (an update): one that every resource may change, never its id.
      const keys = s.required?.length
        ? s.required
        : Object.keys(props)
            .filter((k) => k !== 'id')
            .sort((a, b) => Number(b === 'name') - Number(a === 'name'))
            .slice(0, 1)
      return Object.fromEntries(keys.map((k) => [k, exampleOf(props[k], now)]))
    }
    default:
      return 'x'
  }
}

/** The OpenAPI path of a Fastify route url (`/a/:id` → `/a/{id}`). */
export const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

/** The policy the route table records for an operation of the document. */
export function policyOf(h: Harness, op: Operation): string | undefined {
  return h.app.routeTable.find((r) => r.method === op.method && openApiPath(r.url) === op.path)?.policy
}

/**
 * Who calls an operation of the seeded tenant: its enrolled site server (the link credential and the link's
 * headers) for the routes of policy `link`, else the owner key.
 */
export function callerFor(h: Harness, op: Operation, tenant: Tenant): { credential: Credential; headers: Record<string, string> } {
  if (policyOf(h, op) === 'link' && tenant.link) return { credential: { org: tenant.org, bearer: tenant.link.credential }, headers: { ...LINK_HEADERS } }
  return { credential: tenant.owner, headers: {} }
}

/** The request an operation gets in these suites: a JSON example body when it takes one, else none. */
export function requestFor(op: Operation, url: string, now: number): { method: 'GET'; url: string; payload?: string; headers?: Record<string, string> } {
  const schema = jsonBodySchema(op)
  const method = op.method as 'GET'
  if (schema) return { method, url, payload: JSON.stringify(exampleOf(schema, now)), headers: { 'content-type': 'application/json' } }
  return { method, url }
}

/** A query string of the required query parameters (`ids`' when they name a resource, else examples; `type`, which DELETE …/edges needs) plus `extra`. */
export function queryFor(op: Operation, now: number, extra: Record<string, string> = {}, ids?: TenantIds): string {
  const q = new URLSearchParams()
  // Values the handlers check beyond the schema: a time window that ends after it starts, an edge type by name.
  const known: Record<string, string> = { from: new Date(now - 86_400_000).toISOString(), to: new Date(now).toISOString(), type: 'Cable' }
  // GET /api/link/last-change names a record by its table and its key (a JSON array): the seeded site.
  if (op.path === '/api/link/last-change') Object.assign(known, { table: 'sites', key: JSON.stringify([ids?.site ?? 'S1']) })
  for (const p of queryParams(op)) {
    const kind = parameterKind(op.path, p.name)
    const value = ids && kind ? ids[kind] : (known[p.name] ?? String(exampleOf(p.schema, now)))
    if ((p.required || p.name === 'type') && !(p.name in extra)) q.set(p.name, value)
  }
  for (const [k, v] of Object.entries(extra)) q.set(k, v)
  const s = q.toString()
  return s ? `?${s}` : ''
}

/** The number of rows a snapshot holds: a check that it sees the tenant at all (an empty one would prove nothing). */
export const snapshotRows = (snapshot: string) => Object.values(JSON.parse(snapshot) as Record<string, string[]>).reduce((n, rows) => n + rows.length, 0)
