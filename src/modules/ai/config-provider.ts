import { readFileSync } from 'node:fs'
import { isInternalHost, isLoopbackHost, type AddressRules } from '../../http/outbound-address.ts'
import type { Problems } from './config-checks.ts'
import type { ApiKeySource } from './config-schema.ts'
import { Secret } from './secret.ts'

// The configuration check refuses the internal classes (and IPv4-mapped forms) only; the special ranges and tunnelled
// forms (NAT64, 6to4, IPv4-compatible) are left to the connect-time guard, which refuses them for every provider call.
const CONFIG_RULES: AddressRules = Object.freeze({ special: false, tunnelled: false })

/** The provider's base URL (a non-empty string, as the schema checked), normalised without a trailing slash. */
export function checkBaseUrl(raw: string, pointer: string, problems: Problems, options: { isTrusted: boolean; allowPrivateNetwork: boolean }): string {
  const { isTrusted, allowPrivateNetwork } = options
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    problems.push({ pointer, message: 'must be an absolute URL such as https://api.openai.com/v1' })
    return raw
  }
  const fail = (message: string): string => {
    problems.push({ pointer, message })
    return raw
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail(`must use http or https, got ${url.protocol}`)
  // A password in the URL would end up in logs and error texts; the key belongs in apiKey.
  if (url.username !== '' || url.password !== '') return fail('must not contain a user name or password; use apiKey')
  if (url.search !== '' || url.hash !== '') return fail('must not contain a query string or fragment')
  if (/\/chat\/completions\/?$/.test(url.pathname)) return fail('must stop before /chat/completions (e.g. https://api.openai.com/v1)')
  // SSRF: the server must not be pointed into its own network (or a cloud metadata service) by accident.
  if (!allowPrivateNetwork && isInternalHost(url.hostname, CONFIG_RULES)) {
    return fail(`${url.hostname} is a loopback, private, link-local or metadata address; set "allowPrivateNetwork": true for an on-premise provider`)
  }
  // An untrusted provider is off site: prompt and key would cross networks we do not control.
  if (!isTrusted && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return fail('must use https for a provider that is not trusted (only loopback may use http)')
  }
  return url.href.replace(/\/+$/, '')
}

/**
 * Resolves a key source (valid by the schema) to a Secret. Problems name the variable or path, never the value, and
 * read after the source's own problems.
 */
export function resolveApiKey(
  source: ApiKeySource,
  at: string,
  problems: Problems,
  sources: { readonly env: Readonly<Record<string, string | undefined>>; readonly readFile?: (path: string) => string },
): Secret | undefined {
  let plaintext: string | undefined
  let origin: string
  if ('env' in source) {
    origin = `environment variable ${source.env}`
    plaintext = sources.env[source.env]?.trim()
  } else {
    origin = `file ${source.file}`
    try {
      plaintext = (sources.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(source.file).trim()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'read error'
      problems.push({ pointer: `${at}/file`, message: `cannot read ${source.file} (${code})`, orderAt: at })
      return undefined
    }
  }
  if (plaintext === undefined || plaintext === '') {
    problems.push({ pointer: at, message: `${origin} is not set or empty`, orderAt: at })
    return undefined
  }
  try {
    return new Secret(plaintext)
  } catch {
    problems.push({ pointer: at, message: `the key in ${origin} contains spaces, control or non-ASCII characters`, orderAt: at })
    return undefined
  }
}
