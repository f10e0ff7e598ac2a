import { withSystemScope } from '../db/tenant-scope.ts'

/** One authentication by a key. */
export interface KeyUse {
  orgId: string
  keyId: string
  at: number
}

/**
 * Spec 3.1: lastUsedAt is best-effort. Uses are gathered in memory and written in one transaction every
 * `flushMs`, so a key sees at most one write per interval however busy it is, and no request waits for it.
 */
export function createLastUsedTracker(deps: {
  /** Writes a batch in one transaction (the api-keys service's markUsed; app.ts passes it in). */
  markUsed: (uses: readonly KeyUse[]) => Promise<void>
  flushMs: number
  onError: (err: unknown) => void
}) {
  let pending = new Map<string, KeyUse>()
  let flushing: Promise<void> | undefined

  async function flush(): Promise<void> {
    if (flushing) return flushing
    if (pending.size === 0) return
    const batch = [...pending.values()]
    pending = new Map()
    // Row-level security: one batch holds the uses of every organisation (each update names its org_id).
    flushing = withSystemScope(() => deps.markUsed(batch))
      .catch(deps.onError)
      .finally(() => {
        flushing = undefined
      })
    return flushing
  }

  const timer = setInterval(() => {
    void flush()
  }, deps.flushMs)
  timer.unref()

  return {
    touch(orgId: string, keyId: string, at: number): void {
      const seen = pending.get(keyId)
      if (!seen || seen.at < at) pending.set(keyId, { orgId, keyId, at })
    },
    flush,
    async stop(): Promise<void> {
      clearInterval(timer)
      await flushing
      await flush()
    },
  }
}
