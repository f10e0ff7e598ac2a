import type { FormatName } from './types.ts'
import { FORMAT_NAMES } from './types.ts'

export type Separator = ',' | ';' | '\t'
export type DateOrder = 'dmy' | 'mdy' | 'ymd'
export type DecimalMark = '.' | ','
/** How a numeric quality is read: percent good (100 good, 0 bad) or an OPC DA code (192 good). */
export type QualityScale = 'percent' | 'opc'

/**
 * Options of one import batch. Everything but `format` is optional.
 *
 * | option        | default                                                                     |
 * |---------------|-----------------------------------------------------------------------------|
 * | separator     | detected from the first line that is not a `*` comment or `[Section]` line  |
 * | decimal       | `.` in `,`/tab files; in `;` files either `48.5` or `48,5` is accepted       |
 * | timezone      | `UTC`; pass the site's IANA zone, every layout here exports local time       |
 * | dateOrder     | per format, see FORMAT_DEFAULTS                                             |
 * | sentinels     | none                                                                        |
 * | qualityScale  | per format, see FORMAT_DEFAULTS                                             |
 * | maxRejections | 100 kept with reasons in the summary (all are counted)                      |
 * | maxRowChars   | 1 MiB; a longer row (an unterminated quote) fails the file                  |
 */
export interface ParseOptions {
  /** The layout, or `auto` to recognise it from the first lines (the summary says which). */
  format: FormatName | 'auto'
  separator?: Separator
  /**
   * Decimal mark. Thousands separators are always refused, so `1,234.5` and `1.234,5` are
   * rejected whatever the mark. A comma mark needs a `;` or tab separator, or quoted values.
   */
  decimal?: DecimalMark
  /** IANA zone (`Europe/Paris`) for timestamps written without an offset. */
  timezone?: string
  /**
   * Order of an all-numeric date whose year is not first (`01/03/2020`). A year-first
   * date (`2020-03-01`) and a month name (`23-Mar-20`) are read the same under any order;
   * `ymd` refuses the other numeric forms rather than guessing.
   */
  dateOrder?: DateOrder
  /** Values meaning "no sample": numbers compare numerically (`-9999` matches `-9999.000`), strings exactly. */
  sentinels?: readonly (number | string)[]
  qualityScale?: QualityScale
  maxRejections?: number
  maxRowChars?: number
}

export interface FormatDefaults {
  dateOrder: DateOrder
  /** Null where the layout has no free numeric quality column. */
  qualityScale: QualityScale | null
  /** Whether a non-numeric value is kept as a text state (else the row or cell is rejected). */
  textStates: boolean
}

/**
 * Defaults per layout, chosen from each vendor's own export: Hurence/iFIX long files and
 * RESOL loggers write day-first; Ignition and Proficy (`7/20/01 11:07` in GE's docs) write
 * US month-first; AVEVA's SQL `datetime2` is year-first; Citect's docs show `15/06/2004`.
 */
export const FORMAT_DEFAULTS: Readonly<Record<FormatName, FormatDefaults>> = Object.freeze({
  long: { dateOrder: 'dmy', qualityScale: 'percent', textStates: true },
  wide: { dateOrder: 'dmy', qualityScale: null, textStates: false },
  'ignition-tall': { dateOrder: 'mdy', qualityScale: 'opc', textStates: true },
  'aveva-history': { dateOrder: 'ymd', qualityScale: null, textStates: true },
  proficy: { dateOrder: 'mdy', qualityScale: 'percent', textStates: true },
  'citect-pa': { dateOrder: 'dmy', qualityScale: null, textStates: true },
  piconfig: { dateOrder: 'dmy', qualityScale: null, textStates: true },
})

/** Options with every default applied, once the layout and separator are known. */
export interface SettledOptions {
  format: FormatName
  separator: Separator
  /** `either` accepts one `.` or one `,` as the decimal mark. */
  decimal: DecimalMark | 'either'
  timezone: string
  dateOrder: DateOrder
  numericSentinels: ReadonlySet<number>
  textSentinels: ReadonlySet<string>
  qualityScale: QualityScale
  textStates: boolean
  maxRejections: number
}

const SEPARATORS: readonly string[] = [',', ';', '\t']
const DATE_ORDERS: readonly string[] = ['dmy', 'mdy', 'ymd']

/** Checks options when the parse is set up; a bad option is a programmer error (TypeError). */
export function checkOptions(options: ParseOptions): void {
  if (options === null || typeof options !== 'object') throw new TypeError('options must be an object')
  const { format, separator, decimal, timezone, dateOrder, sentinels, qualityScale } = options
  if (format !== 'auto' && !(FORMAT_NAMES as readonly string[]).includes(format)) {
    throw new TypeError(`format must be auto or one of ${FORMAT_NAMES.join(', ')}; got ${String(format)}`)
  }
  if (separator !== undefined && !SEPARATORS.includes(separator)) throw new TypeError('separator must be , ; or a tab')
  if (decimal !== undefined && decimal !== '.' && decimal !== ',') throw new TypeError('decimal must be . or ,')
  if (decimal === ',' && separator === ',') throw new TypeError('decimal , needs a separator other than ,')
  if (dateOrder !== undefined && !DATE_ORDERS.includes(dateOrder)) throw new TypeError('dateOrder must be dmy, mdy or ymd')
  if (qualityScale !== undefined && qualityScale !== 'percent' && qualityScale !== 'opc') {
    throw new TypeError('qualityScale must be percent or opc')
  }
  if (timezone !== undefined) checkTimeZone(timezone)
  for (const s of sentinels ?? []) {
    if (typeof s === 'number' ? !Number.isFinite(s) : typeof s !== 'string' || s === '') {
      throw new TypeError(`sentinels must be finite numbers or non-empty strings; got ${String(s)}`)
    }
  }
  checkPositiveInteger('maxRejections', options.maxRejections, true)
  checkPositiveInteger('maxRowChars', options.maxRowChars, false)
}

/** Applies the defaults of `format`; the separator is the one given or detected. */
export function settleOptions(options: ParseOptions, format: FormatName, separator: Separator): SettledOptions {
  const defaults = FORMAT_DEFAULTS[format]
  const sentinels = options.sentinels ?? []
  return {
    format,
    separator,
    decimal: options.decimal ?? (separator === ',' ? '.' : separator === ';' ? 'either' : '.'),
    timezone: options.timezone ?? 'UTC',
    dateOrder: options.dateOrder ?? defaults.dateOrder,
    numericSentinels: new Set(sentinels.filter((s): s is number => typeof s === 'number')),
    textSentinels: new Set(sentinels.filter((s): s is string => typeof s === 'string')),
    qualityScale: options.qualityScale ?? defaults.qualityScale ?? 'opc',
    textStates: defaults.textStates,
    maxRejections: options.maxRejections ?? 100,
  }
}

function checkTimeZone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
  } catch {
    throw new TypeError(`timezone must be an IANA zone such as Europe/Paris; got ${timezone}`)
  }
}

function checkPositiveInteger(name: string, value: number | undefined, allowZero: boolean): void {
  if (value === undefined) return
  if (!Number.isSafeInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new TypeError(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer`)
  }
}
