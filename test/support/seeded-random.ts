/**
 * A deterministic pseudo-random sequence in [0, 1) from `seed` (a linear congruential generator), for generated
 * networks and data in tests and benches: the same seed gives the same figures and the same failures.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 2 ** 32
  }
}
