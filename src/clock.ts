/** Time comes from here so that tests can pin it; never call Date.now() in a service. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** The largest instant a JavaScript Date holds, epoch ms (ECMA-262 §21.4.1.1): an `at` beyond it has no date to answer. */
export const MAX_TIME = 8_640_000_000_000_000
