import { BlockList, isIP } from 'node:net'

// Address classes an outbound call must not reach unless the configuration allows it (SSRF, OWASP API7). This file
// is the one outbound-address guard: the connect-time fetch guard (outbound-fetch.ts) and the AI configuration's
// base-URL check (modules/ai/config-provider.ts) both judge here, each with the coverage it needs (see AddressRules).
// "Internal": "this network", private (RFC 1918, RFC 4193), loopback, link-local (cloud metadata 169.254.169.254 and
// fd00:ec2::254 included), CGNAT (RFC 6598), multicast, reserved/broadcast.
const V4_INTERNAL: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]
const V6_INTERNAL: ReadonlyArray<readonly [string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
]
// "Special": IETF protocol assignments, 6to4 relay, benchmarking and documentation ranges, NAT64 local use, discard,
// Teredo and the deprecated site-local: not on the public Internet either, refused at connect time.
const V4_SPECIAL: ReadonlyArray<readonly [string, number]> = [
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
]
const V6_SPECIAL: ReadonlyArray<readonly [string, number]> = [
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['fec0::', 10],
]

function blockList(v4: ReadonlyArray<readonly [string, number]>, v6: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList()
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4')
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6')
  return list
}
const internal = blockList(V4_INTERNAL, V6_INTERNAL)
const forbidden = blockList([...V4_INTERNAL, ...V4_SPECIAL], [...V6_INTERNAL, ...V6_SPECIAL])

/** Host names that name this machine or a metadata service whatever DNS says (RFC 6761 `localhost`). */
const INTERNAL_NAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal'])

export function isInternalName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  return INTERNAL_NAMES.has(host) || host.endsWith('.localhost')
}

/** 16 bytes of an IPv6 address (`::`, embedded dotted quads and zone ids handled), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  const plain = address.replace(/%.*$/, '')
  if (isIP(plain) !== 6) return undefined
  let text = plain
  const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined]
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return groups.flatMap((g) => {
    const n = Number.parseInt(g, 16)
    return [n >> 8, n & 255]
  })
}

/** The IPv4 address an IPv6 address carries and that routing would reach: mapped, compatible, NAT64, 6to4. */
function embeddedIPv4(bytes: number[], tunnelled: boolean): string | undefined {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0)
  const v4 = (at: number) => bytes.slice(at, at + 4).join('.')
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12) // ::ffff:a.b.c.d
  if (!tunnelled) return undefined
  if (zeros(0, 12) && !zeros(12, 16)) return v4(12) // ::a.b.c.d (deprecated IPv4-compatible)
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return v4(12) // 64:ff9b::/96
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2) // 2002::/16 6to4
  return undefined
}

/** What a caller refuses besides the internal classes, names and IPv4-mapped IPv6 (judged always). */
export interface AddressRules {
  /** Also the special ranges (documentation, benchmarking, Teredo, …). */
  readonly special: boolean
  /** Also judge the IPv4 address an IPv4-compatible, NAT64 or 6to4 address carries. */
  readonly tunnelled: boolean
}

/** The connect-time guard's rules: every class, every embedded IPv4 form. */
export const CONNECT_RULES: AddressRules = Object.freeze({ special: true, tunnelled: true })

/**
 * True for an address that an outbound call must refuse by default: a literal IPv4 or IPv6 address in one of the
 * classes above, including an IPv6 form that embeds such an IPv4 address. A string that is not an IP is refused too.
 */
export function isForbiddenAddress(address: string, rules: AddressRules = CONNECT_RULES): boolean {
  const list = rules.special ? forbidden : internal
  const plain = address.replace(/^\[|\]$/g, '')
  const family = isIP(plain.replace(/%.*$/, ''))
  if (family === 4) return list.check(plain, 'ipv4')
  if (family !== 6) return true
  const bytes = ipv6Bytes(plain)
  if (bytes === undefined || bytes.length !== 16) return true
  const v4 = embeddedIPv4(bytes, rules.tunnelled)
  if (v4 !== undefined && list.check(v4, 'ipv4')) return true
  const canonical = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16)).join(':')
  return list.check(canonical, 'ipv6')
}

/**
 * A URL's host (`url.hostname`, brackets and all) judged without DNS: an internal name (`localhost`, metadata names)
 * or a literal address refused by `rules`. A DNS name is not resolved here (the connect-time guard does that).
 */
export function isInternalHost(hostname: string, rules: AddressRules = CONNECT_RULES): boolean {
  if (isInternalName(hostname)) return true
  const plain = hostname.replace(/^\[|\]$/g, '')
  return isIP(plain) !== 0 && isForbiddenAddress(plain, rules)
}

/** `localhost`, `[::1]` or a literal 127.0.0.0/8 address: where plain http stays on this machine. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname)
}

/** An allow-list of CIDR blocks (`10.20.0.0/16`, `fd12::/64`, a bare address for one host). Throws TypeError on a bad entry. */
export function createAllowList(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList()
  for (const cidr of cidrs) {
    const [net = '', bits] = cidr.split('/')
    const family = isIP(net)
    if (family === 0) throw new TypeError(`"${cidr}" is not an IP address or CIDR block`)
    const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits)
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) throw new TypeError(`"${cidr}" has a bad prefix length`)
    list.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6')
  }
  return (address) => {
    const plain = address.replace(/^\[|\]$/g, '')
    const family = isIP(plain)
    return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6')
  }
}
