import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import Fastify from 'fastify'
import { domainError, UNAUTHORIZED_DETAIL } from '../errors/domain-error.ts'
import { constantProblem, installProblemHandlers, sendProblem } from './problem.ts'

async function twoRoutes(t: TestContext, id: string) {
  const app = Fastify({ genReqId: () => id })
  t.after(() => app.close())
  const unauthorized = constantProblem('Unauthorized', UNAUTHORIZED_DETAIL)
  app.get('/built', (request, reply) => sendProblem(reply, request, 'Unauthorized', UNAUTHORIZED_DETAIL))
  app.get('/constant', (request, reply) => unauthorized(reply, request))
  app.get('/constant-not-found', (request, reply) => constantProblem('NotFound', 'No "such" resource.')(reply, request))
  app.get('/built-not-found', (request, reply) => sendProblem(reply, request, 'NotFound', 'No "such" resource.'))
  return app
}

describe('problem documents', () => {
  // An id with characters JSON escapes: the request id is joined in as JSON, never pasted raw.
  for (const id of ['d531c338-00000001', 'a "quoted"\\ id\u0001']) {
    it(`a constant problem answers byte for byte what sendProblem answers: status, headers and body (id ${JSON.stringify(id)})`, async (t) => {
      const app = await twoRoutes(t, id)
      for (const [constant, built] of [
        ['/constant', '/built'],
        ['/constant-not-found', '/built-not-found'],
      ] as const) {
        const [a, b] = [await app.inject({ url: constant }), await app.inject({ url: built })]
        assert.equal(a.statusCode, b.statusCode)
        assert.equal(a.body, b.body)
        const { date: _a, ...headersA } = a.headers
        const { date: _b, ...headersB } = b.headers
        assert.deepEqual(headersA, headersB)
        assert.equal(JSON.parse(a.body).instance, id)
      }
    })
  }

  it('a thrown error that says when to come back carries Retry-After on any route; one that does not, none', async (t) => {
    class Busy extends domainError('ServiceUnavailable') {
      constructor(retryAfterSeconds?: number) {
        super('Busy.', { retryAfterSeconds })
      }
    }
    const app = Fastify()
    t.after(() => app.close())
    installProblemHandlers(app)
    app.get('/busy', async () => {
      throw new Busy(7)
    })
    app.get('/down', async () => {
      throw new Busy()
    })
    const busy = await app.inject({ url: '/busy' })
    assert.equal(busy.statusCode, 503)
    assert.equal(busy.headers['retry-after'], '7')
    assert.equal(busy.json().code, 'ServiceUnavailable')
    const down = await app.inject({ url: '/down' })
    assert.equal(down.statusCode, 503)
    assert.equal(down.headers['retry-after'], undefined)
  })
})
