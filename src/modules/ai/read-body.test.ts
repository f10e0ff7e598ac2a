import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_SSE_EVENT_CHARS, readSseData } from './read-body.ts'
import { MalformedAnswer } from './wire.ts'

/** A body of `chunks` (text), then its end. */
function bodyOf(chunks: Iterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const iterator = chunks[Symbol.iterator]()
  return new ReadableStream({
    pull(controller) {
      const next = iterator.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(next.value))
    },
  })
}

describe('ai provider: reading an event stream', () => {
  it('a provider that sends data lines and never the blank line ending the event is refused once the event passes its bound, not held in memory', async () => {
    const line = `data: ${'x'.repeat(1_000)}\n`
    const lines = 2 * Math.ceil(MAX_SSE_EVENT_CHARS / line.length)
    let sent = 0
    function* chunks() {
      for (; sent < lines; sent += 50) yield line.repeat(50)
    }
    const yielded: number[] = []
    const error = await (async () => {
      for await (const data of readSseData(bodyOf(chunks()))) yielded.push(data.length)
    })().catch((e: unknown) => e)
    assert.ok(error instanceof MalformedAnswer, `refused, not yielded (${yielded.length} events yielded)`)
    assert.deepEqual(yielded, [])
    assert.ok(sent < lines, 'the stream was left before its end')
  })

  it('events under the bound, each ended by its blank line, are yielded whole, multi-line data joined by \\n', async () => {
    const yielded: string[] = []
    for await (const data of readSseData(bodyOf(['data: a\ndata: b\n\n', ': comment\n', 'data: {"c":1}\r\n\r\n']))) yielded.push(data)
    assert.deepEqual(yielded, ['a\nb', '{"c":1}'])
  })
})
