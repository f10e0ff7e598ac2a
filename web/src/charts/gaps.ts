// Where a trend line breaks. Pure: no DOM (tested in gaps.test.ts).

/** Neighbouring points further apart than this many times the series' median spacing are not joined. */
export const GAP_FACTOR = 5

/** The spacing (in x units) above which two neighbouring points are not joined: GAP_FACTOR × the median spacing, at least one bucket. */
export function gapThreshold(xs: number[], bucket: number): number {
  const steps = xs
    .slice(1)
    .map((x, i) => x - xs[i]!)
    .sort((a, b) => a - b)
  const median = steps.length === 0 ? 0 : steps[Math.floor((steps.length - 1) / 2)]!
  return Math.max(bucket, GAP_FACTOR * median)
}

/** The columns `[xs, ...ys]` with a row of nulls inserted in every gap wider than `threshold`, so that uPlot breaks the line there. */
export function withGaps(columns: [number[], ...Array<Array<number | null>>], threshold: number): [number[], ...Array<Array<number | null>>] {
  const [xs, ...ys] = columns
  const outXs: number[] = []
  const outYs = ys.map((): Array<number | null> => [])
  xs.forEach((x, i) => {
    if (i > 0 && x - xs[i - 1]! > threshold) {
      outXs.push((x + xs[i - 1]!) / 2)
      for (const column of outYs) column.push(null)
    }
    outXs.push(x)
    ys.forEach((column, s) => outYs[s]!.push(column[i] ?? null))
  })
  return [outXs, ...outYs]
}

/**
 * The indices of `values` whose neighbours (skipping `undefined`, which uPlot's join leaves where another series
 * has a point) are gaps or the ends: a line draws nothing there, so these get a point mark.
 */
export function isolatedPoints(values: ArrayLike<number | null | undefined>): number[] {
  const neighbour = (i: number, step: 1 | -1) => {
    for (let j = i + step; j >= 0 && j < values.length; j += step) if (values[j] !== undefined) return values[j]
    return null
  }
  const out: number[] = []
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v !== null && v !== undefined && neighbour(i, -1) === null && neighbour(i, 1) === null) out.push(i)
  }
  return out
}
