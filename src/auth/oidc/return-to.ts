const MAX_RETURN_TO_LENGTH = 2048
const PLACEHOLDER_ORIGIN = 'https://return-to.invalid'

/**
 * The post-login redirect target if it is a safe same-host absolute path (`/sites/A?tab=x`), else undefined.
 * Refused: other hosts and schemes, `//host` and `/\host` (browsers read both as network paths),
 * any backslash, control characters (browsers strip tab and newline, turning `/\t/evil` into `//evil`),
 * an encoded slash or backslash right after the first `/`, and a path that becomes `//host` once its dot segments go.
 */
export function safeReturnTo(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_TO_LENGTH) return undefined
  if (value[0] !== '/' || value[1] === '/') return undefined
  if (value.includes('\\') || hasControlCharacter(value)) return undefined
  if (/^\/%(2f|5c)/i.test(value)) return undefined
  let url: URL
  try {
    url = new URL(value, PLACEHOLDER_ORIGIN)
  } catch {
    return undefined
  }
  if (url.origin !== PLACEHOLDER_ORIGIN) return undefined
  // Dot segments are removed by the parse: `/.//evil.example` and `/%2e//evil.example` come out as `//evil.example`.
  if (url.pathname.startsWith('//')) return undefined
  return `${url.pathname}${url.search}${url.hash}`
}

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
