import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createConfigHolder } from '../../src/config/holder.ts'
import { loadConfig, ConfigInvalid } from '../../src/config/load.ts'
import type { PoolStats } from '../../src/db/pool-meter.ts'
import { createLogger } from '../../src/http/logger.ts'
import { startMetricsListener } from '../../src/http/metrics-endpoint.ts'
import { createMetrics } from '../../src/http/metrics.ts'
import { startReminderJob } from '../../src/jobs/reminders.ts'
import { comparableBody, comparableHeaders, harness, KEY_SECRET, sleep, testDialects, type Harness } from '../harness.ts'
import { plant, standardParts, upload } from '../../src/modules/historian/test-setup.ts'
import { parseExposition, valueOf, type Sample } from './exposition.ts'

const TOKEN = randomBytes(32).toString('hex')
/** The figures of a SQLite pool at rest, for the tests that need a registry but no database. */
const IDLE_POOL: PoolStats = {
  size: 1,
  open: 1,
  idle: 1,
  waiting: 0,
  acquired: 0,
  waited: 0,
  acquireSeconds: 0,
  timeouts: { statement: 0, query: 0, connect: 0, busy: 0 },
}

const scrape = async (h: Harness): Promise<Sample[]> => {
  const res = await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  return parseExposition(res.body)
}

