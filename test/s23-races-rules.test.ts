// Session 23: the rules the earlier concurrency suites (test/hardening/cell-concurrency.test.ts, org-concurrency.test.ts,
// idempotency-processes.test.ts) leave out, each under 50 requests at once: split over two `sitegrid serve` processes
// on one PostgreSQL database (as the app role), or sent at once to the one process that serves a SQLite file (a second
// process on a served file is refused at start-up by design, tested in cell-concurrency.test.ts). Every answer is the
// rule's documented one, never a 5xx; the database and the audit trail hold exactly what the 2xx answers claim.
import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { startServer, type Server } from './cli/process.ts'
import { systemClock } from '../src/clock.ts'
import { createMembersService } from '../src/modules/orgs/members-service.ts'
import { LINK_PROTOCOL, SCHEMA_VERSION } from '../src/modules/fleet/site-servers/protocol.ts'
import { endSessionsOfAccount } from '../src/auth/sessions/end-sessions.ts'
import { sleep, testDialects, type TestDialect } from './harness.ts'
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.ts'
import { processWorld, type ProcessWorld } from './hardening/process-support.ts'

const RACERS = 50
const agent = new Agent({ keepAlive: true, maxSockets: 64 })

interface Answer {
  status: number
  body: string
  code: string
}

interface Cell {
  world: ProcessWorld
  servers: Server[]
  dialect: TestDialect
}

async function startCell(t: TestContext, dialect: TestDialect, slug: string, mode: 'cloud' | 'site', env: Record<string, string> = {}): Promise<Cell> {
  const world = await processWorld(t, dialect, slug, { SITEGRID_MODE: mode, SITEGRID_PIN_SCRYPT_LOG2N: '10', SITEGRID_IDEMPOTENCY_WAIT_MS: '60000', ...env })
  const processes = dialect === 'postgres' ? 2 : 1
  const servers = await Promise.all(Array.from({ length: processes }, () => startServer({ cwd: world.cwd, env: world.env })))
  t.after(async () => {
    for (const s of servers) await s.stop()
  })
  return { world, servers, dialect }
}

/** Request `i` to process `i % servers.length`, at the cell's organisation, with `headers` (an API key by default). */
function call(cell: Cell, i: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const server = cell.servers[i % cell.servers.length]!
  const all: Record<string, string> = { host: `${cell.world.slug}.localhost`, 'x-api-key': cell.world.ownerKey, ...headers }
  if (all['x-api-key'] === '') delete all['x-api-key']
  if (body !== undefined) all['content-type'] = 'application/json'
  return new Promise<Answer>((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers: all, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
      })
      res.on('end', () => {
        const status = res.statusCode ?? 0
        let code = String(status)
        if (status >= 300 && text.startsWith('{')) code = `${status} ${(JSON.parse(text) as { code?: string }).code}`
        resolve({ status, body: text, code })
      })
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** `RACERS` requests at once; none a 5xx, every other answer a 2xx or one of `refusals` ("409 Conflict"). */
async function race(cell: Cell, rule: string, refusals: string[], send: (i: number) => Promise<Answer>): Promise<Answer[]> {
  const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => send(i)))
  const codes: Record<string, number> = {}
  for (const a of answers) codes[a.code] = (codes[a.code] ?? 0) + 1
  console.log(`s23-races ${cell.dialect}: ${rule}: ${RACERS} at once over ${cell.servers.length} process(es) -> ${JSON.stringify(codes)}`)
  assert.deepEqual(
    answers.filter((a) => a.status >= 500).map((a) => a.body),
    [],
    rule,
  )
  for (const code of Object.keys(codes)) assert.ok(/^2\d\d$/.test(code) || refusals.includes(code), `${rule}: undocumented answer ${code}`)
  return answers
}

async function audits(cell: Cell, action: string, target?: string): Promise<number> {
  let q = cell.world.handle.db.selectFrom('audit_events').select('id').where('org_id', '=', cell.world.orgId).where('action', '=', action)
  if (target !== undefined) q = q.where('target', '=', target)
  return (await q.execute()).length
}

