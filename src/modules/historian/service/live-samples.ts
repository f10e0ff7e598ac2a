/**
 * The samples of a live push (POST …/historian/samples) as the service takes them, from either body: JSON
 * (`{ samples: [...] }`) or the line format, read here. A sample that cannot be read is a refusal with its index,
 * never a failure of the push.
 *
 * Line format (`text/plain` or `text/csv`, UTF-8): one sample a line, `instance,tagKey,timestamp,value[,quality]`,
 * lines ended by LF or CRLF, empty lines skipped (their index is used by nothing), a byte order mark before the first
 * skipped (as the import's CSV reader does). `timestamp`: integer milliseconds
 * since the Unix epoch, or ISO 8601 with `Z` or an offset. `value`: unquoted, a number (`-12.5`, `1e3`); quoted
 * (`"RUNNING"`), a text state. `quality`: `good`, `uncertain`, `bad` or an OPC DA code 0–255; absent, good. A field
 * holding a comma or a double quote is enclosed in double quotes, a quote inside doubled (`"say ""hi"""`); a field
 * cannot hold a line break (send such a text in JSON). The bounds are the JSON body's: instance 100 characters, tagKey
 * 200, timestamp 40, a text state 1 000; a reason quotes at most 40 characters of a refused field.
 */
import { parseZonedTime } from '../parse/timestamps.ts'
import { MAX_TIME } from '../../../clock.ts'
import { sampleValueRule } from '../sample-value.ts'
import { quoted } from '../../../errors/quoted.ts'

/** A sample read; `index` is its position in the body (the JSON array's, or the line's from 0). */
export interface LiveSample {
  index: number
  instanceId: string
  tagKey: string
  ts: number
  value: number | null
  text: string | null
  /** OPC DA: 192 good, 64 uncertain, 0 bad (store/series-reads.ts). */
  quality: number
}

export interface LiveRefusal {
  index: number
  reason: string
}

export type LiveItem = LiveSample | LiveRefusal

/** The longest text state a sample holds, in either body. */
export const MAX_TEXT_LENGTH = 1000
/** The longest instance id, tag key and timestamp text a sample names, in either body (the JSON schema's bounds). */
export const MAX_INSTANCE_ID_LENGTH = 100
export const MAX_TAG_KEY_LENGTH = 200
export const MAX_TIMESTAMP_LENGTH = 40

export const isRefusal = (item: LiveItem): item is LiveRefusal => 'reason' in item

const QUALITY_NAMES: Readonly<Record<string, number>> = { good: 192, uncertain: 64, bad: 0 }
const INTEGER = /^-?\d{1,16}$/

/** An epoch-ms timestamp's rule: the furthest instants from the epoch a date holds (ECMAScript's time range). */
const EPOCH_RULE = `epoch milliseconds are a whole number from -${MAX_TIME} to ${MAX_TIME}`

/** A timestamp (epoch ms, or ISO 8601 with its offset) in ms, or the reason it is refused. */
export function readTimestamp(raw: string | number): number | string {
  if (typeof raw === 'number') return Number.isInteger(raw) && Math.abs(raw) <= MAX_TIME ? raw : `timestamp ${raw}: ${EPOCH_RULE}`
  if (raw.length > MAX_TIMESTAMP_LENGTH) return `timestamp ${quoted(raw)}: longer than ${MAX_TIMESTAMP_LENGTH} characters`
  if (INTEGER.test(raw)) return Math.abs(Number(raw)) <= MAX_TIME ? Number(raw) : `timestamp '${raw}': ${EPOCH_RULE}`
  const ms = parseZonedTime(raw)
  return Number.isNaN(ms) ? `timestamp '${raw}': epoch milliseconds, or an ISO 8601 date and time that exists, with Z or an offset` : ms
}

/** A quality name or OPC DA code as the stored code, or the reason it is refused. */
export function readQuality(raw: string | number | undefined): number | string {
  if (raw === undefined || raw === '') return 192
  const code = typeof raw === 'number' ? raw : INTEGER.test(raw) ? Number(raw) : QUALITY_NAMES[raw.toLowerCase()]
  if (code === undefined || !Number.isInteger(code) || code < 0 || code > 255)
    return `quality ${quoted(String(raw))}: good, uncertain, bad or an OPC code 0-255`
  return code
}

