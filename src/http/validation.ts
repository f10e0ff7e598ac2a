import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { DomainError } from '../errors/domain-error.ts'
import { describeAjvErrors } from './problem.ts'

// ajv-formats is CommonJS with a default export.
const addFormatsOf = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/**
 * ajv-formats' formats, `date-time` narrowed to what the service can read: RFC 3339 also allows a leap second
 * (`23:59:60`) and ajv-formats an offset of hours alone (`+01`), which `Date.parse` reads as NaN — a value that passed
 * the schema and then failed deep in a module (a 500). Such a value now breaks the format, a 400 naming its field.
 */
function addFormats(ajv: Ajv): Ajv {
  addFormatsOf(ajv)
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean; compare: (a: string, b: string) => number | undefined }
  ajv.addFormat('date-time', {
    type: 'string',
    compare: rfc3339.compare,
    validate: (value: string) => rfc3339.validate(value) && !Number.isNaN(Date.parse(value)),
  })
  return ajv
}

// `verbose`: an error carries the schema that failed, so an enumeration's message names its codes (http/problem.ts).
const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, verbose: true }

/**
 * Bodies are validated strictly (no coercion: `"80"` is not a port) and unknown properties are refused,
 * naming them; query strings and path parameters are text on the wire, so they are coerced to their types, a number
 * only from decimal digits (`decimalNumerals`).
 */
export function installValidators(app: FastifyInstance): void {
  const strict = createBodyValidator()
  const coercing = addFormats(new Ajv({ ...base, coerceTypes: 'array' }))
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict.compile(schema) : decimalNumerals(schema, coercing.compile(schema))))
}

const INTEGER_TEXT = /^-?[0-9]+$/
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/
const NUMERAL_RULE = { integer: 'must be integer, written in decimal digits', number: 'must be number, written in decimal digits' }

/**
 * Ajv coerces any text JavaScript reads as a number (`0x10`, `1e1`, ` 12 `, `1.0` for an integer, `0b11`): a query or
 * path value of an integer or number property (or a list of them) is first checked as text, decimal digits only.
 */
function decimalNumerals(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown; items?: { type?: unknown } }> }).properties ?? {}
  const numeric = Object.entries(properties).flatMap(([name, property]) => {
    const type = property.type === 'array' ? property.items?.type : property.type
    return type === 'integer' || type === 'number' ? [{ name, type: type as 'integer' | 'number' }] : []
  })
  if (numeric.length === 0) return validate
  const checked = ((data: Record<string, unknown> | null) => {
    const errors = numeric
      .filter(({ name, type }) => [data?.[name]].flat().some((v) => typeof v === 'string' && !(type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(v)))
      .map(({ name, type }) => ({ instancePath: `/${name}`, schemaPath: '', keyword: 'type', params: { type }, message: NUMERAL_RULE[type] }))
    if (errors.length > 0) {
      checked.errors = errors
      return false
    }
    const valid = validate(data)
    checked.errors = validate.errors ?? null
    return valid
  }) as ValidateFunction
  return checked
}

/** The validator of request bodies, for a route that reads its body itself (the streamed electrical network load). */
export function createBodyValidator(): Ajv {
  return addFormats(new Ajv({ ...base, coerceTypes: false }))
}

/** A field rule broken, in the API's terms: the field's JSON pointer and the rule. */
export interface RuleBreak {
  pointer: string
  message: string
}

/**
 * The rules of a record as the API keeps them, for records that arrive without a request (a tenant package's rows,
 * the fleet link's changes): `schema`'s errors through the body validator, then — only when the schema holds —
 * `more`, the area's rules the schema cannot state (thrown DomainErrors' field problems count too). Each record
 * answers its first broken rule, or undefined.
 */
export function recordRules<T>(schema: object, more: (record: T) => readonly RuleBreak[] = () => []): (record: unknown) => RuleBreak | undefined {
  const check = createBodyValidator().compile<T>(schema)
  return (record) => {
    // Every error of the record, as a request's would be described: a union of values names all its values.
    if (!check(record)) return describeAjvErrors(check.errors ?? [])[0]
    return firstBreak(() => more(record))
  }
}

/** The first rule `rules` reports broken, or the field of the DomainError it throws (an area's `check…` function). */
export function firstBreak(rules: () => readonly RuleBreak[]): RuleBreak | undefined {
  try {
    return rules()[0]
  } catch (err) {
    const problem = err instanceof DomainError ? err.errors?.[0] : undefined
    if (problem) return { pointer: problem.pointer, message: problem.message }
    throw err
  }
}

/** A stored record's null is an absent field of its body (an optional field, or a nullable one cleared). */
export function withoutNulls(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined))
}
