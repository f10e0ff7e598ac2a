import { pipeline, Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'

/**
 * The gunzipped bytes of `gzip`, streamed in constant memory; past `maxInflatedBytes` inflated bytes it stops and
 * throws `tooLarge()`, so a decompression bomb is never inflated whole.
 *
 * Every stream opened here has its errors handled on every path (issue 24): `pipeline` keeps an error listener on
 * the source and the inflater and destroys both when either fails or when the caller stops reading early (a corrupt
 * line, the limit); a gzip error (a bad CRC-32 trailer) met after the caller stopped therefore lands in the
 * pipeline's callback instead of killing the process. A failure while the caller still reads reaches it through the
 * iteration.
 */
export async function* gunzipLimited(gzip: AsyncIterable<Buffer>, maxInflatedBytes: number, tooLarge: () => Error): AsyncGenerator<Buffer> {
  const inflater = createGunzip()
  pipeline(Readable.from(gzip), inflater, () => {}) // errors reach the caller through the iteration below
  let inflated = 0
  // Leaving this loop early (a throw here or in the caller, who stopped reading) destroys the inflater, and the
  // pipeline the source with it.
  for await (const chunk of inflater as AsyncIterable<Buffer>) {
    inflated += chunk.length
    if (inflated > maxInflatedBytes) throw tooLarge()
    yield chunk
  }
}

/**
 * The lines of `bytes` (split at \n, decoded as UTF-8), holding at most `maxLineBytes` of one line: a longer line
 * throws `tooLong()` before more of it is kept, so a file without newlines cannot grow memory. A byte that is not
 * UTF-8 throws `notUtf8(line)` (1-based): decoded, it became U+FFFD, and a package whose checksums were computed over
 * that text imported it changed (session 23). Pieces are decoded as they come (no copy of a line's bytes): young
 * strings go at the next scavenge, where copied buffers would wait for V8's external-memory trigger.
 */
export async function* splitLines(
  bytes: AsyncIterable<Buffer>,
  maxLineBytes: number,
  tooLong: () => Error,
  notUtf8: (line: number) => Error,
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let line = 1
  // `stream`: the piece may end inside a sequence that the next completes; without it, the line ends here.
  const decode = (piece: Uint8Array, stream: boolean) => {
    try {
      return decoder.decode(piece, { stream })
    } catch {
      throw notUtf8(line)
    }
  }
  let pending = ''
  let pendingBytes = 0
  for await (const chunk of bytes) {
    let start = 0
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      if (pendingBytes + newline - start > maxLineBytes) throw tooLong()
      yield pending + decode(chunk.subarray(start, newline), false)
      line++
      pending = ''
      pendingBytes = 0
      start = newline + 1
    }
    if (start === chunk.length) continue
    pendingBytes += chunk.length - start
    if (pendingBytes > maxLineBytes) throw tooLong()
    pending += decode(chunk.subarray(start), true)
  }
  if (pendingBytes > 0) yield pending + decode(new Uint8Array(0), false)
}