const controller = (assetNumber: string) => ({ name: 'PLC', platform: 1, assetNumber, connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' } })

/** one Idempotency-Key with two bodies executes once; one pending member approved once; keys minted at once all distinct; one site linked to one site server; one enrolment code used once; a site server revoked once */
async function cloudRules(cell: Cell): Promise<void> {
  const { world } = cell
  assert.equal((await call(cell, 0, 'POST', '/api/sites', { code: 'S1', name: 'Plant' })).status, 201)

  // Idempotency-Key: the same key with two different bodies at once. One request executes; a request with its
  // body replays its answer, one with the other body is 422 IdempotencyKeyReused. One controller exists.
  const keyed = await race(cell, 'one Idempotency-Key, two bodies', ['422 IdempotencyKeyReused'], (i) =>
    call(cell, i, 'POST', '/api/sites/S1/controllers', controller(i % 4 < 2 ? 'IDEM-A' : 'IDEM-B'), { 'idempotency-key': 'two-bodies' }),
  )
  const made = await world.handle.db.selectFrom('controllers').select(['id', 'asset_number']).where('org_id', '=', world.orgId).execute()
  assert.equal(made.length, 1)
  const winner = made[0]!.asset_number === 'IDEM-A' ? 0 : 2
  keyed.forEach((a, i) => {
    if (i % 4 < 2 === (winner === 0)) {
      assert.equal(a.status, 201, `request ${i} has the executed body`)
      assert.equal((JSON.parse(a.body) as { id: string }).id, made[0]!.id)
    } else assert.equal(a.code, '422 IdempotencyKeyReused', `request ${i} has the other body`)
  })

  // Member approval: one pending request approved 50 times at once (as admin or as member): one 200, the others
  // 409 (already active); one audit row, and the role is the winner's.
  const members = createMembersService({ handle: world.handle, clock: systemClock, endSessions: endSessionsOfAccount })
  await members.recordSignIn(world.orgId, { oid: 'pending-1', email: 'p1@example.test', name: 'P1' })
  const approvals = await race(cell, 'member approve', ['409 Conflict'], (i) =>
    call(cell, i, 'POST', `/api/admin/orgs/${world.slug}/members/pending-1/approve`, { role: i % 2 === 0 ? 'admin' : 'member' }),
  )
  const approved = approvals.filter((a) => a.status === 200)
  assert.equal(approved.length, 1)
  assert.equal(await audits(cell, 'member.approved', 'pending-1'), 1)
  const access = await members.accessOf(world.orgId, 'pending-1')
  assert.deepEqual(access, { status: 'active', role: (JSON.parse(approved[0]!.body) as { role: string }).role })

  // Key mint: 50 at once are 50 keys, each audited once, each authenticating.
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
  const mintedBefore = await audits(cell, 'api_key.minted')
  const mints = await race(cell, 'api key mint', [], (i) => call(cell, i, 'POST', '/api/admin/api-keys', { role: 'member', name: `k${i}`, expiresAt }))
  const minted = mints.map((a) => JSON.parse(a.body) as { keyId: string; plaintext: string })
  assert.equal(new Set(minted.map((k) => k.keyId)).size, RACERS)
  assert.equal(await audits(cell, 'api_key.minted'), mintedBefore + RACERS)
  const uses = await race(cell, 'each minted key authenticates', [], (i) =>
    call(cell, i + 1, 'GET', '/api/sites', undefined, { 'x-api-key': minted[i]!.plaintext }),
  )
  assert.equal(uses.length, RACERS)

  // Session 26: keys restricted to a site minted while the site is deleted. The delete revokes the site's keys in its
  // transaction and a mint holds the site's row in its own: a mint either came first (its key revoked with the
  // others) or found no site (400 naming /siteId). No key restricted to the deleted site stays live.
  assert.equal((await call(cell, 0, 'POST', '/api/sites', { code: 'D1', name: 'Doomed' })).status, 201)
  const deleteAt = 10 // sent among the first: most mints arrive after it
  const doomed = await race(cell, 'site-restricted mints racing the delete of the site', ['400 ValidationFailed'], (i) =>
    i === deleteAt
      ? call(cell, i, 'DELETE', '/api/sites/D1?confirm=D1')
      : call(cell, i, 'POST', '/api/admin/api-keys', { role: 'member', name: `gw${i}`, expiresAt, siteId: 'D1' }),
  )
  assert.equal(doomed[deleteAt]!.status, 204)
  const mintedForD1 = doomed.filter((a, i) => i !== deleteAt && a.status === 201).length
  const keysOfD1 = await world.handle.db
    .selectFrom('api_keys')
    .select(['id', 'revoked_at'])
    .where('org_id', '=', world.orgId)
    .where('site_code', '=', 'D1')
    .execute()
  assert.equal(keysOfD1.length, mintedForD1, 'a refused mint stored no key')
  assert.deepEqual(
    keysOfD1.filter((k) => k.revoked_at === null).map((k) => k.id),
    [],
    `no live key of the deleted site (${mintedForD1} minted before the delete)`,
  )

  // Site servers: one site registered 50 times at once is linked to one (the others 409 Conflict, SiteAlreadyLinked).
  const registrations = await race(cell, 'site server registration of one site', ['409 Conflict'], (i) =>
    call(cell, i, 'POST', '/api/admin/site-servers', { name: `box ${i}`, sites: ['S1'] }),
  )
  const registered = registrations.filter((a) => a.status === 201)
  assert.equal(registered.length, 1)
  const servers = await world.handle.db.selectFrom('site_servers').select('id').where('org_id', '=', world.orgId).execute()
  assert.equal(servers.length, 1)
  assert.equal(await audits(cell, 'site_server.registered'), 1)
  const { id: serverId, enrolmentCode } = JSON.parse(registered[0]!.body) as { id: string; enrolmentCode: string }

  // Its one-time code used 50 times at once: one enrolment (one credential), the others the uniform 401.
  const enrolments = await race(cell, 'one enrolment code used at once', ['401 Unauthorized'], (i) =>
    call(cell, i, 'POST', '/api/link/enrol', { code: enrolmentCode, orgId: null, protocol: LINK_PROTOCOL, schema: SCHEMA_VERSION }, { 'x-api-key': '' }),
  )
  assert.equal(enrolments.filter((a) => a.status === 200).length, 1)
  assert.equal(await audits(cell, 'site_server.enrolled', serverId), 1)

  // Revoked 50 times at once: one 200, the others 404 (already revoked); one audit row.
  const revokes = await race(cell, 'site server revoke', ['404 NotFound'], (i) => call(cell, i, 'POST', `/api/admin/site-servers/${serverId}/revoke`))
  assert.equal(revokes.filter((a) => a.status === 200).length, 1)
  assert.equal(await audits(cell, 'site_server.revoked', serverId), 1)
}

/** each action that answers 200 is in the alarm's history exactly once (and audited once), its seqs strictly growing, its state is its last transition's, and one alarm at most is open */
async function alarmActions(cell: Cell): Promise<void> {
  const { world } = cell
  assert.equal((await call(cell, 0, 'POST', '/api/sites', { code: 'A1', name: 'Plant' })).status, 201)
  const ctl = await call(cell, 0, 'POST', '/api/sites/A1/controllers', controller('PLC-1'))
  const controllerId = (JSON.parse(ctl.body) as { id: string }).id
  const p1 = await call(cell, 0, 'POST', '/api/sites/A1/instances', { id: 'P1', name: 'P1', typeId: 'conveyor', assetNumber: 'A-P1', controllerId })
  assert.equal(p1.status, 201, p1.body)
  const t0 = Date.now() - 60_000
  const event = (n: number, state: 'active' | 'normal') => ({
    events: [{ eventId: `ev-${n}`, instanceId: 'P1', condition: 'Trip', priority: 'high', state, occurredAt: new Date(t0 + n * 10).toISOString() }],
  })
  const raised = await call(cell, 0, 'POST', '/api/sites/A1/alarms/events', event(0, 'active'))
  const alarmId = (JSON.parse(raised.body) as { results: Array<{ alarmId: string }> }).results[0]!.alarmId
  const until = new Date(Date.now() + 3_600_000).toISOString()
  const actions = [
    { path: 'acknowledge', body: { comment: 'seen' }, transition: 'acknowledged', audit: null },
    { path: 'shelve', body: { comment: 'maintenance', until }, transition: 'shelved', audit: 'alarm.shelve' },
    { path: 'unshelve', body: { comment: 'back' }, transition: 'unshelved', audit: 'alarm.unshelve' },
    { path: 'out-of-service', body: { comment: 'repair' }, transition: 'removed_from_service', audit: 'alarm.remove_from_service' },
    { path: 'return-to-service', body: { comment: 'repaired' }, transition: 'returned_to_service', audit: 'alarm.return_to_service' },
  ] as const
  // Six kinds in turn: the five operator actions on the alarm, and a process event (returning or re-activating it).
  const answers = await race(cell, 'alarm actions and events on one alarm', ['409 AlarmStateConflict'], (i) =>
    i % 6 === 5
      ? call(cell, i, 'POST', '/api/sites/A1/alarms/events', event(i, i % 12 === 5 ? 'normal' : 'active'))
      : call(cell, i, 'POST', `/api/sites/A1/alarms/${alarmId}/${actions[i % 6]!.path}`, actions[i % 6]!.body),
  )

  const read = await call(cell, 0, 'GET', `/api/sites/A1/alarms/${alarmId}`)
  const alarm = JSON.parse(read.body) as { state: string; history: Array<{ seq: number; action: string; toState: string; eventId: string | null }> }
  // seq is the alarm's version after the transition: strictly growing (a value-only refresh by an event bumps the
  // version without a transition, so it may skip numbers), never repeated.
  const seqs = alarm.history.map((h) => h.seq)
  assert.ok(
    seqs.every((seq, n) => n === 0 || seq > seqs[n - 1]!),
    `history seqs strictly growing: ${JSON.stringify(alarm.history.map((h) => [h.seq, h.action, h.toState, h.eventId]))}`,
  )
  assert.equal(alarm.state, alarm.history.at(-1)!.toState)
  for (const [k, action] of actions.entries()) {
    const applied = answers.filter((a, i) => i % 6 === k && a.status === 200).length
    assert.equal(alarm.history.filter((h) => h.action === action.transition && h.eventId === null).length, applied, action.path)
    if (action.audit !== null) assert.equal(await audits(cell, action.audit, alarmId), applied, `${action.path} audited`)
  }
  assert.equal(answers.filter((a, i) => i % 6 === 0 && a.status === 200).length <= 2, true, 'acknowledged at most once per activation')
  const open = await world.handle.db
    .selectFrom('alarms')
    .select('id')
    .where('org_id', '=', world.orgId)
    .where('site_code', '=', 'A1')
    .where('active_key', 'is not', null)
    .execute()
  assert.ok(open.length <= 1, 'one open alarm per source')
  const events = await world.handle.db.selectFrom('alarm_events').select('event_id').where('org_id', '=', world.orgId).where('site_code', '=', 'A1').execute()
  assert.equal(events.length, 1 + answers.filter((_, i) => i % 6 === 5).length, 'every event stored once')
}

/** AI tokensPerDay of the cell's tier: 200 a day; each answer of the fake provider uses 40 tokens. */
const AI_PER_DAY = 200
const AI_PER_REQUEST = 40

/**
 * A fake provider whose answers use 40 tokens each, after 300 ms (so that 50 sent at once are in flight together), and
 * the AI configuration file of a tier that allows 200 tokens a day: the environment of a cell that serves it.
 */
async function aiBox(t: TestContext): Promise<{ box: FakeOpenAi; env: Record<string, string> }> {
  const box = await startFakeOpenAi({
    fallback: {
      kind: 'ok',
      text: 'fake answer',
      usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: AI_PER_REQUEST },
      headersDelayMs: 300,
    },
  })
  t.after(() => box.close())
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-s23-ai-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'ai.json')
  writeFileSync(
    file,
    JSON.stringify({
      providers: [{ name: 'box', baseUrl: box.baseUrl, trusted: true, allowPrivateNetwork: true, timeoutMs: 30_000, maxRetries: 0 }],
      tiers: [{ name: 'fast', provider: 'box', model: 'qwen-local', maxTokensCeiling: 64, requestsPerMinute: 10_000, tokensPerDay: AI_PER_DAY }],
      defaultTier: 'fast',
    }),
  )
  return { box, env: { SITEGRID_AI_CONFIG_FILE: file } }
}

