import { statSync } from 'node:fs'
import { UsageError } from './command.ts'
import { Cancelled } from './errors.ts'

/** Where progress goes: stderr, a bar on a terminal and plain lines otherwise. */
export interface ProgressSink {
  isTTY?: boolean
  write(text: string): unknown
}

export interface ProgressOptions {
  /** `historian import trend.csv`: what is in progress. */
  label: string
  /** The bytes to read, when known (a regular file), for the percentage and the ETA. */
  totalBytes: number | null
  /** Counts rows as the lines of what passes (a CSV file); false: bytes alone (a gzip package). */
  isCountingRows: boolean
  sink: ProgressSink
  signal: AbortSignal
  now?: () => number
}

/** A terminal redraws the bar at most this often; elsewhere a plain line is written at most this often. */
const BAR_EVERY_MS = 200
const LINE_EVERY_MS = 5_000
const NEWLINE = 0x0a

/**
 * The progress of one long command (historian import, tenant export, tenant import): `track()` passes a byte stream
 * through, counting it, and stops it with Cancelled once `signal` aborts (Ctrl-C), even while it waits for bytes.
 */
export class Progress {
  readonly #o: ProgressOptions
  readonly #now: () => number
  readonly #started: number
  #bytes = 0
  #rows = 0
  /** The last byte seen: a last line without its newline (e.g. a PI export) is still a line. */
  #lastByte = NEWLINE
  #shownAt = Number.NEGATIVE_INFINITY
  #isBarShown = false

  constructor(options: ProgressOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
    this.#started = this.#now()
    if (!options.sink.isTTY) this.#line(`${options.label}: started${options.totalBytes === null ? '' : `, ${bytes(options.totalBytes)}`}`)
  }

  get bytes(): number {
    return this.#bytes
  }

  /** `source` as it is read, counted; Cancelled as soon as the signal aborts. */
  async *track<T extends Uint8Array>(source: AsyncIterable<T>): AsyncGenerator<T> {
    const { signal } = this.#o
    const iterator = source[Symbol.asyncIterator]()
    let cancelRead: ((err: Error) => void) | undefined
    const onAbort = () => cancelRead?.(new Cancelled())
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      for (;;) {
        if (signal.aborted) throw new Cancelled()
        // A read that waits (a slow disk, a pipe) is given up at once on Ctrl-C.
        const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
          cancelRead = reject
          iterator.next().then(resolve, reject)
        })
        if (next.done) return
        this.add(next.value)
        yield next.value
      }
    } finally {
      signal.removeEventListener('abort', onAbort)
      // A stream is destroyed (its file closed) at once: its iterator's return() would wait for the pending read.
      if (isStream(source)) source.destroy()
      else Promise.resolve(iterator.return?.()).catch(() => {})
    }
  }

  /** Counts a chunk that went through (`track` does it for its source). */
  add(chunk: Uint8Array): void {
    this.#bytes += chunk.length
    if (chunk.length > 0) this.#lastByte = chunk[chunk.length - 1]!
    if (this.#o.isCountingRows) for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) this.#rows += 1
    this.#show(false)
  }

  /** The last line: what was done, in how long. */
  finish(outcome: string): void {
    this.#clearBar()
    const seconds = (this.#now() - this.#started) / 1000
    const lines = this.#rows + (this.#lastByte === NEWLINE ? 0 : 1)
    const rows = this.#o.isCountingRows ? `, ${count(lines)} lines` : ''
    this.#line(`${this.#o.label}: ${outcome}: ${bytes(this.#bytes)}${rows} in ${seconds.toFixed(1)} s`)
  }

  #show(isForced: boolean): void {
    const now = this.#now()
    const tty = this.#o.sink.isTTY === true
    if (!isForced && now - this.#shownAt < (tty ? BAR_EVERY_MS : LINE_EVERY_MS)) return
    this.#shownAt = now
    const seconds = Math.max((now - this.#started) / 1000, 0.001)
    const total = this.#o.totalBytes
    const share = total ? Math.min(this.#bytes / total, 1) : undefined
    const rate = this.#o.isCountingRows ? `${count(Math.round(this.#rows / seconds))} rows/s` : `${bytes(this.#bytes / seconds)}/s`
    const eta = share !== undefined && share > 0 ? `ETA ${duration((seconds * (1 - share)) / share)}` : undefined
    const done = total ? `${bytes(this.#bytes)} / ${bytes(total)}` : bytes(this.#bytes)
    if (tty) {
      const bar = share === undefined ? '' : `[${'#'.repeat(Math.round(share * 24)).padEnd(24, '.')}] ${Math.floor(share * 100)}%  `
      this.#o.sink.write(`\r${this.#o.label}  ${bar}${done}  ${rate}${eta ? `  ${eta}` : ''}\x1b[K`)
      this.#isBarShown = true
      return
    }
    const percent = share === undefined ? '' : ` (${Math.floor(share * 100)}%)`
    this.#line(`${this.#o.label}: ${done}${percent}, ${rate}${eta ? `, ${eta}` : ''}`)
  }

  #clearBar(): void {
    if (!this.#isBarShown) return
    this.#o.sink.write('\r\x1b[K')
    this.#isBarShown = false
  }

  #line(text: string): void {
    this.#o.sink.write(`${text}\n`)
  }
}

/**
 * Runs a long command with Ctrl-C as a clean cancel: the first SIGINT aborts the signal (the command's `track` stops,
 * its service rolls back, main.ts exits 130); a second one quits at once.
 */
export async function cancellable<T>(sink: ProgressSink, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130)
    sink.write('\ncancelling… (Ctrl-C again to quit at once)\n')
    controller.abort()
  }
  process.on('SIGINT', onSigint)
  try {
    return await fn(controller.signal)
  } finally {
    process.off('SIGINT', onSigint)
  }
}

/** A file a long command reads: its size when it is a regular file (the total shown), or a usage error naming it. */
export function fileSize(path: string, option: string): number | null {
  try {
    const stat = statSync(path)
    return stat.isFile() ? stat.size : null
  } catch (err) {
    throw new UsageError(`${option}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

function isStream(source: object): source is { destroy(): void } {
  return typeof (source as { destroy?: unknown }).destroy === 'function'
}

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB']

function bytes(n: number): string {
  let value = n
  let unit = 0
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000
    unit += 1
  }
  return `${unit === 0 ? Math.round(value) : value.toFixed(1)} ${UNITS[unit]}`
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}

function duration(seconds: number): string {
  const s = Math.ceil(seconds)
  return s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}
