import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import Fastify from 'fastify'
import { createLogger, redactCredentials, requestLogger } from './logger.ts'

const KEY = `csk_${'a1B2'.repeat(8)}`

describe('log lines hold no credential sent in a URL (issue 24, defect 13)', () => {
  it('credential-named query values (any case, - or _, percent-encoded) and csk_ plaintexts anywhere are redacted; other parameters and a key prefix are kept', () => {
    assert.equal(redactCredentials(`/api/sites?api_key=${KEY}&limit=5`), '/api/sites?api_key=[redacted]&limit=5')
    assert.equal(
      redactCredentials('/a?API-KEY=1&Token=2&access_token=3&refresh_token=4&code=5&password=6&pin=7&secret=8&client_secret=9&x=10'),
      '/a?API-KEY=[redacted]&Token=[redacted]&access_token=[redacted]&refresh_token=[redacted]&code=[redacted]&password=[redacted]&pin=[redacted]&secret=[redacted]&client_secret=[redacted]&x=10',
    )
    assert.equal(redactCredentials('/a?api%5Fkey=v&keyword=k&tokens=t&monkey=m'), '/a?api%5Fkey=[redacted]&keyword=k&tokens=t&monkey=m')
    assert.equal(redactCredentials(`/api/sites/${KEY}/x?q=${KEY.replace('_', '%5F')}`), '/api/sites/csk_[redacted]/x?q=csk_[redacted]')
    assert.equal(redactCredentials('{"keyPrefix":"csk_a1B2"}'), '{"keyPrefix":"csk_a1B2"}')
  })

  it('every line the logger writes is redacted, whatever logged it: the request serializer, a message or an error that quotes the URL', () => {
    let out = ''
    const log = createLogger(
      'info',
      new Writable({
        write(chunk, _enc, cb) {
          out += String(chunk)
          cb()
        },
      }),
    )
    log.info({ req: { method: 'GET', url: `/api/sites?apikey=${KEY}`, hostname: 'h' } }, 'incoming request')
    log.info(`Route GET:/api/x?token=t0ps3cret not found`)
    log.error({ err: new Error(`fetch /y?password=hunter2&k=${KEY} failed`) }, 'failed')
    assert.ok(out.includes('"url":"/api/sites?apikey=[redacted]"'))
    for (const secret of [KEY.slice(4), 't0ps3cret', 'hunter2']) assert.equal(out.includes(secret), false, secret)
  })
})

describe("a request's logger is made when it writes (issue 29)", () => {
  it('no pino child for a request that writes nothing at the level; a line written has the request id and is redacted; a level raised later applies', async (t) => {
    let out = ''
    const log = createLogger(
      'warn',
      new Writable({
        write(chunk, _enc, cb) {
          out += String(chunk)
          cb()
        },
      }),
    )
    let children = 0
    const child = log.child.bind(log)
    log.child = ((...args: Parameters<typeof log.child>) => {
      children++
      return child(...args)
    }) as typeof log.child
    const app = Fastify({ loggerInstance: log, childLoggerFactory: requestLogger, genReqId: () => 'req-1' })
    t.after(() => app.close())
    app.get('/quiet', async (request) => {
      request.log.info('below the level')
      return { ok: true }
    })
    app.get('/warns', async (request) => {
      request.log.warn({ body: { apiKey: KEY } }, 'a warning')
      return { ok: true }
    })
    await app.ready()
    children = 0 // Fastify's own at start-up
    assert.equal((await app.inject({ url: '/quiet' })).statusCode, 200)
    assert.equal(children, 0)
    assert.equal(out, '')
    assert.equal((await app.inject({ url: '/warns' })).statusCode, 200)
    assert.equal(children, 1)
    const line = JSON.parse(out.trim()) as Record<string, unknown>
    assert.equal(line.reqId, 'req-1')
    assert.equal(line.msg, 'a warning')
    assert.deepEqual(line.body, { apiKey: '[redacted]' })
    out = ''
    log.level = 'info'
    await app.inject({ url: '/quiet' })
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    assert.deepEqual(
      lines.map((l) => [l.reqId, l.msg]),
      [
        ['req-1', 'incoming request'],
        ['req-1', 'below the level'],
        ['req-1', 'request completed'],
      ],
    )
  })
})
