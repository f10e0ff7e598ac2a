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
   */
  dedupe(): void {
    const seen = new Map<string, number>()
    const n = this.length
    for (let i = 0; i < n; i++) seen.set(`${this.instanceIds[i]}\u0000${this.tagKeys[i]}\u0000${this.ts[i]}`, i)
    if (seen.size === n) return
    const keep = new Uint8Array(n)
    for (const i of seen.values()) keep[i] = 1
    const pick = <T>(column: T[]) => column.filter((_, i) => keep[i] === 1)
    this.instanceIds = pick(this.instanceIds)
    this.tagKeys = pick(this.tagKeys)
    this.ts = pick(this.ts)
    this.values = pick(this.values)
    this.texts = pick(this.texts)
    this.qualities = pick(this.qualities)
  }
}
