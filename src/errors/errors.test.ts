import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { catalog } from './catalog.ts'
import * as domain from './domain-error.ts'
import * as apiKeyErrors from '../modules/api-keys/errors.ts'
import * as orgErrors from '../modules/orgs/errors.ts'

describe('error catalog', () => {
  it('every code has a 4xx or 5xx status, a title and a documentation text', () => {
    for (const [code, entry] of Object.entries(catalog)) {
      assert.match(code, /^[A-Z][A-Za-z]+$/, code)
      assert.ok(entry.status >= 400 && entry.status <= 599, code)
      assert.ok(entry.title.length > 0 && entry.doc.length > 20, code)
    }
  })

  it('every exported domain error class carries a code of the catalog', () => {
    const exported: unknown[] = [...Object.values(domain), ...Object.values(apiKeyErrors), ...Object.values(orgErrors)]
    const classes = exported.filter((v): v is new (...args: never[]) => domain.DomainError => typeof v === 'function' && v.prototype instanceof domain.DomainError)
    assert.ok(classes.length >= 6)
    for (const Cls of classes) {
      const err = new (Cls as unknown as new (a: string) => domain.DomainError)('x')
      assert.ok(Object.hasOwn(catalog, err.code), `${Cls.name} → ${err.code}`)
    }
  })
})
