import { parseDecimal } from './numbers.ts'
import type { QualityScale } from './options.ts'
import type { Quality } from './types.ts'

// OSIsoft PI system digital states that mean "no valid value" (PI's System state set).
const PI_BAD_STATES = new Set([
  'bad',
  'bad input',
  'bad data',
  'bad quality',
  'bad total',
  'i/o timeout',
  'comm fail',
  'no data',
  'no sample',
  'shutdown',
  'scan off',
  'scan timeout',
  'pt created',
  'calc failed',
  'calc timeout',
  'calc overflow',
  'over range',
  'under range',
  'configure',
  'invalid data',
  'failed',
  'error',
  'intf shut',
  'out of serv',
  'equip fail',
  'access denied',
  'not connect',
  'snapfix',
])
const UNCERTAIN_WORDS = new Set(['uncertain', 'doubtful', 'questionable', 'substituted', 'suspect'])

/**
 * Maps a quality cell to good/uncertain/bad, or undefined when unknown.
 * Text (any case): `good`, `ok`, Ignition `Good_*`; `uncertain`, `Uncertain_*`, `doubtful`,
 * PI `Questionable`/`Substituted`; `bad`, `Bad_*`, Ignition `Error_*`, PI system states.
 * Numbers follow `scale`: percent (100 good, 0 bad, between uncertain) or OPC DA (low byte:
 * 192 and up good, 64-191 uncertain, below 64 bad).
 */
export function qualityFromText(raw: string, scale: QualityScale): Quality | undefined {
  const t = raw.trim().toLowerCase()
  if (t === '') return undefined
  const c = t.charCodeAt(0)
  if ((c >= 0x30 && c <= 0x39) || c === 0x2e) return qualityFromNumber(parseDecimal(t, 'either'), scale)
  if (t === 'good' || t === 'ok' || t.startsWith('good_') || t.startsWith('good ')) return 'good'
  if (UNCERTAIN_WORDS.has(t) || t.startsWith('uncertain_') || t.startsWith('uncertain ')) return 'uncertain'
  if (PI_BAD_STATES.has(t) || t.startsWith('bad_') || t.startsWith('bad ') || t.startsWith('error_')) return 'bad'
  return undefined
}

export function qualityFromNumber(n: number, scale: QualityScale): Quality | undefined {
  if (!Number.isFinite(n) || n < 0) return undefined
  if (scale === 'percent') {
    if (n > 100) return undefined
    return n === 100 ? 'good' : n === 0 ? 'bad' : 'uncertain'
  }
  if (!Number.isInteger(n) || n > 0xffff) return undefined
  // OPC DA: bits 6-7 of the low byte carry the quality; the high byte is vendor-specific.
  const low = n & 0xff
  return low >= 192 ? 'good' : low >= 64 ? 'uncertain' : 'bad'
}

/**
 * AVEVA/Wonderware History: `Quality` is 0 good, 1 bad, 16 doubtful (AVEVA Historian docs);
 * any other Quality falls back to QualityDetail read as OPC (192 good), then to OPCQuality.
 */
export function avevaQuality(quality: string, detail: string, opc: string): Quality | undefined {
  const q = quality.trim()
  if (q === '0') return 'good'
  if (q === '1') return 'bad'
  if (q === '16') return 'uncertain'
  for (const code of [detail.trim(), opc.trim()]) {
    if (code !== '' && code.toUpperCase() !== 'NULL') return qualityFromNumber(Number(code), 'opc')
  }
  return q === '' ? 'good' : undefined
}

/** Memoises `qualityFromText`: an export repeats a handful of quality strings millions of times. */
export class QualityReader {
  readonly #cache = new Map<string, Quality | undefined>()
  readonly #scale: QualityScale

  constructor(scale: QualityScale) {
    this.#scale = scale
  }

  read(raw: string): Quality | undefined {
    let q = this.#cache.get(raw)
    if (q !== undefined || this.#cache.has(raw)) return q
    q = qualityFromText(raw, this.#scale)
    if (this.#cache.size < 1024) this.#cache.set(raw, q)
    return q
  }
}
