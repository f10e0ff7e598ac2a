/** Time comes from here so that tests can pin it; never call Date.now() in a service. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** The furthest instant from the epoch a JavaScript Date holds, in ms either way (ECMA-262 §21.4.1.1). */
export const MAX_TIME = 8_640_000_000_000_000
