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
        socket.end(body.slice(10))
        const { code, signal } = await Promise.race([exited, sleep(30_000).then(() => ({ code: -1, signal: null }))])
        assert.match(answer, /^HTTP\/1\.1 201 /, `the upload's answer: ${answer.slice(0, 200) || 'none'}`)
        assert.deepEqual({ code, signal }, { code: 0, signal: null }, server.output().slice(-2000))
        const site = await w.handle.db.selectFrom('sites').select('code').where('org_id', '=', w.orgId).where('code', '=', 'TWICE-1').executeTakeFirst()
        assert.equal(site?.code, 'TWICE-1')
      })
    }
  })
}