/** requests in flight hold back what they may use: the day overshoots tokensPerDay by less than one request, the others 429 tokensPerDay; sent one by one afterwards, the room left is used */
async function aiTokensPerDay(cell: Cell, box: FakeOpenAi): Promise<void> {
  const perDay = AI_PER_DAY
  const perRequest = AI_PER_REQUEST
  const { world } = cell
  const used = async () => {
    const rows = await world.handle.db.selectFrom('ai_usage').select(['total_tokens', 'status']).where('org_id', '=', world.orgId).execute()
    return { requests: rows.length, tokens: rows.reduce((n, r) => n + Number(r.total_tokens), 0) }
  }
  const asks = await race(cell, `AI tokensPerDay ${perDay}`, ['429 RateLimited'], (i) => call(cell, i, 'POST', '/api/ai/complete', { prompt: `question ${i}` }))
  const admitted = asks.filter((a) => a.status === 200).length
  for (const a of asks.filter((x) => x.status === 429)) assert.equal((JSON.parse(a.body) as { limit: string }).limit, 'tokensPerDay')
  const atOnce = await used()
  console.log(`s23-races ${cell.dialect}: AI tokensPerDay ${perDay}, ${perRequest} a request: admitted at once ${admitted}, tokens used ${atOnce.tokens}`)
  assert.ok(admitted >= 1)
  assert.equal(atOnce.requests, admitted)
  assert.equal(box.requests.length, admitted, 'refused requests reach no provider')
  assert.ok(atOnce.tokens < perDay + perRequest, `the day overshoots by less than one request: ${atOnce.tokens} tokens used`)

  // One by one, requests are admitted while the day has room (none refused before it is used up), then refused.
  let tokens = atOnce.tokens
  while (tokens < perDay) {
    const one = await call(cell, 0, 'POST', '/api/ai/complete', { prompt: 'one more' })
    assert.equal(one.status, 200, one.body)
    tokens += perRequest
  }
  const refused = await call(cell, 1, 'POST', '/api/ai/complete', { prompt: 'over' })
  assert.equal(refused.code, '429 RateLimited')
  assert.equal((await used()).tokens, tokens)
}

