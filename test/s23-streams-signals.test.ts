// Session 23 (streams and shutdown), on a real `sitegrid serve` process: what the signals do to requests on the wire.
// - a second SIGTERM or SIGINT while the server drains (an operator's repeated Ctrl-C, `kill` sent twice, systemd
//   after pkill) does not kill it: the request still arriving is answered, and the process exits 0;
// - an AI completion's event stream open at SIGINT ends with its `error` event, and the process exits 0 at once.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { baseAiConfig, parseSse } from '../src/modules/ai/route-test-setup.ts'
import { startServer } from './cli/process.ts'
import { processWorld } from './hardening/process-support.ts'
import { sleep, testDialects } from './harness.ts'
import { startFakeOpenAi } from './support/fake-openai.ts'
import { waitHealthy } from './support/historian-upload.ts'

for (const dialect of testDialects()) {
  describe(`${dialect}: signals with requests on the wire (sitegrid serve)`, () => {
    for (const [first, second] of [
      ['SIGTERM', 'SIGTERM'],
      ['SIGINT', 'SIGINT'],
    ] as const) {
      it(`${first} then ${second} while an upload is half-sent: the upload is answered 201 and stored, the process exits 0`, async (t) => {
        const w = await processWorld(t, dialect, 'twice', { SITEGRID_SHUTDOWN_GRACE_MS: '20000' })
        const server = await startServer({ cwd: w.cwd, env: w.env })
        t.after(() => server.stop('SIGKILL'))
        await waitHealthy(server)
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          server.child.once('exit', (code, signal) => resolve({ code, signal })),
        )
        const body = JSON.stringify({ code: 'TWICE-1', name: 'Signalled plant' })
        const socket = connect(server.port, '127.0.0.1')
        t.after(() => socket.destroy())
        let answer = ''
        socket.setEncoding('utf8').on('data', (d: string) => {
          answer += d
        })
        socket.on('error', () => {}) // judged by the answer below
        await new Promise<void>((resolve) => socket.once('connect', resolve))
        socket.write(
          `POST /api/sites HTTP/1.1\r\nhost: ${w.slug}.localhost\r\nx-api-key: ${w.ownerKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
        )
        await sleep(300)
        server.child.kill(first)
        await sleep(300)
        server.child.kill(second)
        await sleep(300)
        socket.write(body.slice(10)) // not end(): a client that half-closes its side is aborted by Node's HTTP server
        const { code, signal } = await Promise.race([exited, sleep(30_000).then(() => ({ code: -1, signal: null }))])
        assert.match(answer, /^HTTP\/1\.1 201 /, `the upload's answer: ${answer.slice(0, 200) || 'none'}; ${server.output().slice(-1500)}`)
        assert.deepEqual({ code, signal }, { code: 0, signal: null }, server.output().slice(-2000))
        const site = await w.handle.db.selectFrom('sites').select('code').where('org_id', '=', w.orgId).where('code', '=', 'TWICE-1').executeTakeFirst()
        assert.equal(site?.code, 'TWICE-1')
      })
    }

    it('SIGINT with an AI completion streaming: the stream ends with its error event (503 ServiceUnavailable), its usage is recorded as failed before the database closes, exit 0 at once', async (t) => {
      const box = await startFakeOpenAi()
      const cloud = await startFakeOpenAi()
      t.after(async () => {
        await box.close()
        await cloud.close()
      })
      const dir = mkdtempSync(join(tmpdir(), 'sitegrid-ai-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      writeFileSync(join(dir, 'ai.json'), JSON.stringify(baseAiConfig(box, cloud)))
      const w = await processWorld(t, dialect, 'aistream', { SITEGRID_AI_CONFIG_FILE: join(dir, 'ai.json'), CLOUD_AI_KEY: 'unused' })
      const server = await startServer({ cwd: w.cwd, env: w.env })
      t.after(() => server.stop('SIGKILL'))
      await waitHealthy(server)
      // 30 words, one a second: a completion far longer than the 10 s grace period.
      box.enqueue({ kind: 'ok', chunks: Array.from({ length: 30 }, (_, i) => `word${i} `), chunkDelayMs: 1_000 })
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        server.child.once('exit', (code, signal) => resolve({ code, signal })),
      )
      let sawDelta!: () => void
      const firstDelta = new Promise<void>((resolve) => (sawDelta = resolve))
      const answer = new Promise<{ status: number; body: string; complete: boolean }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: server.port,
            path: '/api/ai/complete',
            method: 'POST',
            agent: false,
            headers: { host: `${w.slug}.localhost`, 'x-api-key': w.ownerKey, 'content-type': 'application/json' },
          },
          (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (d: string) => {
              text += d
              if (text.includes('event: delta')) sawDelta()
            })
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, complete: res.complete }))
            res.on('error', reject)
          },
        )
        req.on('error', reject)
        req.end(JSON.stringify({ prompt: 'Why does the pump cavitate?', stream: true }))
      })
      await firstDelta
      const signalled = performance.now()
      server.child.kill('SIGINT')
      const { status, body, complete } = await answer
      const { code, signal } = await Promise.race([exited, sleep(30_000).then(() => ({ code: -1, signal: null }))])
      const exitedIn = performance.now() - signalled
      assert.equal(status, 200)
      assert.ok(complete, 'the stream ended cleanly, not cut off')
      const events = parseSse(body)
      assert.equal(events.at(0)?.event, 'delta')
      assert.deepEqual(events.at(-1)?.data, { code: 'ServiceUnavailable', status: 503, message: 'The server is shutting down; send the request again.' })
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, server.output().slice(-2000))
      assert.ok(exitedIn < 5_000, `exited ${Math.round(exitedIn)} ms after SIGINT`)
      const rows = await w.handle.db.selectFrom('ai_usage').select(['status', 'error_code']).where('org_id', '=', w.orgId).execute()
      assert.deepEqual(rows, [{ status: 'failed', error_code: 'ServiceUnavailable' }])
    })
  })
}
