import { isIP } from 'node:net'
import { invalidField } from '../../errors/domain-error.ts'

const MAX_DOMAIN_LENGTH = 253
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * A custom domain as the organisation binds it: a lower-case DNS host name of at least two labels, at most
 * 253 characters and 63 per label, not an IP address, no wildcard, not the base domain nor under it.
 * Upper case is refused rather than folded: the domain is also the resource's name in paths, and one
 * spelling per binding keeps `PATCH …/domains/{domain}` unambiguous. Throws a 400 naming `/domain`.
 */
export function checkDomain(value: string | null, baseDomain: string): string {
  const refuse = (message: string) => invalidField('/domain', message)
  if (value === null) throw refuse('must be a host name, not null')
  if (value.length === 0) throw refuse('must not be empty')
  if (value.length > MAX_DOMAIN_LENGTH) throw refuse(`must be at most ${MAX_DOMAIN_LENGTH} characters`)
  if (value.includes('*')) throw refuse('must not be a wildcard')
  if (isIP(value) !== 0 || isIP(value.replace(/^\[|\]$/g, '')) !== 0) throw refuse('must be a host name, not an IP address')
  if (value !== value.toLowerCase()) throw refuse('must be lower case')
  const labels = value.split('.')
  if (labels.length < 2) throw refuse('must have at least two labels (example.com)')
  for (const label of labels) {
    if (label.length > 63) throw refuse('each label must be at most 63 characters')
    if (!LABEL.test(label)) throw refuse('each label must be 1 to 63 of a-z, 0-9 and -, not starting or ending with -')
  }
  // A numeric top label is an IPv4 address in disguise (RFC 3696 §2); no real TLD is all digits.
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) throw refuse('must be a host name, not an IP address')
  if (value === baseDomain || value.endsWith(`.${baseDomain}`)) throw refuse(`must not be the base domain ${baseDomain} or under it`)
  return value
}
