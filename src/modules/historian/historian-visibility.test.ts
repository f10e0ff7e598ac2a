import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { sleep, testDialects, type Harness } from '../../../test/harness.ts'
import { FLUSH_SAMPLES } from './service/write-pipeline.ts'
import { plant, series, sharedHarness, type Plant } from './test-setup.ts'

const MAPPING = 'historian_tag,instance_id,tag_key\nA,ins_pump,p\n'
const BASE = Date.UTC(2024, 0, 1)
const rows = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, k) => `${new Date(BASE + (from + k) * 1000).toISOString()},A,${from + k}\n`).join('')

/** Polls `probe` every 50 ms until it answers a value; fails (never hangs) after `ms`. */
async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${ms} ms`)
    await sleep(50)
  }
}

/** Rejects after `ms` so an awaited request that never answers fails the test instead of hanging it. */
function bounded<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * A multipart upload over a real loopback socket whose trend file the test writes piece by piece (the app listens
 * on an ephemeral port), and the answer. Every wait on it is bounded; `abort` destroys the socket.
 */
async function slowUpload(h: Harness, p: Plant) {
  if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as AddressInfo
  const boundary = `----sitegrid${randomBytes(8).toString('hex')}`
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/api/historian/import-batches',
    headers: { host: `${p.owner.org.slug}.localhost`, 'x-api-key': p.owner.apiKey!, 'content-type': `multipart/form-data; boundary=${boundary}` },
  })
  const answer = new Promise<{ statusCode: number; body: string }>((resolve, reject) => {
    req.on('error', reject)
    req.on('response', (res) => {
      let body = ''
      res.on('data', (d) => {
        body += String(d)
      })
      res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body }))
      res.on('error', reject)
    })
  })
  answer.catch(() => undefined) // observed by the test through `answer`
  const field = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const file = (name: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"; filename="${name}.csv"\r\ncontent-type: text/csv\r\n\r\n`
  req.write(field('site_id', p.siteCode) + field('format', 'long') + file('mapping_csv') + MAPPING + '\r\n' + file('trend_csv') + 'timestamp,tag,value\n')
  return {
    answer,
    write: (text: string) => {
      req.write(text)
    },
    finish: () => {
      req.end(`\r\n--${boundary}--\r\n`)
    },
    abort: () => {
      if (!req.writableEnded) req.destroy()
    },
  }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: a running batch is invisible`, () => {
    const shared = sharedHarness(dialect)

    it('while an upload is in flight its written samples never show in series, buckets or counts; all show at completion', { timeout: 180_000 }, async () => {
      const h = shared()
      const p = await plant(h)
      const orgId = p.owner.org.id
      const upload = await slowUpload(h, p)
      try {
        // More than one write transaction's worth, so samples are committed while the file is still open.
        const first = FLUSH_SAMPLES + 1_000
        upload.write(rows(0, first))
        const written = await waitFor('the first write transaction', 90_000, async () => {
          const row = await h.handle.db
            .selectFrom('historian_batches')
            .select(['id', 'status', 'samples_stored'])
            .where('org_id', '=', orgId)
            .executeTakeFirst()
          return row !== undefined && Number(row.samples_stored) > 0 ? row : undefined
        })
        assert.equal(written.status, 'running')
        const inTable = await h.handle.db
          .selectFrom('historian_points')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', orgId)
          .executeTakeFirstOrThrow()
        assert.ok(Number(inTable.n) >= FLUSH_SAMPLES, `samples are in the table while running (${inTable.n})`)

        // Reads see none of them.
        const raw = await series(h, p, 'instanceId=ins_pump&tag=p&from=2023-12-31T00:00:00Z&to=2024-01-03T00:00:00Z')
        assert.deepEqual(raw.samples, [])
        const buckets = await series(h, p, 'instanceId=ins_pump&tag=p&bucket=1d&from=2023-12-31T00:00:00Z&to=2024-01-03T00:00:00Z')
        assert.deepEqual(buckets.buckets, [])
        const view = await h.inject(p.member, { method: 'GET', url: `/api/historian/import-batches/${written.id}` })
        assert.equal(view.json().status, 'running')
        assert.equal(view.json().completedAt, null)
        assert.ok(view.json().progress.samplesWritten >= FLUSH_SAMPLES)

        // Completion makes everything visible at once.
        upload.write(rows(first, first + 10))
        upload.finish()
        const res = await bounded('the upload answer', 90_000, upload.answer)
        assert.equal(res.statusCode, 201, res.body)
        assert.equal(JSON.parse(res.body).samplesStored, first + 10)
        const day = await series(h, p, 'instanceId=ins_pump&tag=p&bucket=1d&from=2023-12-31T00:00:00Z&to=2024-01-03T00:00:00Z')
        assert.equal(
          day.buckets.reduce((n, b) => n + (b.count as number), 0),
          first + 10,
        )
      } finally {
        upload.abort()
        await bounded('the aborted upload', 30_000, upload.answer).catch(() => undefined)
      }
    })
  })
}
