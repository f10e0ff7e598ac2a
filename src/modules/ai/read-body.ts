import { MalformedAnswer } from './wire.ts'

/** An answer we parse whole may be this large; error bodies are cut to their first 64 KiB. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024
export const MAX_ERROR_BYTES = 64 * 1024
// A single SSE line longer than this means the server is not sending events.
const MAX_SSE_LINE_CHARS = 1024 * 1024
/** The data lines of one event are held until its blank line: a server that never sends one must not fill memory. */
export const MAX_SSE_EVENT_CHARS = MAX_ANSWER_BYTES

/** The body as text, at most `maxBytes`; `isTruncated` tells whether more was sent. */
export async function readBody(response: Response, maxBytes: number): Promise<{ text: string; isTruncated: boolean }> {
  if (response.body === null) return { text: '', isTruncated: false }
  const reader = response.body.getReader()
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parts.push(value)
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return { text: Buffer.concat(parts).subarray(0, maxBytes).toString('utf8'), isTruncated: true }
    }
  }
  return { text: Buffer.concat(parts).toString('utf8'), isTruncated: false }
}

/**
 * Yields the `data` of each Server-Sent Event (WHATWG HTML §9.2.6: lines joined by \n, comments and other fields
 * ignored). Stopping the iteration early cancels the body, which closes the connection to the provider.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  let dataChars = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true })
      let newline: number
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '')
        buffer = buffer.slice(newline + 1)
        if (line === '') {
          if (data.length > 0) yield data.join('\n')
          data = []
          dataChars = 0
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
          dataChars += line.length
          if (dataChars > MAX_SSE_EVENT_CHARS) throw new MalformedAnswer('an event-stream event is too long')
        }
      }
      if (buffer.length > MAX_SSE_LINE_CHARS) throw new MalformedAnswer('an event-stream line is too long')
      if (done) break
    }
    // Lenient: a server that ends without the final blank line still delivered its last event.
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5))
    if (data.length > 0) yield data.join('\n')
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}
