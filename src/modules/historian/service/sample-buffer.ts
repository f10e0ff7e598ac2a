/** Samples waiting for the next write, as columns: one array per column costs far less than an object per sample. */
export class SampleBuffer {
  instanceIds: string[] = []
  tagKeys: string[] = []
  ts: number[] = []
  values: Array<number | null> = []
  texts: Array<string | null> = []
  qualities: number[] = []

  get length(): number {
    return this.ts.length
  }

  push(instanceId: string, tagKey: string, ts: number, value: number | null, text: string | null, quality: number): void {
    this.instanceIds.push(instanceId)
    this.tagKeys.push(tagKey)
    this.ts.push(ts)
    this.values.push(value)
    this.texts.push(text)
    this.qualities.push(quality)
  }

  clear(): void {
    this.instanceIds = []
    this.tagKeys = []
    this.ts = []
    this.values = []
    this.texts = []
    this.qualities = []
  }

  /**
   * Keeps the last of samples sharing instance, tag and timestamp (the file's later row wins). PostgreSQL refuses an
   * upsert that touches one row twice in a statement, and both dialects must count the same, so this runs always.
   * `ids` numbers the (instance, tag) pairs one to one (the series ids; without it, numbers local to the buffer);
   * answers them for the rows kept. The usual file (each series' timestamps rising) is recognised in one pass
   * without building a key per sample.
   */
  dedupe(ids: Int32Array = this.#pairNumbers()): Int32Array {
    const n = this.length
    const ts = this.ts
    const last = new Map<number, number>()
    let rising = true
    for (let i = 0; i < n; i++) {
      const id = ids[i]!
      const before = last.get(id)
      if (before !== undefined && ts[i]! <= before) {
        rising = false
        break
      }
      last.set(id, ts[i]!)
    }
    if (rising) return ids
    const seen = new Map<number, Map<number, number>>()
    let unique = 0
    for (let i = 0; i < n; i++) {
      let times = seen.get(ids[i]!)
      if (times === undefined) seen.set(ids[i]!, (times = new Map()))
      if (!times.has(ts[i]!)) unique++
      times.set(ts[i]!, i)
    }
    if (unique === n) return ids
    const keep = new Uint8Array(n)
    for (const times of seen.values()) for (const i of times.values()) keep[i] = 1
    const pick = <T>(column: T[]) => column.filter((_, i) => keep[i] === 1)
    this.instanceIds = pick(this.instanceIds)
    this.tagKeys = pick(this.tagKeys)
    this.ts = pick(this.ts)
    this.values = pick(this.values)
    this.texts = pick(this.texts)
    this.qualities = pick(this.qualities)
    return ids.filter((_, i) => keep[i] === 1)
  }

  /** A number per (instance, tag) pair of the buffer, for dedupe without series ids (dry run). */
  #pairNumbers(): Int32Array {
    const numbers = new Map<string, number>()
    const out = new Int32Array(this.length)
    let lastInstance: string | undefined
    let lastTag: string | undefined
    let lastNumber = 0
    for (let i = 0; i < out.length; i++) {
      if (this.instanceIds[i] !== lastInstance || this.tagKeys[i] !== lastTag) {
        lastInstance = this.instanceIds[i]!
        lastTag = this.tagKeys[i]!
        const key = `${lastInstance}\u0000${lastTag}`
        let n = numbers.get(key)
        if (n === undefined) numbers.set(key, (n = numbers.size))
        lastNumber = n
      }
      out[i] = lastNumber
    }
    return out
  }
}
