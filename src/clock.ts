/** Time comes from here so that tests can pin it; never call Date.now() in a service. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }
