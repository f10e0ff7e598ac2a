import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Type } from 'typebox'
import { buildSerializer, nullableScalarsAsTypeLists } from './serializer.ts'

const Item = Type.Object({
  at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when' }),
  count: Type.Union([Type.Null(), Type.Integer()]),
  nested: Type.Array(Type.Object({ note: Type.Union([Type.String(), Type.Null()]) })),
  either: Type.Union([Type.String(), Type.Integer()]),
  objectOrNull: Type.Union([Type.Object({ a: Type.String() }), Type.Null()]),
})

test('a nullable scalar becomes a type list, keeping its format and description, at any depth', () => {
  const out = nullableScalarsAsTypeLists(Item) as { properties: Record<string, Record<string, unknown>> }
  assert.deepEqual(out.properties.at, { type: ['string', 'null'], format: 'date-time', description: 'when' })
  assert.deepEqual(out.properties.count, { type: ['integer', 'null'] })
  const nested = out.properties.nested as { items: { properties: { note: unknown } } }
  assert.deepEqual(nested.items.properties.note, { type: ['string', 'null'] })
})

test('other unions (two scalars, an object or null) are left as they are', () => {
  const out = nullableScalarsAsTypeLists(Item) as { properties: Record<string, { anyOf?: unknown[] }> }
  assert.equal(out.properties.either!.anyOf!.length, 2)
  assert.equal(out.properties.objectOrNull!.anyOf!.length, 2)
})

test('the rewritten schema serialises values and nulls as the original does', () => {
  const serialize = buildSerializer()({ method: 'GET', url: '/x', httpStatus: '200', schema: Item })
  const values = { at: '2026-11-23T00:00:00.000Z', count: 3, nested: [{ note: 'n' }, { note: null }], either: 'e', objectOrNull: { a: 'b' } }
  assert.deepEqual(JSON.parse(serialize(values)), values)
  const nulls = { at: null, count: null, nested: [], either: 2, objectOrNull: null }
  assert.deepEqual(JSON.parse(serialize(nulls)), nulls)
})

test('a nullable array becomes a type list, its items rewritten too, and serialises as the original does', () => {
  const Page = Type.Object({
    rows: Type.Union([Type.Array(Type.Object({ at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) })), Type.Null()]),
  })
  const out = nullableScalarsAsTypeLists(Page) as { properties: { rows: { type: unknown; items: { properties: { at: unknown } } } } }
  assert.deepEqual(out.properties.rows.type, ['array', 'null'])
  assert.deepEqual(out.properties.rows.items.properties.at, { type: ['string', 'null'], format: 'date-time' })
  const serialize = buildSerializer()({ method: 'GET', url: '/x', httpStatus: '200', schema: Page })
  for (const value of [{ rows: [{ at: '2026-11-23T00:00:00.000Z' }, { at: null }] }, { rows: [] }, { rows: null }])
    assert.deepEqual(JSON.parse(serialize(value)), value)
})
