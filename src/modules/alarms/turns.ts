/**
 * Runs the work given under one key one after another, in the order given; work under different keys runs at once.
 * A failed work does not stop the next. Nothing is kept for a key with no work waiting.
 */
export function createTurns() {
  const tails = new Map<string, Promise<unknown>>()
  return function inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
    const run = (tails.get(key) ?? Promise.resolve()).then(work)
    const tail = run.catch(() => {})
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return run
  }
}
