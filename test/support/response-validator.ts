import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

export function responseValidator(schema: object): (value: unknown) => string | null {
  const check = addFormats(new Ajv({ allErrors: true, strict: false })).compile(schema)
  return (value) => (check(value) ? null : JSON.stringify(check.errors))
}
