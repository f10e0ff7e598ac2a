// Bucket widths for server-side downsampling of historian series (GET …/historian/series?bucket=). Pure: no DOM.

/** Bucket widths offered to the server, smallest first: aligned, readable units. */
export const NICE_BUCKETS: Array<[ms: number, text: string]> = [
  [1_000, '1s'],
  [2_000, '2s'],
  [5_000, '5s'],
  [10_000, '10s'],
  [15_000, '15s'],
  [30_000, '30s'],
  [60_000, '1m'],
  [120_000, '2m'],
  [300_000, '5m'],
  [600_000, '10m'],
  [900_000, '15m'],
  [1_800_000, '30m'],
  [3_600_000, '1h'],
  [7_200_000, '2h'],
  [10_800_000, '3h'],
  [21_600_000, '6h'],
  [43_200_000, '12h'],
  [86_400_000, '1d'],
  [604_800_000, '7d'],
  [2_592_000_000, '30d'],
]

/** The bucket for `spanMs` drawn over `pixels`: one bucket per pixel at least; null (raw samples) below a second. */
export function bucketFor(spanMs: number, pixels: number): string | null {
  const wanted = spanMs / Math.max(50, pixels)
  if (wanted < 1_000) return null
  return NICE_BUCKETS.find(([ms]) => ms >= wanted)?.[1] ?? `${Math.ceil(wanted / 86_400_000)}d`
}
