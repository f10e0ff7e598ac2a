import { isIPv6 } from 'node:net'
import { isCompactTimestamp, isUnitAfter, isVersionBefore, hasCipRouteKeywordBefore } from './redact-context.ts'

/** Kinds in the order they are applied: a CIP route is recognised before its IP link is, an IP before a digit run. */
export const REDACTION_KINDS = ['apiKey', 'cipRoute', 'ip', 'pin'] as const
export type RedactionKind = (typeof REDACTION_KINDS)[number]
export type RedactionCounts = Record<RedactionKind, number>

export const REDACTION_PLACEHOLDERS: Readonly<Record<RedactionKind, string>> = Object.freeze({
  apiKey: '[API_KEY]',
  cipRoute: '[CIP_ROUTE]',
  ip: '[IP]',
  pin: '[PIN]',
})

export interface Redacted {
  readonly text: string
  readonly counts: RedactionCounts
}

// Spec §8: a tenant API key plaintext is `csk_` plus 32 base62 characters.
const API_KEY = /(?<![A-Za-z0-9])csk_[A-Za-z0-9]{32}(?![A-Za-z0-9])/g

const IPV4_TEXT = String.raw`\d{1,3}(?:\.\d{1,3}){3}`
// Never part of a longer dotted or alphanumeric token: `v1.2.3.4` and `1.2.3.4.5` are not addresses.
const IPV4 = new RegExp(String.raw`(?<![\w.])${IPV4_TEXT}(?!\w|\.\d)`, 'g')
// A broad candidate (two colons or more); node:net decides whether it is really an address.
const IPV6 = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f.]*(?:%[0-9A-Za-z_-]+)?(?![\w:])/g

// A CIP route is port,link pairs: port 1 is the backplane, 2+ an Ethernet or extension port; a link is a slot
// number or an IPv4 address (`1,0`, `2,10.0.0.5,1,0`). One space after a comma is tolerated, as integrators paste it.
const CIP_PAIR = String.raw`\d{1,2} ?, ?(?:${IPV4_TEXT}|\d{1,3})`
const CIP_ROUTE = new RegExp(String.raw`(?<![\w.,])${CIP_PAIR}(?: ?, ?${CIP_PAIR})*(?!\w|[.,]\d)`, 'g')

// 6 to 12 digits standing alone: not glued to a word, a decimal, a date separator or a time.
const PIN = /(?<![\w.,/\\-])\d{6,12}(?!\w|[.,:/\\-]\w)/g

function isIPv4(candidate: string): boolean {
  return candidate.split('.').every((octet) => Number(octet) <= 255)
}

function isSensitiveIPv6(candidate: string): boolean {
  const address = candidate.split('%')[0] ?? ''
  if (!isIPv6(address)) return false
  // `a::b`, `::1` and C++-like `Ab::Cd` are valid addresses but say nothing about a plant network.
  const groups = address.split(':').filter((group) => group !== '')
  return groups.length >= 3 || (groups.length === 2 && groups.some((group) => group.length >= 3))
}

function isCipRoute(match: string, before: string): boolean {
  const parts = match.split(',').map((part) => part.trim())
  for (let i = 0; i < parts.length; i += 2) {
    const port = Number(parts[i])
    const link = parts[i + 1] ?? ''
    if (port < 1) return false
    if (link.includes('.') ? !isIPv4(link) : Number(link) > 255) return false
  }
  // With an IP link it cannot be prose; a numbers-only route (`1,0`) also reads as a decimal comma, so it
  // needs a word like `path` or `route` right before it.
  return parts.some((part) => part.includes('.')) || hasCipRouteKeywordBefore(before)
}

type Decide = (match: string, text: string, offset: number) => boolean

const RULES: Readonly<Record<RedactionKind, { pattern: RegExp; decide: Decide }[]>> = {
  apiKey: [{ pattern: API_KEY, decide: () => true }],
  cipRoute: [{ pattern: CIP_ROUTE, decide: (m, text, at) => isCipRoute(m, text.slice(Math.max(0, at - 40), at)) }],
  ip: [
    { pattern: IPV6, decide: (m) => isSensitiveIPv6(m.replace(/\.+$/, '')) },
    { pattern: IPV4, decide: (m, text, at) => isIPv4(m) && !isVersionBefore(text.slice(Math.max(0, at - 20), at)) },
  ],
  pin: [
    {
      pattern: PIN,
      decide: (m, text, at) =>
        !isCompactTimestamp(m) &&
        !isUnitAfter(text.slice(at + m.length, at + m.length + 8)) &&
        !/\b(?:register|modbus)\s*$/i.test(text.slice(Math.max(0, at - 20), at)),
    },
  ],
}

function replaceMatches(text: string, pattern: RegExp, replace: (match: string, offset: number, whole: string) => string): string {
  let out = ''
  let last = 0
  for (const found of text.matchAll(pattern)) {
    out += text.slice(last, found.index) + replace(found[0], found.index, text)
    last = found.index + found[0].length
  }
  return out + text.slice(last)
}

function emptyCounts(): RedactionCounts {
  return { apiKey: 0, cipRoute: 0, ip: 0, pin: 0 }
}

/**
 * Replaces operational-technology secrets with typed placeholders (`[IP]`, `[CIP_ROUTE]`, `[API_KEY]`, `[PIN]`)
 * and counts them per kind. Only the given kinds are touched. When unsure it leaves text alone only for the
 * documented look-alikes (versions, dates, timestamps, decimals, numbers with a unit); otherwise it redacts.
 */
export function redact(text: string, kinds: Iterable<RedactionKind> = REDACTION_KINDS): Redacted {
  const enabled = new Set(kinds)
  const counts = emptyCounts()
  let result = text
  for (const kind of REDACTION_KINDS) {
    if (!enabled.has(kind)) continue
    for (const { pattern, decide } of RULES[kind]) {
      result = replaceMatches(result, pattern, (match, offset, whole) => {
        if (!decide(match, whole, offset)) return match
        counts[kind] += 1
        // A sentence-ending dot after an IPv6 address stays in the text.
        const trailingDots = kind === 'ip' ? (/\.+$/.exec(match)?.[0] ?? '') : ''
        return REDACTION_PLACEHOLDERS[kind] + trailingDots
      })
    }
  }
  return { text: result, counts }
}

export function totalRedactions(counts: RedactionCounts): number {
  return counts.apiKey + counts.cipRoute + counts.ip + counts.pin
}
