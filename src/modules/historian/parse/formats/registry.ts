import type { FormatName } from '../types.ts'
import type { FormatAdapter } from './adapter.ts'
import { avevaHistoryFormat } from './aveva-history.ts'
import { citectPaFormat } from './citect-pa.ts'
import { ignitionTallFormat } from './ignition-tall.ts'
import { longFormat } from './long.ts'
import { piconfigFormat } from './piconfig.ts'
import { proficyFormat } from './proficy.ts'
import { wideFormat } from './wide.ts'

/**
 * Every layout, in the order `auto` tries them: the most specific headers first, so an
 * AVEVA or Proficy header (which also has tag, time and value columns) is not taken for
 * `long`, and `wide` (any header over timestamps) comes last.
 */
export const FORMATS: readonly FormatAdapter[] = [proficyFormat, piconfigFormat, ignitionTallFormat, avevaHistoryFormat, citectPaFormat, longFormat, wideFormat]

export function formatByName(name: FormatName): FormatAdapter {
  const adapter = FORMATS.find((f) => f.name === name)
  if (adapter === undefined) throw new TypeError(`unknown format ${name}`)
  return adapter
}
