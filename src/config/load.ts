import { readFileSync } from 'node:fs'
import { Value } from 'typebox/value'
import { RawConfigSchema, type Config, type RawConfig } from './schema.ts'

export const MIN_KEY_SECRET_BYTES = 32

export class ConfigInvalid extends Error {
  readonly problems: string[]
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigInvalid'
    this.problems = problems
  }
}

export interface LoadOptions {
  /** `serve` and `key mint` need the verifier secret; a command that does not may run without it. */
  requireKeySecret: boolean
}

/** Reads env (and the optional JSON file it names), validates all of it, reports every bad key at once. */
export function loadConfig(env: NodeJS.ProcessEnv, options: LoadOptions): Config {
  const problems: string[] = []
  const fromFile = readConfigFile(env, problems)
  const merged: Record<string, unknown> = { ...fromFile }
  for (const key of Object.keys(RawConfigSchema.properties)) {
    if (env[key] !== undefined && env[key] !== '') merged[key] = env[key]
  }
  const candidate = Value.Convert(RawConfigSchema, Value.Default(RawConfigSchema, merged)) as RawConfig
  const named = new Set<string>()
  for (const error of Value.Errors(RawConfigSchema, candidate)) {
    const key = error.instancePath.slice(1) || 'config'
    if (named.has(key)) continue // one line per setting: a union reports once per branch
    named.add(key)
    const choices = (RawConfigSchema.properties as Record<string, { anyOf?: Array<{ const?: unknown }> }>)[key]?.anyOf?.map((s) => s.const)
    problems.push(`${key}: ${choices ? `must be one of ${choices.join(', ')}` : error.message}`)
  }
  const secret = problems.length === 0 ? readKeySecret(candidate, problems, options) : undefined
  if (problems.length > 0) throw new ConfigInvalid(problems)
  return Object.freeze({
    mode: candidate.SITEGRID_MODE,
    databaseUrl: candidate.DATABASE_URL,
    baseDomain: candidate.SITEGRID_BASE_DOMAIN,
    siteOrgSlug: candidate.SITEGRID_SITE_ORG,
    keySecret: secret?.value,
    keySecretSource: secret?.source,
    dataDir: candidate.SITEGRID_DATA_DIR,
    host: candidate.HOST,
    port: candidate.PORT,
    logLevel: candidate.SITEGRID_LOG_LEVEL,
    bodyLimitBytes: candidate.SITEGRID_BODY_LIMIT_BYTES,
    rateLimitPerMinute: candidate.SITEGRID_RATE_LIMIT_PER_MINUTE,
    migrateOnStart: candidate.SITEGRID_MIGRATE_ON_START,
    shutdownGraceMs: candidate.SITEGRID_SHUTDOWN_GRACE_MS,
    lastUsedFlushMs: candidate.SITEGRID_LAST_USED_FLUSH_MS,
    trustProxy: candidate.SITEGRID_TRUST_PROXY,
  })
}

export function configFilePath(env: NodeJS.ProcessEnv): string {
  return env.SITEGRID_CONFIG_FILE || `${env.SITEGRID_DATA_DIR || './data'}/sitegrid.json`
}

function readConfigFile(env: NodeJS.ProcessEnv, problems: string[]): Record<string, unknown> {
  const path = configFilePath(env)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    // The default file is optional; a file the operator named explicitly must exist.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !env.SITEGRID_CONFIG_FILE) return {}
    problems.push(`SITEGRID_CONFIG_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    return {}
  }
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new TypeError('not an object')
    const unknownKeys = Object.keys(parsed).filter((k) => !Object.hasOwn(RawConfigSchema.properties, k))
    for (const key of unknownKeys) problems.push(`${path}: unknown setting ${key}`)
    return parsed as Record<string, unknown>
  } catch {
    problems.push(`${path}: not a JSON object`)
    return {}
  }
}

// Spec 2.1: a missing or misconfigured verifier secret is a hard start-up failure. Never invent one here.
function readKeySecret(raw: RawConfig, problems: string[], options: LoadOptions): { value: Buffer; source: string } | undefined {
  let text: string | undefined
  let source: string
  if (raw.SITEGRID_KEY_SECRET !== undefined) {
    text = raw.SITEGRID_KEY_SECRET
    source = 'SITEGRID_KEY_SECRET'
  } else if (raw.SITEGRID_KEY_SECRET_FILE !== undefined) {
    source = raw.SITEGRID_KEY_SECRET_FILE
    try {
      text = readFileSync(raw.SITEGRID_KEY_SECRET_FILE, 'utf8').trim()
    } catch (err) {
      problems.push(`SITEGRID_KEY_SECRET_FILE: cannot read ${raw.SITEGRID_KEY_SECRET_FILE} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
      return undefined
    }
  } else {
    if (options.requireKeySecret) {
      problems.push('SITEGRID_KEY_SECRET or SITEGRID_KEY_SECRET_FILE: no API-key verifier secret is configured (run `sitegrid init` to create one)')
    }
    return undefined
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) {
    problems.push(`${source}: the verifier secret must be base64`)
    return undefined
  }
  const value = Buffer.from(text, 'base64')
  if (value.length < MIN_KEY_SECRET_BYTES) {
    problems.push(`${source}: the verifier secret must hold at least ${MIN_KEY_SECRET_BYTES} bytes (has ${value.length})`)
    return undefined
  }
  return { value, source }
}
