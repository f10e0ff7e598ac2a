import fc from 'fast-check'

/** The parts of JSON Schema that our TypeBox request schemas use. */
interface Schema {
  type?: string
  anyOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  minLength?: number
  maxLength?: number
  pattern?: string
  minimum?: number
  maximum?: number
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  propertyNames?: Schema
  maxProperties?: number
  /** A list: a tuple (TypeBox's Tuple), each position its own schema. */
  items?: Schema | Schema[]
  prefixItems?: Schema[]
  maxItems?: number
}

const WRONG = fc.constantFrom<unknown>(null, 0, -1, 1.5, '', 'x', true, [], {}, '1')

/**
 * Bodies generated from a request schema, biased to its edges: lengths and numbers at and just past each bound,
 * optional fields present or not, now and then an unknown property or a value of the wrong type. Most bodies are
 * valid or nearly so, which is where the server's own checks (and its 5xx mistakes) live.
 */
export function arbitraryFromSchema(schema: unknown, options: { wrongTypes?: boolean } = {}): fc.Arbitrary<unknown> {
  const edgy = build(schema as Schema, options.wrongTypes ?? true, 0)
  // Half the bodies keep inside every bound, so the accepting (2xx) path is exercised as often as the refusals.
  return fc.oneof(edgy, buildValid(schema as Schema, 0))
}

/** A tuple's positions: `prefixItems` in the OpenAPI 3.1 document, `items: [...]` in a TypeBox schema (draft 7). */
const tupleOf = (s: Schema): Schema[] | undefined => s.prefixItems ?? (Array.isArray(s.items) ? s.items : undefined)

function buildValid(s: Schema, depth: number): fc.Arbitrary<unknown> {
  if (s.anyOf) return fc.oneof(...s.anyOf.map((a) => buildValid(a, depth)))
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum) return fc.constantFrom(...s.enum)
  switch (s.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'string': {
      if (s.pattern) return fc.stringMatching(new RegExp(s.pattern))
      const min = s.minLength ?? 0
      const max = Math.min(s.maxLength ?? 40, 40)
      return fc.stringMatching(/^[a-z0-9]*$/).map((t) => (t + 'x'.repeat(min)).slice(0, Math.max(min, Math.min(max, t.length))))
    }
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 })
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true })
    case 'array':
      if (tupleOf(s)) return fc.tuple(...tupleOf(s)!.map((item) => buildValid(item, depth + 1)))
      return fc.array(buildValid((s.items as Schema | undefined) ?? {}, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) })
    case 'object': {
      if (s.properties) {
        return fc.record(Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, buildValid(v, depth + 1)])), { requiredKeys: s.required ?? [] })
      }
      const key = fc.stringMatching(/^[a-z]{1,10}$/)
      const value = typeof s.additionalProperties === 'object' ? buildValid(s.additionalProperties, depth + 1) : fc.jsonValue({ maxDepth: 2 })
      return fc.dictionary(key, value, { maxKeys: 4 })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

function build(s: Schema, wrong: boolean, depth: number): fc.Arbitrary<unknown> {
  const valueArb = buildValue(s, wrong, depth)
  return wrong ? fc.oneof({ weight: 12, arbitrary: valueArb }, { weight: 1, arbitrary: WRONG }) : valueArb
}

function buildValue(s: Schema, wrong: boolean, depth: number): fc.Arbitrary<unknown> {
  if (s.anyOf) return fc.oneof(...s.anyOf.map((a) => build(a, wrong, depth)))
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum && s.type !== 'integer') return fc.constantFrom(...s.enum)
  switch (s.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'string':
      return stringArb(s)
    case 'integer':
      return integerArb(s)
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer())
    case 'array':
      if (tupleOf(s)) return fc.tuple(...tupleOf(s)!.map((item) => build(item, wrong, depth + 1)))
      return fc.array(build((s.items as Schema | undefined) ?? {}, wrong, depth + 1), { maxLength: Math.min(s.maxItems ?? 5, 5) })
    case 'object':
      return objectArb(s, wrong, depth)
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

function stringArb(s: Schema): fc.Arbitrary<string> {
  if (s.pattern) {
    return fc.oneof({ weight: 4, arbitrary: fc.stringMatching(new RegExp(s.pattern)) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) })
  }
  const min = s.minLength ?? 0
  const max = s.maxLength ?? 300
  const edges = [min, max, min - 1, max + 1].filter((n) => n >= 0)
  const ofLength = (n: number) =>
    fc.oneof(
      fc.string({ minLength: n, maxLength: n }),
      fc.stringMatching(/^[a-z0-9.-]+$/).map((t) => (t + 'a'.repeat(n)).slice(0, n)),
    )
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min, max: Math.min(max, 40) }).chain(ofLength) },
    { weight: 2, arbitrary: fc.constantFrom(...edges).chain(ofLength) },
  )
}

function integerArb(s: Schema): fc.Arbitrary<number> {
  if (s.enum) {
    const values = s.enum as number[]
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...values) },
      { weight: 1, arbitrary: fc.constantFrom(Math.min(...values) - 1, Math.max(...values) + 1) },
    )
  }
  const min = s.minimum ?? -2_147_483_648
  const max = s.maximum ?? 2_147_483_647
  return fc.oneof({ weight: 3, arbitrary: fc.integer({ min, max }) }, { weight: 2, arbitrary: fc.constantFrom(min - 1, min, max, max + 1) })
}

function objectArb(s: Schema, wrong: boolean, depth: number): fc.Arbitrary<unknown> {
  if (s.properties) {
    const required = new Set(s.required ?? [])
    const record = fc.record(
      Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, build(v, wrong, depth + 1)])),
      // Required fields are left out now and then too.
      { requiredKeys: [] },
    )
    const withRequired = fc.record(Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, build(v, wrong, depth + 1)])), {
      requiredKeys: [...required],
    })
    const base = wrong ? fc.oneof({ weight: 4, arbitrary: withRequired }, { weight: 1, arbitrary: record }) : withRequired
    if (!wrong || s.additionalProperties !== false) return base
    return fc.oneof({ weight: 8, arbitrary: base }, { weight: 1, arbitrary: base.map((o) => ({ ...(o as object), unexpectedField: 1 })) })
  }
  const keyMax = s.propertyNames?.maxLength ?? 20
  const key = fc.oneof(fc.string({ minLength: 0, maxLength: 12 }), fc.constant('k'.repeat(keyMax + 1)), fc.constant('k'.repeat(keyMax)))
  const value = typeof s.additionalProperties === 'object' ? build(s.additionalProperties, wrong, depth + 1) : fc.jsonValue({ maxDepth: depth > 3 ? 0 : 3 })
  return fc.dictionary(key, value, { maxKeys: 6 })
}

/** A validator for a documented response schema (formats checked), for "every 2xx body matches its schema". */
export { responseValidator } from './response-validator.ts'
