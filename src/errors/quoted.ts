/** The most characters of a refused cell or field a reason quotes. */
const QUOTED_LENGTH = 40

/**
 * A value sent to the service as an error or a reason quotes it: whole, or its first characters and how long it is.
 * Reasons are answered, and a historian import keeps up to 10 000 of them in its batch: quoting a row of 1 MiB whole
 * made an import's answer and stored report grow by that much for every rejected row (session 26); a tenant package's
 * part name or format version could be a line of 16 MiB.
 */
export function quoted(text: string): string {
  if (text.length <= QUOTED_LENGTH) return `'${text}'`
  // By code points, so that a pair of surrogates is never cut in two.
  const head = Array.from(text.slice(0, QUOTED_LENGTH + 1))
    .slice(0, QUOTED_LENGTH)
    .join('')
  return `'${head}…' (${text.length} characters)`
}
