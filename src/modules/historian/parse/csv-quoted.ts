const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d

export interface QuotedRow {
  fields: string[]
  /** Index just after the row's terminating newline (or the end of the text). */
  next: number
  /** Newlines consumed, the terminator included, so the caller can keep line numbers. */
  newlines: number
}

/**
 * Reads one RFC 4180 row that contains a quote, from `pos`. Returns null when the row does
 * not end inside `text` and more text may come (`isFinal` false), or, when `isFinal`, when a
 * quoted field never closes. Fields are built from slices; a doubled quote costs one slice.
 * Lenient where RFC 4180 is silent: a quote inside an unquoted field is literal, and text
 * after a closing quote (`"a" b`) is appended to the field.
 */
export function readQuotedRow(text: string, pos: number, sepCode: number, isFinal: boolean): QuotedRow | null {
  const n = text.length
  const fields: string[] = []
  let i = pos
  let newlines = 0
  for (;;) {
    let value: string
    if (i < n && text.charCodeAt(i) === QUOTE) {
      let start = i + 1
      let parts: string[] | null = null
      for (;;) {
        const j = text.indexOf('"', start)
        if (j === -1) return null
        // A quote as the last char may be the first half of "" in the next chunk.
        if (j + 1 >= n && !isFinal) return null
        if (text.charCodeAt(j + 1) === QUOTE) {
          ;(parts ??= []).push(text.slice(start, j + 1))
          start = j + 2
          continue
        }
        const piece = text.slice(start, j)
        value = parts === null ? piece : parts.join('') + piece
        newlines += countNewlines(text, i, j)
        i = j + 1
        break
      }
      const stop = fieldEnd(text, i, sepCode)
      if (stop > i) value += trimCr(text, i, stop)
      i = stop
    } else {
      const stop = fieldEnd(text, i, sepCode)
      value = trimCr(text, i, stop)
      i = stop
    }
    if (i < n && text.charCodeAt(i) === sepCode) {
      fields.push(value)
      i++
      continue
    }
    if (i < n) {
      fields.push(value)
      return { fields, next: i + 1, newlines: newlines + 1 }
    }
    if (!isFinal) return null
    fields.push(value)
    return { fields, next: n, newlines }
  }
}

function fieldEnd(text: string, from: number, sepCode: number): number {
  const n = text.length
  let i = from
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === sepCode || c === LF) return i
    i++
  }
  return n
}

/** Slice [from, to), dropping the CR of a CRLF terminator (or of a final CR). */
function trimCr(text: string, from: number, to: number): string {
  const atLineEnd = to === text.length || text.charCodeAt(to) === LF
  const end = atLineEnd && to > from && text.charCodeAt(to - 1) === CR ? to - 1 : to
  return text.slice(from, end)
}

function countNewlines(text: string, from: number, to: number): number {
  let count = 0
  let k = text.indexOf('\n', from)
  while (k !== -1 && k < to) {
    count++
    k = text.indexOf('\n', k + 1)
  }
  return count
}
