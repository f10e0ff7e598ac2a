/** An (instance, tag) pair: one series of the site. */
export interface SeriesPair {
  instanceId: string
  tagKey: string
}

/** The pairs an import meets, numbered from 0 in order of first sample; buffer rows refer to a pair by its number. */
export class SeriesPairs {
  readonly list: SeriesPair[] = []
  /** By instance, then tag key: no key string joined (and hashed) a sample. */
  readonly #numbers = new Map<string, Map<string, number>>()

  number(instanceId: string, tagKey: string): number {
    let tags = this.#numbers.get(instanceId)
    if (tags === undefined) this.#numbers.set(instanceId, (tags = new Map()))
    let n = tags.get(tagKey)
    if (n === undefined) {
      n = this.list.length
      tags.set(tagKey, n)
      this.list.push({ instanceId, tagKey })
    }
    return n
  }
}

const INITIAL_CAPACITY = 1024

/**
 * Samples waiting for the next write, as typed columns that grow once and are reused from write to write (an import
 * keeps one filling, and the parts of the chunk being written and of the one before). Numbers in typed arrays are not objects: a chunk of samples
 * leaves no garbage behind to be promoted and collected later, which is what raised the process's memory before.
 * Text states are rare: their column exists only in a buffer that has met one.
 */
export class SampleBuffer {
  readonly pairs: SeriesPairs
  length = 0
  pair = new Int32Array(INITIAL_CAPACITY)
  ts = new Float64Array(INITIAL_CAPACITY)
  values = new Float64Array(INITIAL_CAPACITY)
  hasValue = new Uint8Array(INITIAL_CAPACITY)
  qualities = new Uint8Array(INITIAL_CAPACITY)
  #texts: Array<string | null> | undefined
  /** When this buffer is one lane's part of a chunk: each row's index in the whole chunk (collisions are listed in file order). */
  origin: Int32Array | undefined

  constructor(pairs: SeriesPairs) {
    this.pairs = pairs
  }

  push(pair: number, ts: number, value: number | null, text: string | null, quality: number): void {
    const i = this.length
    if (i === this.ts.length) this.#grow()
    this.pair[i] = pair
    this.ts[i] = ts
    this.hasValue[i] = value === null ? 0 : 1
    this.values[i] = value ?? 0
    this.qualities[i] = quality
    if (text !== null) (this.#texts ??= new Array<string | null>(this.ts.length).fill(null))[i] = text
    else if (this.#texts !== undefined) this.#texts[i] = null
    this.length = i + 1
  }

  value(i: number): number | null {
    return this.hasValue[i] === 1 ? this.values[i]! : null
  }

  text(i: number): string | null {
    return this.#texts?.[i] ?? null
  }

  /** Empties the buffer and keeps its capacity. */
  clear(): void {
    this.length = 0
    this.#texts = undefined
  }

  /**
   * Copies the rows into `lanes[pair % lanes.length]` in their order, recording each row's index here in the lane's
   * `origin`: a pair's samples all land in one lane. The lanes are emptied first; this buffer is left as it is.
   */
  splitInto(lanes: SampleBuffer[]): void {
    for (const lane of lanes) {
      lane.clear()
      if (lane.origin === undefined || lane.origin.length < this.length) lane.origin = new Int32Array(Math.max(this.length, INITIAL_CAPACITY))
    }
    for (let i = 0; i < this.length; i++) {
      const lane = lanes[this.pair[i]! % lanes.length]!
      lane.origin![lane.length] = i
      lane.push(this.pair[i]!, this.ts[i]!, this.value(i), this.text(i), this.qualities[i]!)
    }
  }

  #grow(): void {
    const capacity = this.ts.length * 2
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity)
      next.set(old)
      return next
    }
    this.pair = grown(this.pair, (n) => new Int32Array(n))
    this.ts = grown(this.ts, (n) => new Float64Array(n))
    this.values = grown(this.values, (n) => new Float64Array(n))
    this.hasValue = grown(this.hasValue, (n) => new Uint8Array(n))
    this.qualities = grown(this.qualities, (n) => new Uint8Array(n))
    if (this.#texts !== undefined) this.#texts.length = capacity
  }

  /**
   * Keeps the last of samples sharing a pair and a timestamp (the file's later row wins). PostgreSQL refuses an
   * upsert that touches one row twice in a statement, and both dialects must count the same, so this runs always.
   * The usual file (each series' timestamps rising) is recognised in one pass without building a key per sample.
   * Answers how many samples it dropped (the import counts them as duplicates in the file).
   */
  dedupe(): number {
    const n = this.length
    const { pair, ts } = this
    const last = new Map<number, number>()
    let rising = true
    for (let i = 0; i < n; i++) {
      const before = last.get(pair[i]!)
      if (before !== undefined && ts[i]! <= before) {
        rising = false
        break
      }
      last.set(pair[i]!, ts[i]!)
    }
    if (rising) return 0
    const seen = new Map<number, Map<number, number>>()
    let unique = 0
    for (let i = 0; i < n; i++) {
      let times = seen.get(pair[i]!)
      if (times === undefined) seen.set(pair[i]!, (times = new Map()))
      if (!times.has(ts[i]!)) unique++
      times.set(ts[i]!, i)
    }
    if (unique === n) return 0
    const keep = new Uint8Array(n)
    for (const times of seen.values()) for (const i of times.values()) keep[i] = 1
    let w = 0
    for (let i = 0; i < n; i++) {
      if (keep[i] !== 1) continue
      this.pair[w] = this.pair[i]!
      this.ts[w] = this.ts[i]!
      this.values[w] = this.values[i]!
      this.hasValue[w] = this.hasValue[i]!
      this.qualities[w] = this.qualities[i]!
      if (this.#texts !== undefined) this.#texts[w] = this.#texts[i]!
      w++
    }
    this.length = w
    return n - w
  }
}