for (const dialect of testDialects()) {
  describe(`${dialect}: GET /metrics`, () => {
    it('the main listener serves it to the bearer of SITEGRID_METRICS_TOKEN only (anyone else: the unknown-path answer); requests count by route pattern, never by URL, tenant or id', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_METRICS_TOKEN: TOKEN })
      const unknown = await h.app.inject({ method: 'GET', url: '/no-such-path', headers: { host: 'x.localhost' } })
      assert.equal(unknown.statusCode, 404)
      for (const authorization of [undefined, 'Bearer wrong-token-of-the-same-kind', `Bearer ${TOKEN}x`, TOKEN]) {
        const refused = await h.app.inject({ method: 'GET', url: '/metrics', headers: { host: 'x.localhost', ...(authorization ? { authorization } : {}) } })
        assert.equal(refused.statusCode, 404, String(authorization))
        assert.deepEqual(comparableBody(refused.body), comparableBody(unknown.body))
        assert.deepEqual(comparableHeaders(refused.headers), comparableHeaders(unknown.headers))
      }
      // RFC 9110 §11.1: the scheme in any letter case, as the API's own credentials (http/auth.ts).
      const lowerCase = await h.app.inject({ method: 'GET', url: '/metrics', headers: { host: 'x.localhost', authorization: `bearer  ${TOKEN}` } })
      assert.equal(lowerCase.statusCode, 200)

      const { org, key } = await h.orgWithKey('owner')
      const owner = { org, apiKey: key }
      assert.equal((await h.inject(owner, { method: 'POST', url: '/api/sites', payload: { code: 'PLANT-7', name: 'Plant 7' } })).statusCode, 201)
      for (const query of ['', '?fields=all', '?x=1']) assert.equal((await h.inject(owner, { url: `/api/sites/PLANT-7${query}` })).statusCode, 200)
      assert.equal((await h.inject(owner, { url: '/api/sites/NOPE-1' })).statusCode, 404)

      const samples = await scrape(h)
      const requests = (route: string, method: string, status: string) => valueOf(samples, 'sitegrid_http_requests_total', { route, method, status })
      assert.equal(requests('/api/sites/:code', 'GET', '200'), 3)
      assert.equal(requests('/api/sites/:code', 'GET', '404'), 1)
      assert.equal(requests('/api/sites', 'POST', '201'), 1)
      assert.equal(requests('(unmatched)', 'GET', '404'), 5, 'the unknown path and the four refused scrapes')
      assert.equal(valueOf(samples, 'sitegrid_http_request_duration_seconds_count', { route: '/api/sites/:code', method: 'GET' }), 4)
      const routes = new Set(samples.flatMap((s) => (s.labels.route === undefined ? [] : [s.labels.route])))
      for (const route of routes) {
        assert.ok(route === '(unmatched)' || route.startsWith('/'), route)
        for (const raw of ['PLANT-7', 'NOPE-1', org.slug, org.id, '?', 'no-such-path']) assert.ok(!route.includes(raw), `${route} holds ${raw}`)
      }
      // The pool: the application's handle (harness: 4 PostgreSQL connections; SQLite: its one connection).
      assert.equal(valueOf(samples, 'sitegrid_db_pool_max_connections'), dialect === 'postgres' ? 4 : 1)
      assert.ok(valueOf(samples, 'sitegrid_db_pool_acquires_total')! > 0)
      assert.ok(valueOf(samples, 'sitegrid_db_pool_open_connections')! >= 1)
      assert.equal(valueOf(samples, 'sitegrid_db_pool_waiting_clients'), 0)
      assert.equal(valueOf(samples, 'sitegrid_db_timeouts_total', { kind: 'statement' }), 0)
    })

    it('rate-limit refusals, site-PIN locks, historian imports, tenant exports and imports are counted', async (t) => {
      const h = await harness(t, dialect, {
        SITEGRID_METRICS_TOKEN: TOKEN,
        SITEGRID_MODE: 'site',
        SITEGRID_RATE_LIMIT_PER_MINUTE: '10',
        SITEGRID_PIN_SCRYPT_LOG2N: '10',
      })
      const p = await plant(h)
      const org = p.owner.org
      // Per credential: an eleventh request with the same (bad) key within the minute is refused before it is checked.
      for (let i = 0; i < 11; i++) await h.inject({ org, apiKey: 'sk_not_a_key' }, { url: '/api/sites' })
      // Site PIN: the fifth failure locks the e-mail (known or not) and the address; the sixth attempt is refused by the lock.
      const login = () =>
        h.app.inject({
          method: 'POST',
          url: '/auth/site/login',
          remoteAddress: '10.1.2.3',
          headers: { host: `${org.slug}.localhost` },
          payload: { email: 'nobody@example.test', pin: '482913' },
        })
      const codes = []
      for (let i = 0; i < 6; i++) codes.push((await login()).json().code)
      assert.deepEqual(codes.slice(0, 5), Array(5).fill('Unauthorized'))
      assert.notEqual(codes[5], 'Unauthorized')

      const trend = 'timestamp,tag,value\n2024-01-01T00:00:00Z,A,10\n2024-01-01T00:01:00Z,A,11\n2024-01-01T00:02:00Z,A,12\n'
      const imported = await upload(h, p.owner, standardParts(p.siteCode, 'long', trend, 'historian_tag,instance_id,tag_key\nA,ins_pump,flow\n'))
      assert.equal(imported.statusCode, 201, imported.body)
      const exported = await h.inject(p.owner, { url: `/api/admin/orgs/${org.slug}/tenant/export` })
      assert.equal(exported.statusCode, 200)

      let samples = await scrape(h)
      // The export's end is counted when its stream has closed, just after the last byte was sent.
      for (let i = 0; i < 50 && valueOf(samples, 'sitegrid_transfers_running', { kind: 'tenant_export' }) !== 0; i++) {
        await sleep(20)
        samples = await scrape(h)
      }
      assert.equal(valueOf(samples, 'sitegrid_rate_limit_refusals_total', { limiter: 'credential' }), 1)
      assert.equal(valueOf(samples, 'sitegrid_sign_in_lockouts_total', { subject: 'account' }), 1)
      assert.equal(valueOf(samples, 'sitegrid_sign_in_lockouts_total', { subject: 'address' }), 1)
      assert.equal(valueOf(samples, 'sitegrid_sign_in_locked_refusals_total', { subject: 'address' }), 1)
      assert.equal(valueOf(samples, 'sitegrid_transfers_total', { kind: 'historian_import', outcome: 'complete' }), 1)
      assert.equal(valueOf(samples, 'sitegrid_transfer_rows_total', { kind: 'historian_import' }), 3)
      assert.equal(valueOf(samples, 'sitegrid_transfer_bytes_total', { kind: 'historian_import' }), Buffer.byteLength(trend))
      assert.equal(valueOf(samples, 'sitegrid_transfers_running', { kind: 'historian_import' }), 0)
      assert.equal(valueOf(samples, 'sitegrid_transfers_total', { kind: 'tenant_export', outcome: 'complete' }), 1)
      assert.equal(valueOf(samples, 'sitegrid_transfer_bytes_total', { kind: 'tenant_export' }), exported.rawPayload.length)
      const exportedRows = valueOf(samples, 'sitegrid_transfer_rows_total', { kind: 'tenant_export' })!
      assert.ok(exportedRows >= 4, 'the site, its controller and instances, the batch, its samples')

      // The package back into the same organisation: a staging (bytes) and a dry-run apply (rows), each one transfer.
      const staged = await h.inject(p.owner, {
        method: 'PUT',
        url: `/api/admin/orgs/${org.slug}/tenant/import/package`,
        payload: exported.rawPayload,
        headers: { 'content-type': 'application/gzip' },
      })
      assert.equal(staged.statusCode, 200, staged.body)
      const applied = await h.inject(p.owner, { method: 'POST', url: `/api/admin/orgs/${org.slug}/tenant/import?dryRun=true` })
      assert.equal(applied.statusCode, 200, applied.body)
      samples = await scrape(h)
      assert.equal(valueOf(samples, 'sitegrid_transfers_total', { kind: 'tenant_import', outcome: 'complete' }), 2)
      assert.equal(valueOf(samples, 'sitegrid_transfer_bytes_total', { kind: 'tenant_import' }), exported.rawPayload.length)
      assert.equal(valueOf(samples, 'sitegrid_transfer_rows_total', { kind: 'tenant_import' }), exportedRows)
      assert.equal(valueOf(samples, 'sitegrid_transfers_running', { kind: 'tenant_import' }), 0)
    })
  })
}

