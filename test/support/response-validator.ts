import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/**
 * A validator of answers (or example bodies) against a schema of the OpenAPI 3.1 document, which is JSON Schema
 * 2020-12 (a tuple is `prefixItems`), or against a TypeBox schema.
 */
export function responseValidator(schema: object): (value: unknown) => string | null {
  const check = addFormats(new Ajv2020({ allErrors: true, strict: false })).compile(schema)
  return (value) => (check(value) ? null : JSON.stringify(check.errors))
}
