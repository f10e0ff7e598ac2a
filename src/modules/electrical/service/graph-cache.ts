import type { DatabaseHandle } from '../../../db/connect.ts'
import type { Graph } from '../topology.ts'

/** Sites whose graphs are kept (least recently used dropped first). */
const MAX_GRAPHS = 32

interface Entry {
  generation: number
  graph: Graph
}

/**
 * The built graphs of recently questioned sites (topology and protection answers read the whole network; building
 * it costs far more than walking it). An entry is valid while nothing may have written that site's network:
 * - this process: every network write calls `forget(site)` once its transaction ended (network.ts);
 * - another process: every network write also announces an invalidation in its transaction, which moves
 *   `handle.generation()` everywhere (PostgreSQL NOTIFY; on SQLite any other connection's commit moves
 *   data_version), and an entry built under another generation is never used.
 * A graph read while a write of the same site was in flight is not kept (the site's version moved meanwhile).
 * Graphs are read-only (topology.ts), so one instance is shared by concurrent requests.
 */
export class GraphCache {
  readonly #handle: DatabaseHandle
  readonly #entries = new Map<string, Entry>()
  readonly #versions = new Map<string, number>()
  #hits = 0
  #misses = 0

  constructor(handle: DatabaseHandle) {
    this.#handle = handle
  }

  /** The cached graph of the site (`variant` tells lean and full graphs apart), or `load`'s, kept when still current. */
  async get(orgId: string, siteCode: string, variant: string, load: () => Promise<Graph>): Promise<Graph> {
    const key = `${orgId}\u0000${siteCode}\u0000${variant}`
    const generation = this.#handle.generation()
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.generation === generation) {
      this.#hits++
      this.#entries.delete(key)
      this.#entries.set(key, entry) // most recently used last
      return entry.graph
    }
    this.#misses++
    const site = siteKey(orgId, siteCode)
    const version = this.#versions.get(site) ?? 0
    const graph = await load()
    if ((this.#versions.get(site) ?? 0) === version && this.#handle.generation() === generation) {
      this.#entries.delete(key)
      this.#entries.set(key, { generation, graph })
      while (this.#entries.size > MAX_GRAPHS) this.#entries.delete(this.#entries.keys().next().value!)
    }
    return graph
  }

  /** After a write to the site's network in this process (committed or not). */
  forget(orgId: string, siteCode: string): void {
    const site = siteKey(orgId, siteCode)
    this.#versions.set(site, (this.#versions.get(site) ?? 0) + 1)
    for (const key of [...this.#entries.keys()]) if (key.startsWith(`${site}\u0000`)) this.#entries.delete(key)
  }

  /** For tests and diagnostics. */
  stats(): { hits: number; misses: number; size: number } {
    return { hits: this.#hits, misses: this.#misses, size: this.#entries.size }
  }
}

const siteKey = (orgId: string, siteCode: string) => `${orgId}\u0000${siteCode}`