describe('the metrics listener and the reminder job', () => {
  it('with SITEGRID_METRICS_TOKEN the listener answers 401 to anyone without it', async (t) => {
    const metrics = createMetrics({ poolStats: () => IDLE_POOL })
    const listener = await startMetricsListener(metrics, {
      host: '127.0.0.1',
      port: 0,
      sealedToken: createHash('sha256').update(TOKEN).digest(),
      log: createLogger('silent'),
    })
    t.after(() => listener.close())
    const url = `http://127.0.0.1:${listener.address.port}/metrics`
    for (const authorization of [undefined, 'Bearer nope', TOKEN]) {
      const refused = await fetch(url, { headers: authorization ? { authorization } : {} })
      assert.equal(refused.status, 401, String(authorization))
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer')
      assert.equal(refused.headers.get('content-type'), 'application/problem+json')
      assert.equal(((await refused.json()) as { code: string }).code, 'Unauthorized')
    }
    const scraped = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(scraped.status, 200)
    assert.equal(valueOf(parseExposition(await scraped.text()), 'sitegrid_db_pool_max_connections'), 1)
  })

  it('its refusals are problem documents: an unknown path, another method, and a request the HTTP parser refuses (session 26)', async (t) => {
    const metrics = createMetrics({ poolStats: () => IDLE_POOL })
    const listener = await startMetricsListener(metrics, { host: '127.0.0.1', port: 0, sealedToken: undefined, log: createLogger('silent') })
    t.after(() => listener.close())
    const url = `http://127.0.0.1:${listener.address.port}`
    for (const [path, method, status, code] of [
      ['/other', 'GET', 404, 'NotFound'],
      ['/metrics', 'POST', 405, 'MethodNotAllowed'],
    ] as const) {
      const refused = await fetch(`${url}${path}`, { method })
      assert.equal(refused.status, status)
      assert.equal(refused.headers.get('content-type'), 'application/problem+json')
      const problem = (await refused.json()) as { code: string; status: number; instance: string }
      assert.deepEqual([problem.code, problem.status], [code, status])
      assert.match(problem.instance, /^metrics-[0-9a-f]{8}$/)
    }
    // Bytes that are not HTTP/1.1: before, Node's own bare `400 Bad Request` with no body.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(listener.address.port, '127.0.0.1')
      const chunks: Buffer[] = []
      socket.on('data', (d: Buffer) => chunks.push(d))
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
      socket.on('error', reject)
      socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')
    })
    assert.match(answer, /^HTTP\/1\.1 400 /)
    assert.match(answer, /^content-type: application\/problem\+json$/im)
    assert.equal((JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: string }).code, 'MalformedRequest')
    const scraped = await fetch(`${url}/metrics`)
    assert.equal(scraped.status, 200, 'the listener serves on')
  })

  it('reminder runs and the reminders they sent, skipped or failed are counted; a failed run too', async (t) => {
    const metrics = createMetrics({ poolStats: () => IDLE_POOL })
    const log = createLogger('silent')
    let runs = 0
    const poll = {
      async runOnce() {
        runs += 1
        if (runs === 2) throw new Error('relay down')
        return { due: 3, sent: 2, skipped: 1, failed: 0, claimedElsewhere: 0 }
      },
    }
    const stop = startReminderJob(poll, 1000, log, (outcome, summary) => metrics.reminderRun(outcome, summary))
    t.after(stop)
    const text = async () => parseExposition(await metrics.registry.metrics())
    for (let i = 0; i < 500 && valueOf(await text(), 'sitegrid_reminder_runs_total', { outcome: 'failed' }) === 0; i++) await sleep(10)
    await stop()
    const samples = await text()
    assert.equal(valueOf(samples, 'sitegrid_reminder_runs_total', { outcome: 'done' }), 1)
    assert.equal(valueOf(samples, 'sitegrid_reminder_runs_total', { outcome: 'failed' }), 1)
    assert.equal(valueOf(samples, 'sitegrid_reminders_total', { outcome: 'sent' }), 2)
    assert.equal(valueOf(samples, 'sitegrid_reminders_total', { outcome: 'skipped' }), 1)
    assert.equal(valueOf(samples, 'sitegrid_reminders_total', { outcome: 'failed' }), 0)
    assert.ok(valueOf(samples, 'sitegrid_reminder_last_success_timestamp_seconds')! > 0)
  })
})