/** one batchKey pushed at once stores once (the others replay its answer); distinct batchKeys of one key in one window share one open batch; every sample stored once */
async function livePushes(cell: Cell): Promise<void> {
  const { world } = cell
  assert.equal((await call(cell, 0, 'POST', '/api/sites', { code: 'L1', name: 'Plant' })).status, 201)
  const ctl = await call(cell, 0, 'POST', '/api/sites/L1/controllers', controller('PLC-1'))
  const controllerId = (JSON.parse(ctl.body) as { id: string }).id
  const pump = { id: 'P1', name: 'P1', typeId: 'pump', assetNumber: 'A-P1', controllerId, tagMappings: { speed: 'N7:0', flow: 'N7:1' } }
  assert.equal((await call(cell, 0, 'POST', '/api/sites/L1/instances', pump)).status, 201)
  // The pushes must fall in one 10-minute UTC window (a new window opens a new batch): not in the last 20 s of one.
  const toNextWindow = 600_000 - (Date.now() % 600_000)
  if (toNextWindow < 20_000) await sleep(toNextWindow + 100)
  const now = Date.now()
  const samples = (i: number, n: number) =>
    Array.from({ length: n }, (_, j) => ({ instanceId: 'P1', tagKey: j % 2 === 0 ? 'speed' : 'flow', ts: now - 60_000 + i * 100 + j, value: i }))
  const push = (i: number, batchKey: string, body: unknown) => call(cell, i, 'POST', `/api/sites/L1/historian/samples?batchKey=${batchKey}`, body)
  const stored = async () =>
    Number(
      (
        await world.handle.db
          .selectFrom('historian_points')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', world.orgId)
          .where('series_id', 'in', (eb) => eb.selectFrom('historian_series').select('id').where('org_id', '=', world.orgId).where('site_code', '=', 'L1'))
          .executeTakeFirstOrThrow()
      ).n,
    )

  const same = await race(cell, 'one batchKey pushed at once', [], (i) => push(i, 'gw-same', { samples: samples(0, 10) }))
  const sameAnswers = same.map((a) => JSON.parse(a.body) as { replayed: boolean; stored: number; historianBatchId: string })
  assert.equal(sameAnswers.filter((a) => !a.replayed).length, 1)
  assert.deepEqual(new Set(sameAnswers.map((a) => `${a.historianBatchId} ${a.stored}`)).size, 1)
  assert.equal(await stored(), 10)

  const distinct = await race(cell, 'distinct batchKeys of one key at once', [], (i) => push(i, `gw-${i}`, { samples: samples(i + 1, 4) }))
  const answers = distinct.map((a) => JSON.parse(a.body) as { replayed: boolean; stored: number; historianBatchId: string })
  assert.equal(
    answers.reduce((n, a) => n + a.stored, 0),
    RACERS * 4,
  )
  assert.equal(await stored(), 10 + RACERS * 4)
  const live = await world.handle.db
    .selectFrom('historian_batches')
    .select(['id', 'status'])
    .where('org_id', '=', world.orgId)
    .where('site_code', '=', 'L1')
    .where('format', '=', 'live')
    .execute()
  assert.deepEqual(new Set(answers.map((a) => a.historianBatchId)).size, 1, `one batch: ${JSON.stringify(live)}`)
  assert.equal(live.length, 1, 'one open batch for the key and window')
}

