import { Ajv, type Options } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

// `verbose`: an error carries the schema that failed, so an enumeration's message names its codes (http/problem.ts).
const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, verbose: true }

/**
 * Bodies are validated strictly (no coercion: `"80"` is not a port) and unknown properties are refused,
 * naming them; query strings and path parameters are text on the wire, so they are coerced to their types.
 */
export function installValidators(app: FastifyInstance): void {
  const strict = createBodyValidator()
  const coercing = addFormats(new Ajv({ ...base, coerceTypes: 'array' }))
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema))
}

/** The validator of request bodies, for a route that reads its body itself (the streamed electrical network load). */
export function createBodyValidator(): Ajv {
  return addFormats(new Ajv({ ...base, coerceTypes: false }))
}
