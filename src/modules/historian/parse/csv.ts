import { firstNonUtf8 } from '../../../http/input-guard.ts'
import { HistorianCsvInvalid } from './errors.ts'
import { readQuotedRow } from './csv-quoted.ts'
import { detectSeparator, findSeparatorLine } from './csv-separator.ts'
import type { Separator } from './options.ts'
import type { ByteSource } from './types.ts'

/** One CSV record: its fields, unquoted, and the 1-based line it starts on. */
export interface CsvRow {
  line: number
  fields: string[]
}

/**
 * The rows a tokenizer cut, in objects reused from one call to the next: a file's rows cost no object each (V8 would
 * pretenure a line of code that creates objects a young collection finds alive; see SampleColumns). A row is valid
 * until the list is cleared; `toArray` copies them out.
 */
export class CsvRows {
  readonly #rows: CsvRow[] = []
  length = 0

  at(i: number): CsvRow {
    return this.#rows[i]!
  }

  /** Starts the next row; returns its fields array (an earlier row's) to be filled from 0 and cut to length. */
  next(line: number): string[] {
    let row = this.#rows[this.length]
    if (row === undefined) this.#rows.push((row = { line, fields: [] }))
    else row.line = line
    this.length++
    return row.fields
  }

  /** Empties the list and keeps its rows for reuse. */
  clear(): void {
    this.length = 0
  }

  /** Copies of the rows, to keep past the next `clear`. */
  toArray(): CsvRow[] {
    const out: CsvRow[] = []
    for (let i = 0; i < this.length; i++) out.push(copyRow(this.#rows[i]!))
    return out
  }
}

export function copyRow(row: CsvRow): CsvRow {
  return { line: row.line, fields: row.fields.slice() }
}

export interface CsvOptions {
  /** Field separator; detected from the first significant line when omitted. */
  separator?: Separator
  /** A row longer than this fails the file (most likely an unterminated quote). Default 1 MiB. */
  maxRowChars?: number
}

const CR = 0x0d
const DEFAULT_MAX_ROW_CHARS = 1 << 20
/**
 * Bytes decoded into one string at a time. A larger chunk (a 256 KiB file read) would become a string too large for
 * V8's young generation: allocated as a large object, it is promoted as soon as a collection finds it alive, and
 * each one then waits for a full collection (measured: ~256 KB promoted at every scavenge of an import).
 */
const DECODE_BYTES = 32 * 1024

/** `chunk` in pieces of at most DECODE_BYTES bytes (a string stays whole). */
export function* piecesOf(chunk: Uint8Array | string): Generator<Uint8Array | string> {
  if (typeof chunk === 'string') {
    yield chunk
    return
  }
  for (let at = 0; at < chunk.length; at += DECODE_BYTES) yield chunk.subarray(at, at + DECODE_BYTES)
}

/**
 * Streaming RFC 4180 tokenizer: `,` `;` or tab separators, quoted fields with doubled quotes
 * and embedded separators or newlines, CRLF or LF, a UTF-8 BOM, a missing final newline,
 * trailing empty fields. Blank lines yield no row but still count for line numbers.
 *
 * Speed: each chunk is decoded once, then rows are cut with `indexOf` and `slice` (never a
 * string built char by char). The next quote and separator positions are cached, so a line
 * without a quote costs a few native searches; only rows holding a quote take the slow path.
 */
export class CsvTokenizer {
  #separator: Separator | undefined
  #pending = ''
  #line = 1
  #isFirstChunk = true
  /** Lines ended by CR alone (classic Mac OS exports); undefined until a line end is seen. */
  #isCrOnly: boolean | undefined
  /** Fatal: a byte that is not UTF-8 is refused naming its line, where it became U+FFFD in the stored text before (session 23). */
  readonly #decoder = new TextDecoder('utf-8', { fatal: true })
  readonly #maxRowChars: number

  constructor(options: CsvOptions = {}) {
    this.#separator = options.separator
    this.#maxRowChars = options.maxRowChars ?? DEFAULT_MAX_ROW_CHARS
  }

  /** The separator in use; undefined until it could be detected. */
  get separator(): Separator | undefined {
    return this.#separator
  }

  /** Appends every row completed by `chunk` to `out` (bytes are decoded a piece at a time: piecesOf). */
  push(chunk: Uint8Array | string, out: CsvRows): void {
    for (const piece of piecesOf(chunk)) this.#feed(this.#decode(piece), false, out)
  }

  /** Flushes the last row (a file without a final newline) into `out`. */
  end(out: CsvRows): void {
    this.#feed(this.#decoded(new Uint8Array(0), false), true, out)
  }

  #decode(chunk: Uint8Array | string): string {
    const isFirst = this.#isFirstChunk
    if (chunk.length > 0) this.#isFirstChunk = false
    if (typeof chunk === 'string') return isFirst && chunk.charCodeAt(0) === 0xfeff ? chunk.slice(1) : chunk
    // 0xFF and 0xFE never occur in UTF-8: a first byte like that is a UTF-16 BOM.
    if (isFirst && (chunk[0] === 0xff || chunk[0] === 0xfe)) {
      throw new HistorianCsvInvalid('The file is UTF-16; export it as UTF-8 (or ASCII) CSV.', 1)
    }
    return this.#decoded(chunk, true)
  }

  #decoded(bytes: Uint8Array, stream: boolean): string {
    try {
      return this.#decoder.decode(bytes, { stream })
    } catch {
      // The byte is in `bytes`, or (a sequence cut short by the file's end) in none: its line counts the ones before it.
      const before = this.#pending + new TextDecoder().decode(bytes.subarray(0, Math.max(0, firstNonUtf8(bytes))))
      const line = this.#line + countNewlines(before, before.length)
      throw new HistorianCsvInvalid('The file is not UTF-8 text (a byte on this line is not UTF-8); export it as UTF-8 (or ASCII) CSV.', line)
    }
  }

