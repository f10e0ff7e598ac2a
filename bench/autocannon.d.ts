// The few parts of autocannon's programmatic API the benches use (the package ships no types).
declare module 'autocannon' {
  interface Histogram { average: number; p50: number; p99: number }
  interface Result { requests: Histogram; latency: Histogram; non2xx: number; errors: number }
  interface Options { url: string; headers?: Record<string, string>; connections?: number; duration?: number; method?: string; body?: string }
  export default function autocannon(options: Options): Promise<Result>
}