/** live samples, tag marks and gateway heartbeats sent while the site is deleted: each done before the delete or 404, none a 5xx, nothing of the site left behind */
async function siteDeletedUnderGateway(cell: Cell): Promise<void> {
  const { world } = cell
  const { db } = world.handle
  for (let round = 0; round < 2; round++) {
    const code = `G${round}`
    assert.equal((await call(cell, 0, 'POST', '/api/sites', { code, name: 'Doomed' })).status, 201)
    const ctl = await call(cell, 0, 'POST', `/api/sites/${code}/controllers`, controller('PLC-1'))
    const controllerId = (JSON.parse(ctl.body) as { id: string }).id
    assert.equal((await call(cell, 0, 'POST', `/api/sites/${code}/controllers/${controllerId}/assign`, { edgeId: 'GW-1', edgePlcId: null })).status, 200)
    const pump = { id: 'P1', name: 'P1', typeId: 'pump', assetNumber: 'A-P1', controllerId, tagMappings: { speed: 'N7:0', flow: 'N7:1' } }
    assert.equal((await call(cell, 0, 'POST', `/api/sites/${code}/instances`, pump)).status, 201)
    const now = Date.now()
    const writes: Array<(i: number) => Promise<Answer>> = [
      (i) =>
        call(cell, i, 'POST', `/api/sites/${code}/historian/samples?batchKey=b-${i}`, {
          samples: [{ instanceId: 'P1', tagKey: i % 4 < 2 ? 'speed' : 'flow', ts: now - 1000 - i, value: i }],
        }),
      (i) => call(cell, i, 'PUT', `/api/sites/${code}/historian/tags/P1/${i % 4 < 2 ? 'speed' : 'flow'}`, { interpolation: 'step' }),
      (i) =>
        call(cell, i, 'PUT', `/api/sites/${code}/edges/GW-1/status`, {
          gatewayVersion: '2.4.1',
          controllers: [{ controllerId, communication: i % 2 === 0 ? 'ok' : 'failed', lastGoodPollAt: new Date(now).toISOString(), errorCount: i }],
        }),
    ]
    await race(cell, `site delete against its gateway's writes (round ${round})`, ['404 NotFound', '409 Conflict'], (i) =>
      // The deletes a moment after the writes began, so that writes are in flight on both sides of the delete.
      i % 10 === 5 ? sleep(40).then(() => call(cell, i, 'DELETE', `/api/sites/${code}?confirm=${code}`)) : writes[i % writes.length]!(i),
    )
    assert.equal(await audits(cell, 'site.deleted', code), 1, 'the site is deleted once')
    for (const table of [
      'historian_series',
      'historian_batches',
      'historian_live_batches',
      'historian_tag_marks',
      'edge_gateways',
      'edge_controller_status',
      'edge_config_versions',
      'alarms',
    ] as const) {
      const left = await db.selectFrom(table).select('site_code').where('org_id', '=', world.orgId).where('site_code', '=', code).execute()
      assert.equal(left.length, 0, `${table} left in the deleted site`)
    }
    const orphans = await db
      .selectFrom('historian_points')
      .select('series_id')
      .where('org_id', '=', world.orgId)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('historian_series as s').select('s.id').whereRef('s.id', '=', 'historian_points.series_id'))),
      )
      .execute()
    assert.equal(orphans.length, 0, 'samples left without their series')
  }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: s23 races, cloud rules under ${RACERS} concurrent requests (two processes on PostgreSQL)`, () => {
    it('keys and idempotency, members, site servers, an alarm, AI tokensPerDay, live pushes and a site deleted under its gateway: one cell, every rule in turn', async (t) => {
      const ai = await aiBox(t)
      const cell = await startCell(t, dialect, 'racers', 'cloud', ai.env)
      await cloudRules(cell)
      await alarmActions(cell)
      await aiTokensPerDay(cell, ai.box)
      await livePushes(cell)
      await siteDeletedUnderGateway(cell)
    })
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: s23 races, site-server rules under ${RACERS} concurrent requests (two processes on PostgreSQL)`, () => {
    it('one refresh token used at once rotates once; configuration reloads at once each answer and audit once', async (t) => {
      const cell = await startCell(t, dialect, 'plant', 'site')
      const added = await call(cell, 0, 'POST', '/api/site/users', { email: 'op@plant.example', displayName: 'Operator', siteRole: 'owner', pin: '482913' })
      assert.equal(added.status, 201, added.body)
      const login = await call(cell, 0, 'POST', '/auth/site/login', { email: 'op@plant.example', pin: '482913' }, { 'x-api-key': '' })
      assert.equal(login.status, 200, login.body)
      const { refreshToken, accessToken } = JSON.parse(login.body) as { refreshToken: string; accessToken: string }

      // Each refresh token works once: of 50 uses at once exactly one rotates it, the others the uniform 401.
      const refreshes = await race(cell, 'one refresh token used at once', ['401 Unauthorized'], (i) =>
        call(cell, i, 'POST', '/auth/site/refresh', { refreshToken }, { 'x-api-key': '' }),
      )
      assert.equal(refreshes.filter((a) => a.status === 200).length, 1)

      // Reloads run one at a time; each answers and writes one audit row.
      const reloads = await race(cell, 'configuration reload', [], (i) =>
        call(cell, i, 'POST', '/api/admin/config/reload', { reason: `r${i}` }, { 'x-api-key': '', authorization: `Bearer ${accessToken}` }),
      )
      assert.equal(reloads.length, RACERS)
      assert.equal(await audits(cell, 'config.reloaded'), RACERS)
    })
  })
}