/** The non-empty lines of a body: how many samples it holds (the batch-size check runs before anything is read). */
export function countLines(body: string): number {
  let n = 0
  for (const line of body.split('\n')) if (line.trim() !== '') n++
  return n
}

/** Reads the line format (module comment). */
export function readLines(body: string): LiveItem[] {
  const items: LiveItem[] = []
  const lines = (body.charCodeAt(0) === 0xfeff ? body.slice(1) : body).split('\n')
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.endsWith('\r') ? lines[index]!.slice(0, -1) : lines[index]!
    if (line.trim() === '') continue
    items.push(readLine(line, index))
  }
  return items
}

function readLine(line: string, index: number): LiveItem {
  // A line without a double quote (the usual: numbers) is its commas' fields as they are, split natively.
  if (line.indexOf('"') === -1) {
    const texts = line.split(',')
    if (texts.length < 4 || texts.length > 5) return { index, reason: `has ${texts.length} fields; instance,tagKey,timestamp,value[,quality]` }
    return readSample(index, texts[0]!, texts[1]!, texts[2]!, texts[3]!, false, texts[4])
  }
  const fields = splitFields(line)
  if (typeof fields === 'string') return { index, reason: fields }
  if (fields.length < 4 || fields.length > 5) return { index, reason: `has ${fields.length} fields; instance,tagKey,timestamp,value[,quality]` }
  const [instance, tag, time, value, quality] = fields as [Field, Field, Field, Field, Field | undefined]
  return readSample(index, instance.text, tag.text, time.text, value.text, value.isQuoted, quality?.text)
}

function readSample(index: number, instanceId: string, tagKey: string, time: string, value: string, isText: boolean, quality: string | undefined): LiveItem {
  if (instanceId === '' || tagKey === '') return { index, reason: 'instance and tagKey must not be empty' }
  if (instanceId.length > MAX_INSTANCE_ID_LENGTH) return { index, reason: `instance ${quoted(instanceId)}: longer than ${MAX_INSTANCE_ID_LENGTH} characters` }
  if (tagKey.length > MAX_TAG_KEY_LENGTH) return { index, reason: `tagKey ${quoted(tagKey)}: longer than ${MAX_TAG_KEY_LENGTH} characters` }
  const ts = readTimestamp(time)
  if (typeof ts === 'string') return { index, reason: ts }
  const code = readQuality(quality)
  if (typeof code === 'string') return { index, reason: code }
  if (isText && value.length > MAX_TEXT_LENGTH) return { index, reason: `the text state is longer than ${MAX_TEXT_LENGTH} characters` }
  if (isText) return { index, instanceId, tagKey, ts, value: null, text: value, quality: code }
  const number = value.trim() === '' ? Number.NaN : Number(value)
  if (!Number.isFinite(number)) return { index, reason: `value ${quoted(value)} is not a finite number (quote a text state)` }
  const valueRule = sampleValueRule(number)
  if (valueRule !== undefined) return { index, reason: `value ${quoted(value)} is not ${valueRule}` }
  return { index, instanceId, tagKey, ts, value: number, text: null, quality: code }
}

interface Field {
  text: string
  isQuoted: boolean
}

/** The comma-separated fields of a line, quoted ones unescaped; or why the line cannot be split. */
function splitFields(line: string): Field[] | string {
  const fields: Field[] = []
  let i = 0
  for (;;) {
    if (line.charCodeAt(i) === 0x22) {
      let text = ''
      let at = i + 1
      for (;;) {
        const quote = line.indexOf('"', at)
        if (quote === -1) return 'a quoted field does not close'
        text += line.slice(at, quote)
        if (line.charCodeAt(quote + 1) !== 0x22) {
          at = quote + 1
          break
        }
        text += '"'
        at = quote + 2
      }
      if (at < line.length && line.charCodeAt(at) !== 0x2c) return 'a quoted field is followed by more than a comma'
      fields.push({ text, isQuoted: true })
      i = at
    } else {
      const comma = line.indexOf(',', i)
      const end = comma === -1 ? line.length : comma
      const text = line.slice(i, end)
      if (text.includes('"')) return 'a double quote inside an unquoted field (quote the field, doubling the quote)'
      fields.push({ text, isQuoted: false })
      i = end
    }
    if (i >= line.length) return fields
    i++ // the comma
    if (i === line.length) {
      fields.push({ text: '', isQuoted: false })
      return fields
    }
  }
}
