import { readFileSync } from 'node:fs'
import { isIPv4, isIPv6 } from 'node:net'
import { isAbsolute } from 'node:path'
import { checkKeys, describe, isRecord, readString } from './config-checks.ts'
import type { Problems } from './config-checks.ts'
import { Secret } from './secret.ts'

const ENV_NAME = { pattern: /^[A-Za-z_][A-Za-z0-9_]*$/, hint: 'is not a valid environment variable name' }

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname)
}

const METADATA_HOSTS = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal'])

function ipv4Octets(address: string): number[] | undefined {
  return isIPv4(address) ? address.split('.').map(Number) : undefined
}

function isInternalIPv4([a = 0, b = 0]: number[]): boolean {
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224
}

function isInternalIPv6(address: string): boolean {
  const lower = address.toLowerCase()
  if (lower === '::' || lower === '::1') return true
  // IPv4-mapped (::ffff:10.0.0.1, which WHATWG URL writes as ::ffff:a00:1): judge the embedded IPv4 address.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower)
  if (mapped) {
    const [hi, lo] = [Number.parseInt(mapped[1]!, 16), Number.parseInt(mapped[2]!, 16)]
    return isInternalIPv4([hi >> 8, hi & 255, lo >> 8, lo & 255])
  }
  const first = Number.parseInt(lower.split(':')[0] || '0', 16)
  // fc00::/7 unique-local (AWS metadata fd00:ec2::254 included), fe80::/10 link-local, ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00
}

/**
 * Loopback, private, link-local (cloud metadata 169.254.169.254), CGNAT, multicast and unspecified addresses,
 * `localhost` and the well-known metadata host names. Only literal addresses are judged: a DNS name is not
 * resolved here.
 */
export function isInternalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost') || METADATA_HOSTS.has(host)) return true
  const v4 = ipv4Octets(host)
  if (v4) return isInternalIPv4(v4)
  const v6 = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  return isIPv6(v6) && isInternalIPv6(v6)
}

/** The provider's base URL, normalised without a trailing slash. */
export function readBaseUrl(
  record: Record<string, unknown>, at: string, problems: Problems, options: { isTrusted: boolean; allowPrivateNetwork: boolean },
): string {
  const { isTrusted, allowPrivateNetwork } = options
  const raw = readString(record, 'baseUrl', at, problems)
  if (raw === '') return ''
  const pointer = `${at}/baseUrl`
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
  if (!allowPrivateNetwork && isInternalHost(url.hostname)) {
    return fail(`${url.hostname} is a loopback, private, link-local or metadata address; set "allowPrivateNetwork": true for an on-premise provider`)
  }
  // An untrusted provider is off site: prompt and key would cross networks we do not control.
  if (!isTrusted && url.protocol === 'http:' && !isLoopback(url.hostname)) {
    return fail('must use https for a provider that is not trusted (only loopback may use http)')
  }
  return url.href.replace(/\/+$/, '')
}

/** Resolves `{ env }` or `{ file }` to a Secret. Problems name the variable or path, never the value. */
export function readApiKey(
  value: unknown, at: string, problems: Problems,
  sources: { readonly env: Readonly<Record<string, string | undefined>>; readonly readFile?: (path: string) => string },
): Secret | undefined {
  const hasOne = isRecord(value) && ('env' in value) !== ('file' in value)
  if (!isRecord(value) || !hasOne) {
    problems.push({ pointer: at, message: `must be { "env": "VAR_NAME" } or { "file": "/absolute/path" }, got ${describe(value)}${isRecord(value) ? ' with ' + (Object.keys(value).join(', ') || 'no keys') : ''}` })
    return undefined
  }
  checkKeys(value, ['env', 'file'], at, problems)
  let plaintext: string | undefined
  let origin: string
  if ('env' in value) {
    const name = readString(value, 'env', at, problems, ENV_NAME)
    if (name === '' || !ENV_NAME.pattern.test(name)) return undefined
    origin = `environment variable ${name}`
    plaintext = sources.env[name]?.trim()
  } else {
    const path = readString(value, 'file', at, problems)
    if (path === '') return undefined
    if (!isAbsolute(path)) {
      problems.push({ pointer: `${at}/file`, message: `"${path}" must be an absolute path` })
      return undefined
    }
    origin = `file ${path}`
    try {
      plaintext = (sources.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(path).trim()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'read error'
      problems.push({ pointer: `${at}/file`, message: `cannot read ${path} (${code})` })
      return undefined
    }
  }
  if (plaintext === undefined || plaintext === '') {
    problems.push({ pointer: at, message: `${origin} is not set or empty` })
    return undefined
  }
  try {
    return new Secret(plaintext)
  } catch {
    problems.push({ pointer: at, message: `the key in ${origin} contains spaces, control or non-ASCII characters` })
    return undefined
  }
}
