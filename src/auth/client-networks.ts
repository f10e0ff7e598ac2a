import { BlockList, isIPv4, isIPv6 } from 'node:net'

/**
 * The client networks an API key is accepted from (issue 30): CIDR blocks, IPv4 or IPv6. A bare address is its own
 * block (/32, /128). Keys store the canonical blocks joined by commas (a comma is in no block).
 */
export function parseNetwork(text: string): string | undefined {
  const [address = '', prefixText, ...rest] = text.trim().split('/')
  if (rest.length > 0) return undefined
  const bits = isIPv4(address) ? 32 : isIPv6(address) ? 128 : 0
  if (bits === 0) return undefined
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined
  const prefix = prefixText === undefined ? bits : Number(prefixText)
  if (prefix > bits) return undefined
  return `${address.toLowerCase()}/${prefix}`
}

/** `::ffff:10.1.2.3` (an IPv4 client on a dual-stack socket) is matched as `10.1.2.3`. */
function unmapped(ip: string): string {
  return ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip
}

/**
 * Whether a client address lies in one of the stored blocks. Built once per verified key (the validator caches it),
 * so a request costs one BlockList lookup. A stored block that does not parse (a package edited by hand) matches nothing.
 */
export function networkMatcher(stored: string): (ip: string) => boolean {
  const list = new BlockList()
  for (const block of stored.split(',')) {
    const canonical = parseNetwork(block)
    if (canonical === undefined) continue
    const [address, prefix] = canonical.split('/') as [string, string]
    list.addSubnet(address, Number(prefix), isIPv4(address) ? 'ipv4' : 'ipv6')
  }
  return (ip) => {
    const client = unmapped(ip)
    if (isIPv4(client)) return list.check(client, 'ipv4')
    return isIPv6(client) && list.check(client, 'ipv6')
  }
}
