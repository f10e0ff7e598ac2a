// Issue 24 (defect 12), graceful shutdown: SIGTERM must not drop a request already sent. A real `sitegrid serve`
// process (the PostgreSQL app role) is kept busy by BUSY keep-alive connections (3 list reads to 1 site creation,
// each connection sends its next request when its answer arrives). Then the server is paused (SIGSTOP, standing for a
// server too busy to read its sockets) and over the 300 ms before SIGTERM, LATE more keep-alive connections (warmed by
// one request each, then idle) and QUEUED new connections (left in the listen backlog) send one site creation each;
// SIGTERM, then SIGCONT. A request counts as sent before SIGTERM when the client had written it whole before the signal.
// - every request sent before SIGTERM is answered normally: 2xx with its complete body (no 503, no reset);
// - a request sent after SIGTERM is answered normally (2xx) or fails at the connection (refused, or reset when written
//   on a kept-alive connection the draining server closed as idle), never any other answer;
// - new connections are refused once the listener is closed: every connection opened after a refusal was seen is refused;
// - every write answered 2xx is in the database, and no write was committed without its answer;
// - the process exits 0 (drained) within SITEGRID_SHUTDOWN_GRACE_MS (idle keep-alive connections do not hold it).
// A second case: an upload still arriving when the grace period ends does not keep the process alive: it exits 1.
import assert from 'node:assert/strict'
import { Agent, request, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { sleep, testDialects } from '../harness.ts'
import { startServer, type Server } from '../cli/process.ts'
import { waitHealthy } from '../support/historian-upload.ts'
import { processWorld } from './process-support.ts'

const BUSY = 24
const LATE = 16
/** Site creations on new connections, queued in the listen backlog before SIGTERM. */
const QUEUED = 8
/** The late requests go out over this window before SIGTERM, one every LATE_WINDOW_MS / (LATE - 1) ms. */
const LATE_WINDOW_MS = 300
const GRACE_MS = 20_000
/** The late requests are scheduled once this many answers arrived (a count, not a moment). */
const ANSWERS_BEFORE_SIGTERM = 600
/** Connection-level failures: refused at connect, or reset / closed before an answer on a kept-alive connection. */
const CONNECTION_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE'])

interface Outcome {
  startedAt: number
  /** When the request was written whole (the 'finish' event); undefined if it never was. */
  writtenAt?: number
  /** On a kept-alive connection that carried an earlier request. */
  reused: boolean
  status?: number
  /** The body parsed as the JSON its status promises. */
  complete?: boolean
  connectionClose?: boolean
  error?: string
  body?: Record<string, unknown>
  /** When the answer or the failure arrived. */
  endedAt?: number
}

/** One request through `agent` (false: a new connection); never rejects: what happened is in the outcome. */
function send(
  server: Server,
  agent: Agent | false,
  headers: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
  onWritten?: () => void,
): Promise<Outcome> {
  const outcome: Outcome = { startedAt: performance.now(), reused: false }
  return new Promise((resolve) => {
    const req = request(`${server.url}${path}`, { method, headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        text += d
      })
      res.on('end', () => resolve(answered(outcome, res.statusCode ?? 0, res.headers, text)))
      res.on('error', (err: NodeJS.ErrnoException) => resolve(failed(outcome, err)))
    })
    req.on('socket', () => {
      outcome.reused = req.reusedSocket
    })
    req.on('finish', () => {
      outcome.writtenAt = performance.now()
      onWritten?.()
    })
    req.on('error', (err: NodeJS.ErrnoException) => resolve(failed(outcome, err)))
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

function answered(outcome: Outcome, status: number, headers: IncomingHttpHeaders, text: string): Outcome {
  const done = { ...outcome, status, connectionClose: headers.connection === 'close', endedAt: performance.now() }
  try {
    const body = JSON.parse(text) as Record<string, unknown>
    // 200: a page of sites; 201: the site created; anything else: a problem with its code.
    return { ...done, complete: status === 200 ? Array.isArray(body.items) : typeof body.code === 'string', body }
  } catch {
    return { ...done, complete: false }
  }
}

function failed(outcome: Outcome, err: NodeJS.ErrnoException): Outcome {
  return { ...outcome, error: err.code ?? err.message, endedAt: performance.now() }
}

const tally = <T>(items: T[]) =>
  [...items.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<T, number>())].map(([k, n]) => `${n}×${String(k)}`).join(', ') || 'none'

for (const dialect of testDialects()) {
  describe(`${dialect}: graceful shutdown`, () => {
    it(`SIGTERM under load on ${BUSY} busy and ${LATE} warm keep-alive connections: every request sent before it answered 2xx, new connections refused, no acknowledged write lost, exit 0 within the grace period`, async (t) => {
      const w = await processWorld(t, dialect, 'drain', { SITEGRID_SHUTDOWN_GRACE_MS: String(GRACE_MS) })
      const server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      const headers = { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey, 'content-type': 'application/json' }
      const busyAgent = new Agent({ keepAlive: true, maxSockets: BUSY })
      const lateAgent = new Agent({ keepAlive: true, maxSockets: LATE })
      t.after(() => {
        busyAgent.destroy()
        lateAgent.destroy()
      })
      let writes = 0
      const createSite = (agent: Agent | false, onWritten?: () => void) => {
        const code = `S${++writes}`
        return send(server, agent, headers, 'POST', '/api/sites', { code, name: `Site ${code}`, timeZone: 'UTC' }, onWritten)
      }

      // Warm: each late connection carries one request, then stays idle until its late request.
      const warm = await Promise.all(Array.from({ length: LATE }, () => send(server, lateAgent, headers, 'GET', '/api/sites?limit=20')))
      assert.deepEqual(
        warm.map((o) => o.status),
        warm.map(() => 200),
      )

      const outcomes: Outcome[] = [...warm]
      let exitedAt: number | undefined
      const exited = new Promise<number | null>((resolve) =>
        server.child.once('exit', (code) => {
          exitedAt = performance.now()
          resolve(code)
        }),
      )
      const busy = Array.from({ length: BUSY }, async (_, worker) => {
        for (let i = 0; exitedAt === undefined; i++) {
          const outcome = await (i % 4 === 3 ? createSite(busyAgent) : send(server, busyAgent, headers, 'GET', '/api/sites?limit=20'))
          outcomes.push(outcome)
          if (outcome.error) await sleep(5 + (worker % 5)) // the listener is closed: try again on a new connection, not in a tight loop
        }
      })

      for (let i = 0; i < 1200 && outcomes.filter((o) => o.status).length < ANSWERS_BEFORE_SIGTERM; i++) await sleep(50)
      // The server is paused (SIGSTOP) while the late requests go out, as a server too busy to read its sockets is:
      // when SIGTERM arrives they wait in its sockets' buffers and, on new connections, in its listen backlog.
      server.child.kill('SIGSTOP')
      let lateWritten = 0
      const spread = (i: number, n: number) => sleep((i * LATE_WINDOW_MS) / (n - 1))
      const late = [
        ...Array.from({ length: LATE }, (_, i) => spread(i, LATE).then(() => createSite(lateAgent, () => lateWritten++))),
        ...Array.from({ length: QUEUED }, (_, i) => spread(i, QUEUED).then(() => createSite(false, () => lateWritten++))),
      ]
      await sleep(LATE_WINDOW_MS)
      for (let i = 0; i < 1000 && lateWritten < LATE + QUEUED; i++) await sleep(5) // the last ones are written whole
      const sigtermAt = performance.now()
      server.child.kill('SIGTERM')
      server.child.kill('SIGCONT')
      const code = await exited
      const lateOutcomes = await Promise.all(late)
      outcomes.push(...lateOutcomes)
      await Promise.all(busy)

      const before = outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < sigtermAt)
      const after = outcomes.filter((o) => !before.includes(o))
      const lateBefore = lateOutcomes.filter((o) => before.includes(o))
      const failedBefore = before.filter((o) => !(o.status !== undefined && o.status < 300 && o.complete))
      const badAfter = after.filter((o) => (o.error ? !CONNECTION_FAILURES.has(o.error) : !(o.status! < 300 && o.complete)))
      const refusals = after.filter((o) => o.error === 'ECONNREFUSED')
      const firstRefusalSeenAt = Math.min(...refusals.map((o) => o.endedAt!))
      // Connections opened after a refusal was seen: the listener was closed then, so each must be refused at connect.
      const openedAfterRefusal = after.filter((o) => !o.reused && o.startedAt > firstRefusalSeenAt)
      const acceptedAfterRefusal = openedAfterRefusal.filter((o) => o.error !== 'ECONNREFUSED')
      const drainingAnswers = before.filter((o) => o.connectionClose)
      const resets = after.filter((o) => o.error === 'ECONNRESET' || o.error === 'EPIPE')

      const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.body!.code as string)
      const stored =
        acknowledged.length === 0
          ? []
          : await w.handle.db.selectFrom('sites').select('code').where('org_id', '=', w.orgId).where('code', 'in', acknowledged).execute()
      const committed = await w.handle.db
        .selectFrom('sites')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', w.orgId)
        .executeTakeFirstOrThrow()
      const lost = acknowledged.length - stored.length
      const unanswered = Number(committed.n) - acknowledged.length

      console.log(
        `# shutdown ${dialect}: sent before SIGTERM ${before.length} (${lateBefore.length} of them late: ${LATE} on warm idle keep-alive connections, ${QUEUED} on new connections; ${drainingAnswers.length} answered with Connection: close while draining): ${tally(before.map((o) => o.status ?? o.error))}`,
      )
      console.log(
        `# shutdown ${dialect}: sent after SIGTERM or never written ${after.length}: ${tally(after.map((o) => o.status ?? o.error))}; ${refusals.length} refused at connect, ${resets.filter((o) => !o.reused).length} resets on new connections, ${resets.filter((o) => o.reused).length} on kept-alive ones; ${openedAfterRefusal.length} new connections opened after the first refusal (${acceptedAfterRefusal.length} not refused)`,
      )
      console.log(
        `# shutdown ${dialect}: ${acknowledged.length} writes answered 201, ${lost} missing from the database, ${unanswered} committed without a 2xx answer; exit code ${code} ${(exitedAt! - sigtermAt).toFixed(0)} ms after SIGTERM (grace ${GRACE_MS} ms)`,
      )
      assert.deepEqual(
        failedBefore.map((o) => o.status ?? o.error),
        [],
        'every request sent before SIGTERM got its complete 2xx answer',
      )
      assert.deepEqual(
        badAfter.map((o) => o.status ?? o.error),
        [],
        'a request sent after SIGTERM got a complete 2xx answer or failed at the connection',
      )
      assert.equal(lateBefore.length, LATE + QUEUED, 'the late requests were written before SIGTERM')
      assert.ok(refusals.length > 0, 'new connections were refused after SIGTERM')
      assert.deepEqual(
        acceptedAfterRefusal.map((o) => o.status ?? o.error),
        [],
        'once the listener closed, every new connection is refused at connect',
      )
      assert.equal(lost, 0, 'every acknowledged write is in the database')
      assert.equal(unanswered, 0, 'no write was committed whose answer was lost')
      assert.equal(code, 0, 'drained and exited 0 before the grace period ran out')
    })

    it('an upload still arriving when the grace period ends does not keep the process alive: exit 1', async (t) => {
      const w = await processWorld(t, dialect, 'grace', { SITEGRID_SHUTDOWN_GRACE_MS: '1000', SITEGRID_REQUEST_TIMEOUT_MS: '600000' })
      const server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      // Headers and the first bytes of a body the server waits for: the request stays open.
      const socket = connect(server.port, '127.0.0.1')
      t.after(() => socket.destroy())
      socket.on('error', () => {}) // reset when the process exits: expected
      await new Promise<void>((resolve) => socket.once('connect', resolve))
      socket.write(
        `POST /api/sites HTTP/1.1\r\nhost: ${w.slug}.localhost\r\nx-api-key: ${w.ownerKey}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"code":`,
      )
      await sleep(200)
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)))
      server.child.kill('SIGTERM')
      // Bounded wait (far above the 1 s grace, far below the 600 s request timeout that would end the upload otherwise).
      const code = await Promise.race([exited, sleep(60_000).then(() => 'still running')])
      console.log(`# shutdown ${dialect}: open upload at the end of a 1 s grace: ${code === 'still running' ? 'still running after 60 s' : `exit ${code}`}`)
      assert.equal(code, 1, 'exits 1 when the grace period ends with a request still open')
    })
  })
}
