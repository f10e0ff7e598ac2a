/**
 * The largest magnitude a sample's value may have: 1e100, far past any plant's measurement, so that every statistic a
 * read computes over a bucket stays a finite number on both databases. PostgreSQL refuses a float8 sum or average past
 * ±1.8e308 with an error (its average accumulates squared differences: samples of 1e155 and 3e155 were enough, a 500),
 * SQLite answers Infinity, which no answer can carry; and a mapping's `scale` could take a value past the largest
 * double, stored as Infinity.
 */
export const SAMPLE_VALUE_LIMIT = 1e100

/** The rule a refused value is named with. */
export const SAMPLE_VALUE_RULE = 'a number from -1e100 to 1e100'

/**
 * The smallest magnitude a sample's value other than 0 may have (session 25). PostgreSQL raises an error when a float8
 * product underflows to 0 from factors that are not 0: samples of 5e-324 or 1e-300 (a subnormal, or 5e-324 × scale
 * 1e300 rounding) made every aggregate read of the tag a 500 (`value out of range: underflow`, its squared differences
 * and its time-weighted sums). From 1e-100 on, every difference, square and product a read forms stays a normal number.
 */
const SAMPLE_VALUE_SMALLEST = 1e-100

/** The rule a refused value too close to 0 is named with. */
const SAMPLE_VALUE_SMALL_RULE = '0 or a number at least 1e-100 in magnitude'

/** The rule `value` breaks as a sample's value (NaN and the infinities break the first), or undefined. */
export function sampleValueRule(value: number): string | undefined {
  const magnitude = Math.abs(value)
  if (!(magnitude <= SAMPLE_VALUE_LIMIT)) return SAMPLE_VALUE_RULE
  if (magnitude !== 0 && magnitude < SAMPLE_VALUE_SMALLEST) return SAMPLE_VALUE_SMALL_RULE
  return undefined
}
