import { ConfigInvalid } from './load.ts'
import type { Config } from './schema.ts'

/**
 * The settings a reload applies to the running server. Everything else is read once at start-up (the
 * listener, the database pool, Fastify's body limit, tenancy's base domain, the verifier secret, …): a
 * reload reports such a change under `requiresRestart` and keeps the running value, so `current()` always
 * describes what is actually in force.
 */
export const RELOADABLE: ReadonlySet<keyof Config> = new Set<keyof Config>(['logLevel', 'rateLimitPerMinute', 'authRateLimitPerMinute'])

/** Config field → the setting's name as the operator writes it (README § Configuration). */
const SETTING_NAMES: Record<string, string> = {
  mode: 'SITEGRID_MODE',
  databaseUrl: 'DATABASE_URL',
  baseDomain: 'SITEGRID_BASE_DOMAIN',
  siteOrgSlug: 'SITEGRID_SITE_ORG',
  keySecret: 'SITEGRID_KEY_SECRET',
  keySecretSource: 'SITEGRID_KEY_SECRET_FILE',
  dataDir: 'SITEGRID_DATA_DIR',
  host: 'HOST',
  port: 'PORT',
  logLevel: 'SITEGRID_LOG_LEVEL',
  bodyLimitBytes: 'SITEGRID_BODY_LIMIT_BYTES',
  rateLimitPerMinute: 'SITEGRID_RATE_LIMIT_PER_MINUTE',
  authRateLimitPerMinute: 'SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE',
  migrateOnStart: 'SITEGRID_MIGRATE_ON_START',
  shutdownGraceMs: 'SITEGRID_SHUTDOWN_GRACE_MS',
  lastUsedFlushMs: 'SITEGRID_LAST_USED_FLUSH_MS',
  trustProxy: 'SITEGRID_TRUST_PROXY',
  smtp: 'SITEGRID_SMTP_*',
  operatorEmail: 'SITEGRID_OPERATOR_EMAIL',
  reminderIntervalMs: 'SITEGRID_REMINDER_INTERVAL_MS',
  historianMaxFileBytes: 'SITEGRID_HISTORIAN_MAX_FILE_BYTES',
  aiConfigFile: 'SITEGRID_AI_CONFIG_FILE',
  alarmWriteQueueMax: 'SITEGRID_ALARM_WRITE_QUEUE_MAX',
  edgeStatusQueueMax: 'SITEGRID_EDGE_STATUS_QUEUE_MAX',
  edgeStaleAfterMs: 'SITEGRID_EDGE_STALE_AFTER_MS',
  idempotencyWaitMs: 'SITEGRID_IDEMPOTENCY_WAIT_MS',
  oidc: 'SITEGRID_OIDC_*',
  publicOriginScheme: 'SITEGRID_PUBLIC_ORIGIN_SCHEME',
  databaseAppUrl: 'SITEGRID_DATABASE_APP_URL',
  requestTimeoutMs: 'SITEGRID_REQUEST_TIMEOUT_MS',
  headersTimeoutMs: 'SITEGRID_HEADERS_TIMEOUT_MS',
  maxConnections: 'SITEGRID_MAX_CONNECTIONS',
  networkLoad: 'SITEGRID_NETWORK_MAX_*',
  historianLive: 'SITEGRID_HISTORIAN_LIVE_*',
  historianRetentionIntervalMs: 'SITEGRID_HISTORIAN_RETENTION_INTERVAL_MS',
  link: 'SITEGRID_LINK_*',
  metrics: 'SITEGRID_METRICS_*',
}

export function settingName(field: string): string {
  return SETTING_NAMES[field] ?? field
}

export type SettingValue = string | number | boolean | null

export interface ConfigChange {
  setting: string
  from: SettingValue
  to: SettingValue
}

export type ReloadOutcome = { ok: true; changed: ConfigChange[]; requiresRestart: string[] } | { ok: false; problems: string[] }

/** A validated reload not yet in force: `apply()` swaps it in (after, say, its audit row committed). */
export type ReloadPlan = ReloadOutcome & { apply(): void }

export interface ConfigHolder {
  /** The configuration in force; one frozen object, replaced whole by a reload. */
  current(): Config
  /** Rereads and validates the whole configuration and says what a swap would change; changes nothing yet. */
  prepare(): ReloadPlan
  /** prepare() and apply() at once. */
  reload(): ReloadOutcome
}

/**
 * `load` rereads the file and environment and throws ConfigInvalid naming every problem. Applying is one
 * assignment of a new frozen object, so no request ever sees half of a reload; an invalid configuration
 * never gets that far.
 */
export function createConfigHolder(initial: Config, load: () => Config, onApplied?: (next: Config) => void): ConfigHolder {
  let running = initial

  function prepare(): ReloadPlan {
    let candidate: Config
    try {
      candidate = load()
    } catch (err) {
      if (err instanceof ConfigInvalid) return { ok: false, problems: err.problems, apply: () => {} }
      throw err
    }
    const changed: ConfigChange[] = []
    const requiresRestart: string[] = []
    const updates: Record<string, unknown> = {}
    const fields = new Set([...Object.keys(running), ...Object.keys(candidate)]) as Set<keyof Config>
    for (const field of fields) {
      // Functions (an environment reader, say) are plumbing, not settings.
      if (typeof running[field] === 'function' || sameValue(running[field], candidate[field])) continue
      if (!RELOADABLE.has(field)) {
        requiresRestart.push(settingName(field))
        continue
      }
      changed.push({ setting: settingName(field), from: shown(running[field]), to: shown(candidate[field]) })
      updates[field] = candidate[field]
    }
    return {
      ok: true,
      changed,
      requiresRestart,
      apply() {
        if (Object.keys(updates).length === 0) return
        running = Object.freeze({ ...running, ...updates })
        onApplied?.(running)
      },
    }
  }

  return {
    current: () => running,
    prepare,
    reload() {
      const { apply, ...outcome } = prepare()
      apply()
      return outcome
    },
  }
}
function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b)
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) return JSON.stringify(a) === JSON.stringify(b)
  return a === b
}

// Only reloadable settings are shown, and none of them is a secret; anything else is reported by name only.
function shown(value: unknown): SettingValue {
  if (value === undefined || value === null) return null
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value
  return JSON.stringify(value)
}
