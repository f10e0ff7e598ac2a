// Numeric axis labels. Pure: no DOM (tested in ticks.test.ts).

/** The decimals needed to write `step` exactly (0.25 → 2, 5 → 0, 1e-4 → 4), at most 12. */
export function decimalsOf(step: number): number {
  if (!Number.isFinite(step) || step <= 0) return 0
  const text = Number(step.toPrecision(12)).toFixed(12).replace(/0+$/, '')
  return text.split('.')[1]?.length ?? 0
}

/**
 * Labels for axis ticks `splits` spaced `step` apart: as many decimals as the step needs (so ticks near zero do not
 * all read "0"), in the viewer's locale, and never "-0" (a tick that rounds to zero is zero).
 */
export function tickLabels(splits: number[], step: number, locale?: string): string[] {
  const decimals = decimalsOf(step)
  const format = new Intl.NumberFormat(locale, { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
  return splits.map((v) => (v == null ? '' : format.format(Number(v.toFixed(decimals)) || 0)))
}
