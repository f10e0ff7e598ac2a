import { isIP } from 'node:net'

/** An IPv4 or IPv6 address, or a DNS host name (RFC 1123 labels, 1 to 253 characters). */
export function isAddressOrHostName(value: string): boolean {
  if (isIP(value) !== 0) return true
  if (value.length > 253) return false
  // A dotted all-numeric name (999.1.1.1, 10.0.0) is a mistyped IPv4 address, never a host name.
  if (/^[0-9.]+$/.test(value)) return false
  const labels = value.endsWith('.') ? value.slice(0, -1).split('.') : value.split('.')
  return labels.every((l) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(l))
}
