// `sitegrid serve`'s log on a terminal: one readable line per record (time, level, message, then the fields as
// key=value), instead of the JSON lines written to a file, a pipe or a journal (there the JSON is left as it is, for
// the collectors). It formats pino's lines after the logger's redaction (http/logger.ts), so no secret reaches it.
import type { DestinationStream } from 'pino'

const LEVELS: Record<number, [name: string, colour: string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '36'],
  30: ['INFO', '32'],
  40: ['WARN', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
}
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v'])

function field(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return JSON.stringify(value)
}

/** One JSON log line as a human line; a line that is not JSON is passed through. */
export function prettyLine(json: string, colour: boolean): string {
  let record: Record<string, unknown>
  try {
    record = JSON.parse(json) as Record<string, unknown>
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`
  }
  const [name, code] = LEVELS[record.level as number] ?? [String(record.level), '0']
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : ''
  const level = colour ? `\u001b[${code}m${name.padEnd(5)}\u001b[0m` : name.padEnd(5)
  const rest = Object.entries(record)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => (k === 'err' && v && typeof v === 'object' && 'stack' in v ? `\n${String((v as { stack: unknown }).stack)}` : `${k}=${field(v)}`))
  return `${time} ${level} ${String(record.msg ?? '')}${rest.length ? ` ${rest.join(' ')}` : ''}\n`
}

/** A destination for the logger writing human lines to `out` (a terminal). */
export function prettyDestination(out: NodeJS.WriteStream): DestinationStream {
  return { write: (line: string) => out.write(prettyLine(line.trimEnd(), out.hasColors?.() ?? false)) }
}
