/**
 * Runs the work given under one key one after another, in the order given; work under different keys runs at once.
 * A failed work does not stop the next. Nothing is kept for a key with no work waiting.
 *
 * At most `maxWaiting` works wait or run at a time in the process, whatever their key: one more is refused at once
 * with `refuse()` (rejected, never run), so a burst cannot grow the queue (and the memory it holds) without bound.
 */
export function createTurns(maxWaiting: number, refuse: () => Error) {
  const tails = new Map<string, Promise<unknown>>()
  let waiting = 0
  return function inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
    if (waiting >= maxWaiting) return Promise.reject(refuse())
    waiting += 1
    const run = (tails.get(key) ?? Promise.resolve()).then(work)
    const tail = run.catch(() => {})
    tails.set(key, tail)
    void tail.then(() => {
      waiting -= 1
      if (tails.get(key) === tail) tails.delete(key)
    })
    return run
  }
}
