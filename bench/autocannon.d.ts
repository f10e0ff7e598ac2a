// The few parts of autocannon's programmatic API the benches and tests use (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number
    p50: number
    p99: number
    total?: number
  }
  interface Result {
    requests: Histogram
    latency: Histogram
    non2xx: number
    errors: number
    timeouts: number
    statusCodeStats: Record<string, { count: number }>
  }
  interface RequestSpec {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    /** Called before each send of this request; returns the request to send. */
    setupRequest?: (request: RequestSpec, context: Record<string, unknown>) => RequestSpec
    /** Called with every complete response to this request. */
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
  }
  interface Options {
    url: string
    headers?: Record<string, string>
    connections?: number
    duration?: number
    amount?: number
    method?: string
    body?: string
    requests?: RequestSpec[]
    timeout?: number
    reconnectRate?: number
  }
  interface Instance extends PromiseLike<Result> {
    on(event: 'reqError', listener: (error: Error & { code?: string }) => void): this
    on(event: 'response', listener: (client: unknown, status: number) => void): this
    stop(): void
  }
  export default function autocannon(options: Options): Instance
}
