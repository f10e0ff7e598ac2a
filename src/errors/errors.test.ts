import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { installProblemHandlers, problemTypeUri, toProblem } from '../http/problem.ts'
import { catalog, isErrorCode } from './catalog.ts'
import { DomainError } from './domain-error.ts'

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Every file that declares errors: `errors.ts`, `<part>-errors.ts` and `domain-error.ts`, found by walking src/. */
function errorFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return errorFiles(path)
      return /(^|-)errors?\.ts$/.test(entry.name) ? [path] : []
    })
    .sort()
}

/**
 * Exported error classes that are not domain errors: they never reach the wire as themselves (the OIDC failures end
 * in the uniform 401 or SignInFailed; the historian parser's are turned into domain errors by historian/errors.ts).
 * A new one must be added here on purpose; a class a caller may see is declared with `domainError(code)` instead.
 */
const INTERNAL_ERRORS: Record<string, string[]> = {
  'auth/oidc/errors.ts': [
    'InvalidBearerToken',
    'InvalidIdToken',
    'OidcDiscoveryFailed',
    'JwksFetchFailed',
    'OidcTokenRequestFailed',
    'AuthorizationCallbackRejected',
  ],
  'modules/historian/parse/errors.ts': [
    'HistorianParseError',
    'HistorianHeaderInvalid',
    'HistorianFormatUndetected',
    'HistorianCsvInvalid',
    'HistorianMappingInvalid',
  ],
}

type ErrorClass = (new (...args: never[]) => Error) & { code?: unknown; codes?: unknown }

interface Declared {
  file: string
  name: string
  Cls: ErrorClass
  source: string
}

async function declaredErrorClasses(): Promise<Declared[]> {
  const out: Declared[] = []
  for (const path of errorFiles()) {
    const file = relative(SRC, path).replaceAll('\\', '/')
    const exported = (await import(pathToFileURL(path).href)) as Record<string, unknown>
    for (const [name, value] of Object.entries(exported)) {
      // DomainError itself is the base, not a condition.
      if (typeof value === 'function' && value !== DomainError && value.prototype instanceof Error) {
        out.push({ file, name, Cls: value as ErrorClass, source: readFileSync(path, 'utf8') })
      }
    }
  }
  return out
}

/** The wire codes a domain error class can carry: its static `code` (from `domainError(code)`), or `codes`. */
function codesOf(Cls: ErrorClass): unknown[] {
  if (typeof Cls.code === 'string') return [Cls.code]
  return Array.isArray(Cls.codes) ? Cls.codes : []
}

describe('error catalog', () => {
  it('every code has a 4xx or 5xx status, a title and a documentation text', () => {
    for (const [code, entry] of Object.entries(catalog)) {
      assert.match(code, /^[A-Z][A-Za-z]+$/, code)
      assert.ok(entry.status >= 400 && entry.status <= 599, code)
      assert.ok(entry.title.length > 0 && entry.doc.length > 20, code)
    }
  })

  it('the walk finds every errors.ts of src/', () => {
    const files = errorFiles().map((path) => relative(SRC, path).replaceAll('\\', '/'))
    const knownFiles = [
      'errors/domain-error.ts',
      'http/errors.ts',
      'auth/site-pin/errors.ts',
      'modules/ai/errors.ts',
      'modules/historian/parse/errors.ts',
      'modules/orgs/members-errors.ts',
    ]
    for (const known of knownFiles) {
      assert.ok(files.includes(known), known)
    }
    assert.ok(files.length >= 20, files.join(', '))
  })

  it('every exported error class of an errors.ts is a domain error with catalog codes, or a listed internal error', async () => {
    const declared = await declaredErrorClasses()
    const domain = declared.filter(({ Cls }) => Cls.prototype instanceof DomainError)
    assert.ok(domain.length >= 60, `${domain.length} domain error classes`)
    for (const { file, name, Cls } of declared) {
      const where = `${file}: ${name}`
      if (!(Cls.prototype instanceof DomainError)) {
        assert.ok(INTERNAL_ERRORS[file]?.includes(name), `${where} is no DomainError: declare it with domainError(code), or list it in INTERNAL_ERRORS`)
        continue
      }
      const codes = codesOf(Cls)
      assert.ok(codes.length > 0, `${where} carries no static code: declare it as \`class ${name} extends domainError('Code')\``)
      for (const code of codes) assert.ok(typeof code === 'string' && isErrorCode(code), `${where} → ${String(code)} is not in the catalog`)
    }
  })

  it("a domain error's status and problem come from the catalog: no class states its own", async () => {
    const declared = await declaredErrorClasses()
    for (const { file, source } of declared) {
      assert.doesNotMatch(source, /\bstatus(Code)?\s*[=:]\s*[1-5]\d\d\b/, `${file} states an HTTP status; the catalog gives it`)
    }
    for (const { file, name, Cls } of declared.filter((d) => d.Cls.prototype instanceof DomainError)) {
      for (let proto = Cls.prototype; proto !== DomainError.prototype; proto = Object.getPrototypeOf(proto)) {
        assert.equal(Object.getOwnPropertyDescriptor(proto, 'status'), undefined, `${file}: ${name} overrides status`)
      }
      for (const code of codesOf(Cls) as Array<keyof typeof catalog>) {
        // An instance without running its constructor (whose arguments differ per class): what the handler sees of it.
        const probe = Object.assign(Object.create(Cls.prototype) as DomainError, { code, message: 'detail', errors: undefined, extensions: undefined })
        assert.equal(probe.status, catalog[code].status, `${name}.status`)
        const problem = toProblem(probe)
        const { status, title } = catalog[code]
        assert.deepEqual([problem.status, problem.title, problem.type, problem.code], [status, title, problemTypeUri(code), code], `${name}'s problem`)
      }
    }
  })

  it('every code a domain error carries has its documentation page at the problem type URL', async (t) => {
    const app = Fastify()
    installProblemHandlers(app)
    t.after(() => app.close())
    const declared = await declaredErrorClasses()
    const codes = new Set(declared.flatMap(({ Cls }) => (Cls.prototype instanceof DomainError ? codesOf(Cls) : [])) as Array<keyof typeof catalog>)
    for (const code of codes) {
      const res = await app.inject({ method: 'GET', url: problemTypeUri(code) })
      assert.equal(res.statusCode, 200, code)
      assert.ok(res.body.startsWith(`${code} (${catalog[code].status}): ${catalog[code].title}`), code)
    }
  })
})