describe('metrics settings', () => {
  const load = (env: Record<string, string>) =>
    loadConfig({ SITEGRID_KEY_SECRET: KEY_SECRET, SITEGRID_DATA_DIR: join(tmpdir(), 'sitegrid-no-such-folder'), ...env }, { requireKeySecret: false })
  it('the listener is on 127.0.0.1:9464 unless set; a bare port is on loopback; `off` disables it; another host needs the token, which is kept hashed', () => {
    assert.deepEqual(load({}).metrics, { listen: { host: '127.0.0.1', port: 9464 }, sealedToken: undefined })
    assert.deepEqual(load({ SITEGRID_METRICS_ADDRESS: '9100' }).metrics.listen, { host: '127.0.0.1', port: 9100 })
    assert.deepEqual(load({ SITEGRID_METRICS_ADDRESS: '[::1]:9100' }).metrics.listen, { host: '::1', port: 9100 })
    assert.equal(load({ SITEGRID_METRICS_ADDRESS: 'off' }).metrics.listen, undefined)
    assert.throws(
      () => load({ SITEGRID_METRICS_ADDRESS: '0.0.0.0:9464' }),
      (err: ConfigInvalid) => /^SITEGRID_METRICS_ADDRESS: 0\.0\.0\.0 is not a loopback/.test(err.problems[0]!),
    )
    assert.throws(() => load({ SITEGRID_METRICS_ADDRESS: 'localhost:99999' }), ConfigInvalid)
    assert.throws(() => load({ SITEGRID_METRICS_ADDRESS: 'http://x' }), ConfigInvalid)
    assert.throws(() => load({ SITEGRID_METRICS_TOKEN: 'short' }), ConfigInvalid)
    const guarded = load({ SITEGRID_METRICS_ADDRESS: '0.0.0.0:9464', SITEGRID_METRICS_TOKEN: TOKEN }).metrics
    assert.deepEqual(guarded.listen, { host: '0.0.0.0', port: 9464 })
    assert.equal(guarded.sealedToken?.length, 32)
    assert.ok(!guarded.sealedToken?.toString('hex').includes(TOKEN) && !JSON.stringify(guarded).includes(TOKEN))
    // A reload names a changed metrics setting among those that need a restart (the listener is opened once).
    const outcome = createConfigHolder(load({}), () => load({ SITEGRID_METRICS_ADDRESS: 'off' })).prepare()
    assert.deepEqual(outcome.ok && outcome.requiresRestart, ['SITEGRID_METRICS_*'])
  })
})
