/**
 * The answers' counts and durations, kept per series in plain objects found by route, method and status (issue 29,
 * sixth pass): prom-client's `inc` and `observe` validated a labels object and hashed it into a string key on every
 * call, ~1.8 µs a request, which a labelled child does not avoid (prom-client 15). metrics.ts hands them to its
 * counter and histogram at each scrape, in the order the series first appeared, so /metrics reads exactly as if every
 * answer had been observed (metrics.test.ts compares the two).
 */

type RouteMethod = { readonly route: string; readonly method: string }
type RouteMethodStatus = RouteMethod & { readonly status: string }

export interface StatusSeries {
  readonly labels: RouteMethodStatus
  count: number
}

export interface DurationSeries {
  readonly labels: RouteMethod
  count: number
  sum: number
  /** Observations at or below each bound and above the one before it (not cumulative), in the bounds' order. */
  readonly buckets: number[]
}

interface Series extends DurationSeries {
  readonly statuses: Map<number, StatusSeries>
}

export function createAnswerSeries(bounds: readonly number[]) {
  const byRoute = new Map<string, Map<string, Series>>()
  const durations: Series[] = []
  const statuses: StatusSeries[] = []

  function seriesOf(route: string, method: string): Series {
    let byMethod = byRoute.get(route)
    if (!byMethod) byRoute.set(route, (byMethod = new Map()))
    let series = byMethod.get(method)
    if (!series) {
      series = { labels: { route, method }, count: 0, sum: 0, buckets: bounds.map(() => 0), statuses: new Map() }
      byMethod.set(method, series)
      durations.push(series)
    }
    return series
  }

  return {
    /** One answer: its route pattern, method, status and duration in seconds. */
    add(route: string, method: string, status: number, seconds: number): void {
      if (!Number.isFinite(seconds)) throw new TypeError(`an answer's duration must be a finite number of seconds, not ${seconds}`)
      const series = seriesOf(route, method)
      let byStatus = series.statuses.get(status)
      if (!byStatus) {
        byStatus = { labels: { route, method, status: String(status) }, count: 0 }
        series.statuses.set(status, byStatus)
        statuses.push(byStatus)
      }
      byStatus.count += 1
      series.count += 1
      series.sum += seconds
      // prom-client's bucket: the first bound at or above the value; past the last bound only the count (+Inf) has it.
      for (let i = 0; i < bounds.length; i++) {
        if (seconds <= bounds[i]!) {
          series.buckets[i]! += 1
          break
        }
      }
    },
    /** The (route, method, status) series in the order they first appeared. */
    statuses: (): readonly StatusSeries[] => statuses,
    /** The (route, method) series in the order they first appeared. */
    durations: (): readonly DurationSeries[] => durations,
  }
}
