import { invalidField } from '../../../errors/domain-error.ts'
import { textRule, UTF8_RULE } from '../../../http/input-guard.ts'
import { FORMAT_NAMES } from '../parse/index.ts'
import type { DateOrder, DecimalMark, FormatName, ParseOptions, QualityScale, Separator } from '../parse/index.ts'
import { quoted } from '../../../errors/quoted.ts'

/** A part of the multipart upload, whatever the HTTP library: a text field or a file stream. */
export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; stream: AsyncIterable<Uint8Array> & { truncated?: boolean } }

/** Text parts the upload accepts (besides the two files). */
export const FIELD_NAMES = [
  'site_id',
  'format',
  'force',
  'dryRun',
  'timezone',
  'separator',
  'decimal',
  'dateOrder',
  'qualityScale',
  'sentinels',
  'maxRejections',
] as const
type FieldName = (typeof FIELD_NAMES)[number]

export interface ImportFields {
  siteCode: string
  format: FormatName | 'auto'
  isForced: boolean
  isDryRun: boolean
  /** Undefined: the site's time zone. */
  timezone: string | undefined
  parse: Omit<ParseOptions, 'format' | 'timezone'>
}

const part = (name: string, message: string) => invalidField(`/${name}`, message, 'part')

/** A file part's name as it may be stored: one the database cannot store (NUL, a lone surrogate) is a 400 naming the part. */
export function storableFileName(name: string, filename: string): string {
  const rule = textRule(filename)
  if (rule) throw part(name, `(its file name) ${rule}`)
  // The form's headers are decoded as UTF-8 with U+FFFD for a byte that is not: such a name was stored changed (session 23).
  if (filename.includes('\ufffd')) throw part(name, `(its file name) ${UTF8_RULE}: a byte of it is not UTF-8 (or it holds U+FFFD)`)
  return filename
}

/** The text parts as they arrive: each once, only known names. */
export class FormFields {
  readonly #values = new Map<FieldName, string>()

  add(name: string, value: string): void {
    if (!(FIELD_NAMES as readonly string[]).includes(name))
      throw part(name, `is not a part of this upload; known parts: trend_csv, mapping_csv, ${FIELD_NAMES.join(', ')}`)
    if (this.#values.has(name as FieldName)) throw part(name, 'is sent twice')
    const rule = textRule(value) // NUL or a lone surrogate: refused as in every JSON body (http/input-guard.ts)
    if (rule) throw part(name, rule)
    this.#values.set(name as FieldName, value)
  }

  has(name: FieldName): boolean {
    return this.#values.has(name)
  }

  /** Checks every field; a missing or bad one is a 400 naming the part. */
  read(): ImportFields {
    const get = (name: FieldName) => {
      const v = this.#values.get(name)?.trim()
      return v === '' ? undefined : v
    }
    const siteCode = get('site_id')
    if (siteCode === undefined) throw part('site_id', 'is required: the code of the site the samples belong to')
    const format = get('format')
    if (format === undefined) throw part('format', `is required: auto or one of ${FORMAT_NAMES.join(', ')}`)
    if (format !== 'auto' && !(FORMAT_NAMES as readonly string[]).includes(format))
      throw part('format', `${quoted(format)} is not a known layout; use auto or one of ${FORMAT_NAMES.join(', ')}`)
    const timezone = get('timezone')
    if (timezone !== undefined && !isZone(timezone)) throw part('timezone', `${quoted(timezone)} is not an IANA time zone such as Europe/Paris`)
    const parse: ImportFields['parse'] = {}
    const separator = get('separator')
    if (separator !== undefined) parse.separator = oneOf('separator', separator === 'tab' ? '\t' : separator, [',', ';', '\t'] as Separator[])
    const decimal = get('decimal')
    if (decimal !== undefined) parse.decimal = oneOf('decimal', decimal, ['.', ','] as DecimalMark[])
    if (parse.decimal === ',' && parse.separator === ',') throw part('decimal', "a decimal comma needs a separator other than ','")
    const dateOrder = get('dateOrder')
    if (dateOrder !== undefined) parse.dateOrder = oneOf('dateOrder', dateOrder, ['dmy', 'mdy', 'ymd'] as DateOrder[])
    const qualityScale = get('qualityScale')
    if (qualityScale !== undefined) parse.qualityScale = oneOf('qualityScale', qualityScale, ['percent', 'opc'] as QualityScale[])
    const sentinels = get('sentinels')
    if (sentinels !== undefined) parse.sentinels = readSentinels(sentinels)
    const maxRejections = get('maxRejections')
    if (maxRejections !== undefined) {
      const n = Number(maxRejections)
      if (!Number.isSafeInteger(n) || n < 0 || n > 10_000) throw part('maxRejections', 'must be an integer from 0 to 10000')
      parse.maxRejections = n
    }
    return {
      siteCode,
      format: format as FormatName | 'auto',
      isForced: readBoolean('force', get('force')),
      isDryRun: readBoolean('dryRun', get('dryRun')),
      timezone,
      parse,
    }
  }
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw part(name, `must be one of ${allowed.map((a) => (a === '\t' ? 'tab' : `'${a}'`)).join(', ')}`)
}

function readBoolean(name: string, value: string | undefined): boolean {
  if (value === undefined || value === 'false' || value === '0') return false
  if (value === 'true' || value === '1') return true
  throw part(name, 'must be true or false')
}

/** `-9999,NaN,I/O Timeout`: numeric entries compare as numbers, the others as exact text. */
function readSentinels(value: string): Array<number | string> {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => (/^[-+]?\d+(\.\d+)?$/.test(s) ? Number(s) : s))
}

function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}
