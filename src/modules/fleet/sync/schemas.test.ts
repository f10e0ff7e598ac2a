import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify from 'fastify'
import { buildSerializer } from '../../../http/serializer.ts'
import { installValidators } from '../../../http/validation.ts'
import { ConflictListSchema, PullAnswerSchema, PushAnswerSchema, PushBodySchema } from './schemas.ts'
import { change, controllerRow } from './test-support.ts'

/** The wire schemas as routes use them (the app's validators and serializer): what passes, what is refused, what goes out. */
async function wire() {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer } } }).withTypeProvider<TypeBoxTypeProvider>()
  installValidators(app)
  app.post('/push', { schema: { body: PushBodySchema, response: { 200: PushAnswerSchema } } }, async (req) => ({
    mark: { epoch: req.body.epoch, ...(req.body.changes.at(-1) ?? req.body.after) },
    applied: req.body.changes.length,
    skipped: 0,
    conflicts: 0,
  }))
  app.post('/pull', { schema: { body: PushBodySchema, response: { 200: PullAnswerSchema } } }, async (req) => ({
    changes: req.body.changes,
    next: { tx: 3, seq: 9 },
    more: false,
  }))
  app.get('/conflicts', { schema: { response: { 200: ConflictListSchema } } }, async () => ({ items: [], nextCursor: null }))
  await app.ready()
  return app
}

describe('fleet sync wire schemas', () => {
  it('a change crosses the wire unchanged: text, integers, fractions and nulls keep their types', async (t) => {
    const app = await wire()
    t.after(() => app.close())
    const ch = {
      ...change(7, 'controllers', controllerRow('org_AAAAAAAA', 'S1', 'plc1', { name: '1', port: null, cip_path: 'ü «x»' }), { base: 4, tx: 2 }),
      key: ['S1', 'plc1'],
    }
    const withFraction = { ...ch, seq: 8, row: { ...ch.row, timeout_ms: 2.5 } }
    const res = await app.inject({ method: 'POST', url: '/pull', payload: { epoch: 'e', after: { tx: 0, seq: 0 }, changes: [ch, withFraction] } })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { changes: [ch, withFraction], next: { tx: 3, seq: 9 }, more: false })
    const push = await app.inject({ method: 'POST', url: '/push', payload: { epoch: 'e', after: { tx: 0, seq: 0 }, changes: [ch] } })
    assert.deepEqual(push.json(), { mark: { epoch: 'e', tx: 2, seq: 7 }, applied: 1, skipped: 0, conflicts: 0 })
    assert.equal((await app.inject({ method: 'GET', url: '/conflicts' })).statusCode, 200)
  })

  it('refuses a batch beyond its bounds: over 1000 changes, a key of 9 values, a nested value, an unknown op or field', async (t) => {
    const app = await wire()
    t.after(() => app.close())
    const ch = change(1, 'controllers', controllerRow('org_AAAAAAAA', 'S1', 'plc1'))
    const bad: Array<[string, unknown]> = [
      ['1001 changes', { epoch: 'e', after: { tx: 0, seq: 0 }, changes: Array.from({ length: 1001 }, (_, i) => ({ ...ch, seq: i + 1 })) }],
      ['a key of 9 values', { epoch: 'e', after: { tx: 0, seq: 0 }, changes: [{ ...ch, key: [1, 2, 3, 4, 5, 6, 7, 8, 9] }] }],
      ['a nested value', { epoch: 'e', after: { tx: 0, seq: 0 }, changes: [{ ...ch, row: { ...ch.row, name: { x: 1 } } }] }],
      ['an unknown op', { epoch: 'e', after: { tx: 0, seq: 0 }, changes: [{ ...ch, op: 'merge' }] }],
      ['an unknown field', { epoch: 'e', after: { tx: 0, seq: 0 }, changes: [{ ...ch, extra: 1 }] }],
      ['a negative after', { epoch: 'e', after: { tx: 0, seq: -1 }, changes: [] }],
      ['an after of one seq (protocol 1)', { epoch: 'e', after: 7, changes: [] }],
      ['no epoch', { after: { tx: 0, seq: 0 }, changes: [] }],
    ]
    for (const [what, payload] of bad) {
      const res = await app.inject({ method: 'POST', url: '/push', payload: payload as object })
      assert.equal(res.statusCode, 400, what)
    }
  })
})
