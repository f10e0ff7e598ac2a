import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import { Cancelled } from '../../src/cli/errors.ts'
import { Progress } from '../../src/cli/progress.ts'

/** A sink and a clock the test moves by hand. */
function setup(isTTY: boolean, totalBytes: number | null, signal = new AbortController().signal) {
  const written: string[] = []
  let now = 0
  const progress = new Progress({
    label: 'historian import trend.csv',
    totalBytes,
    isCountingRows: true,
    sink: { isTTY, write: (text: string) => written.push(text) },
    signal,
    now: () => now,
  })
  return { written, progress, advance: (ms: number) => (now += ms) }
}

const rows = (n: number) => Buffer.from('2024-01-01T00:00:00Z,tag,1\n'.repeat(n)) // 27 bytes a row

describe('progress of the long commands (src/cli/progress.ts)', () => {
  it('on a terminal: one self-updating bar line with bytes done/total, rows/s and ETA, cleared before the last line', () => {
    const { written, progress, advance } = setup(true, 2700)
    assert.deepEqual(written, [], 'a terminal gets no start line')
    advance(1000)
    progress.add(rows(25))
    assert.equal(written.length, 1)
    assert.equal(written[0], `\rhistorian import trend.csv  [######${'.'.repeat(18)}] 25%  675 B / 2.7 kB  25 rows/s  ETA 3 s\u001b[K`)
    advance(100)
    progress.add(rows(25))
    assert.equal(written.length, 1, 'redrawn at most every 200 ms')
    advance(900)
    progress.add(rows(50))
    assert.match(written[1]!, /^\r.* 100% {2}2\.7 kB \/ 2\.7 kB {2}50 rows\/s\s+ETA 0 s/)
    progress.finish('imported')
    assert.equal(written[2], '\r\x1b[K')
    assert.equal(written[3], 'historian import trend.csv: imported: 2.7 kB, 100 lines in 2.0 s\n')
  })

  it('elsewhere: a plain start line, then a line at most every 5 s, then the last line', () => {
    const { written, progress, advance } = setup(false, 27_000)
    assert.deepEqual(written, ['historian import trend.csv: started, 27.0 kB\n'])
    advance(1000)
    progress.add(rows(100))
    assert.equal(written.length, 2, 'the first chunk is reported')
    assert.equal(written[1], 'historian import trend.csv: 2.7 kB / 27.0 kB (10%), 100 rows/s, ETA 9 s\n')
    advance(4000)
    progress.add(rows(100))
    assert.equal(written.length, 2, 'not again within 5 s')
    advance(1000)
    progress.add(rows(100))
    assert.equal(written.length, 3)
    assert.match(written[2]!, /^historian import trend\.csv: 8\.1 kB \/ 27\.0 kB \(30%\), 50 rows\/s, ETA 14 s\n$/)
    progress.finish('imported')
    assert.equal(written.at(-1), 'historian import trend.csv: imported: 8.1 kB, 300 lines in 6.0 s\n')
  })

  it('the last line counts without its final newline (osisoft_pidata_piconfig.csv has none: 4 lines, not 3)', () => {
    const { written, progress } = setup(false, null)
    progress.add(Buffer.from('a,1,GOOD,23-Mar-20 06:57:23.02055\nb,2,GOOD,23-Mar-20 06:57:24.02055\n'))
    progress.add(Buffer.from('c,3,GOOD,23-Mar-20 06:57:25.02055'))
    progress.add(Buffer.alloc(0))
    progress.finish('checked')
    assert.match(written.at(-1)!, /, 3 lines in /)
  })

  it('an unknown total (a pipe, an export) shows bytes and a rate without a percentage or ETA', () => {
    const { written, progress, advance } = setup(false, null)
    advance(2000)
    progress.add(rows(10))
    assert.deepEqual(written, ['historian import trend.csv: started\n', 'historian import trend.csv: 270 B, 5 rows/s\n'])
  })

  it('Ctrl-C stops a tracked stream with Cancelled, also while it waits for bytes, and closes the stream', async () => {
    const controller = new AbortController()
    const { progress } = setup(false, null, controller.signal)
    const pipe = new PassThrough() // a pipe that sends one line and then nothing
    pipe.write('a\n')
    const seen: string[] = []
    const reading = (async () => {
      for await (const chunk of progress.track(pipe)) {
        seen.push(String(chunk))
        setImmediate(() => controller.abort())
      }
    })()
    await assert.rejects(reading, (err) => err instanceof Cancelled && err.code === 'MalformedBody')
    assert.deepEqual(seen, ['a\n'])
    assert.equal(progress.bytes, 2)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(pipe.destroyed, true)
  })
})
