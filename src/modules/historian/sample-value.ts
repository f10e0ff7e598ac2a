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

/** Whether `value` may be stored as a sample's value (NaN and the infinities may not). */
export const isSampleValue = (value: number): boolean => Math.abs(value) <= SAMPLE_VALUE_LIMIT