  #feed(decoded: string, isFinal: boolean, out: CsvRows): void {
    let text = this.#pending + decoded
    // A file whose lines end in CR alone was one header line holding every row: imported, it stored nothing and said
    // nothing (session 23). Its CRs are read as line ends (a file with any LF keeps CR as a character before LF).
    this.#isCrOnly ??= crOnlyLineEnds(text)
    if (this.#isCrOnly) text = text.replaceAll('\r', '\n')
    // PostgreSQL cannot store NUL in text (a tag name with one failed the import with a 500, an unmapped one every
    // later list of the site's batches), and no CSV export writes it: the file is not text (issue 24, defect 10).
    const nul = decoded.indexOf('\0')
    if (nul !== -1) {
      const line = this.#line + countNewlines(text, this.#pending.length + nul)
      throw new HistorianCsvInvalid('A NUL character (U+0000) is not CSV text; export the file as UTF-8 (or ASCII) CSV.', line)
    }
    if (this.#separator === undefined) {
      const line = findSeparatorLine(text, isFinal || text.length > this.#maxRowChars)
      if (line === undefined) {
        this.#pending = text
        return
      }
      this.#separator = detectSeparator(line)
    }
    const consumed = this.#scan(text, this.#separator, isFinal, out)
    this.#pending = consumed === text.length ? '' : text.slice(consumed)
    if (this.#pending.length > this.#maxRowChars) {
      throw new HistorianCsvInvalid(`The row starting at line ${this.#line} is over ${this.#maxRowChars} characters; is a quote left open?`, this.#line)
    }
  }

  #scan(text: string, sep: Separator, isFinal: boolean, out: CsvRows): number {
    const n = text.length
    const sepCode = sep.charCodeAt(0)
    let line = this.#line
    let pos = 0
    let nextQuote = text.indexOf('"')
    let nextSep = text.indexOf(sep)
    while (pos < n) {
      const nl = text.indexOf('\n', pos)
      const lineEnd = nl === -1 ? n : nl
      if (nextQuote !== -1 && nextQuote < pos) nextQuote = text.indexOf('"', pos)
      if (nextQuote === -1 || nextQuote >= lineEnd) {
        if (nl === -1 && !isFinal) break
        let end = lineEnd
        if (end > pos && text.charCodeAt(end - 1) === CR) end--
        if (end > pos) {
          const fields = out.next(line)
          let count = 0
          let start = pos
          for (;;) {
            if (nextSep !== -1 && nextSep < start) nextSep = text.indexOf(sep, start)
            if (nextSep === -1 || nextSep >= end) break
            fields[count++] = text.slice(start, nextSep)
            start = nextSep + 1
          }
          fields[count++] = text.slice(start, end)
          if (fields.length !== count) fields.length = count
        }
        line++
        pos = lineEnd + 1
        continue
      }
      const row = readQuotedRow(text, pos, sepCode, isFinal)
      if (row === null) {
        if (isFinal) throw new HistorianCsvInvalid(`A quoted field opened on line ${line} never closes.`, line)
        break
      }
      const fields = out.next(line)
      fields.length = 0
      for (const field of row.fields) fields.push(field)
      line += row.newlines
      pos = row.next
    }
    this.#line = line
    return Math.min(pos, n)
  }
}

/** True when `text`'s first line ends in CR alone and it holds no LF; undefined while it holds no line end to tell. */
function crOnlyLineEnds(text: string): boolean | undefined {
  const cr = text.indexOf('\r')
  if (text.includes('\n')) return false
  return cr === -1 || cr + 1 === text.length ? undefined : true
}

function countNewlines(text: string, end: number): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) count++
  return count
}

/** Rows of `source`, one array of rows of their own per input chunk (so per-row async overhead is paid once a chunk). */
export async function* readCsvBatches(source: ByteSource, options: CsvOptions = {}): AsyncGenerator<CsvRow[]> {
  const tokenizer = new CsvTokenizer(options)
  const rows = new CsvRows()
  for await (const chunk of source) {
    tokenizer.push(chunk, rows)
    if (rows.length > 0) yield rows.toArray()
    rows.clear()
  }
  tokenizer.end(rows)
  if (rows.length > 0) yield rows.toArray()
}
