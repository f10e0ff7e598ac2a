import type { Separator } from './options.ts'

const CANDIDATES: readonly Separator[] = [',', ';', '\t']

/**
 * Picks the separator that occurs most often outside quotes in a header line; `,` on a tie
 * or when none occurs (a one-column file).
 */
export function detectSeparator(line: string): Separator {
  const counts = [0, 0, 0]
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c === 0x22) quoted = !quoted
    else if (!quoted) {
      if (c === 0x2c) counts[0]! += 1
      else if (c === 0x3b) counts[1]! += 1
      else if (c === 0x09) counts[2]! += 1
    }
  }
  let best = 0
  for (let k = 1; k < 3; k++) if (counts[k]! > counts[best]!) best = k
  return CANDIDATES[best]!
}

/**
 * Finds the first line that can tell the separator: not blank, not a Proficy `*` comment,
 * not a `[Data]` section line. Returns undefined when no such line is complete in `text` yet.
 */
export function findSeparatorLine(text: string, isFinal: boolean): string | undefined {
  let pos = 0
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos)
    if (nl === -1 && !isFinal) return undefined
    const end = nl === -1 ? text.length : nl
    const line = text.slice(pos, end).trim()
    if (line !== '' && !line.startsWith('*') && !/^\[[^\]]*\]$/.test(line)) return line
    pos = end + 1
  }
  return isFinal ? '' : undefined
}
