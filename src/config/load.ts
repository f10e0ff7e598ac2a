import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { isIPv4 } from 'node:net'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { RawConfigSchema, type Config, type SmtpConfig, type OidcConfig, type RawConfig } from './schema.ts'

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
  /**
   * The commands (all but `init`): the folder of a SQLite database must exist (the data folder, by default), so that
   * a command run from the wrong folder says where it looked instead of creating an empty database there.
   */
  requireDatabaseFolder?: boolean
}

/** Reads env (and the optional JSON file it names), validates all of it, reports every bad key at once. */
export function loadConfig(env: NodeJS.ProcessEnv, options: LoadOptions): Config {
  const problems: string[] = []
  const configFile = configFilePath(env)
  const fromFile = readConfigFile(configFile, env, problems)
  const merged: Record<string, unknown> = { ...fromFile }
  for (const key of Object.keys(RawConfigSchema.properties)) {
    // An empty value (`PORT=`, a compose file's unset `${PORT}`) is a mistake to name, not a silent default.
    if (env[key] === '') problems.push(`${key}: is empty: give it a value, or unset it for its default`)
    else if (env[key] !== undefined) merged[key] = env[key]
  }
  checkNumerals(merged, problems)
  const candidate = Value.Convert(RawConfigSchema, Value.Default(RawConfigSchema, merged)) as RawConfig
  // Setting by setting: TypeBox buffers at most 8 errors per call, and one bad union setting alone fills them.
  for (const [key, schema] of Object.entries(RawConfigSchema.properties) as Array<[string, TSchema & { anyOf?: Array<{ const?: unknown }>; type?: unknown }]>) {
    const value = (candidate as Record<string, unknown>)[key]
    if (value === undefined || Value.Check(schema, value)) continue // every required setting has a default
    const choices = schema.anyOf?.map((s) => s.const)
    const [error] = Value.Errors(schema, value)
    const rule = choices
      ? `must be one of ${choices.join(', ')}`
      : schema.type === 'boolean'
        ? 'must be true or false'
        : (PATTERN_RULES[key] ?? error?.message ?? 'is not valid')
    problems.push(`${key}: ${rule}`)
  }
  const dataDir = dataDirOf(configFile, candidate.SITEGRID_DATA_DIR)
  const databaseUrl = candidate.DATABASE_URL ?? `sqlite:${join(dataDir, 'sitegrid.db')}`
  const secret = problems.length === 0 ? readKeySecret(candidate, problems, options) : undefined
  const oidc = problems.length === 0 ? readOidc(candidate, problems) : undefined
  const smtp = problems.length === 0 ? readSmtp(candidate, problems) : undefined
  const linkCa = problems.length === 0 ? readLinkCa(candidate, problems) : undefined
  const metrics = problems.length === 0 ? readMetrics(candidate, problems) : undefined
  // Last: the settings' own problems first decide whether the secret and the others are read (all reported at once).
  if (options.requireDatabaseFolder) checkDatabaseFolder(databaseUrl, { dataDir, configFile, candidate }, problems)
  if (problems.length > 0) throw new ConfigInvalid(problems)
  return Object.freeze({
    mode: candidate.SITEGRID_MODE,
    databaseUrl,
    databaseAppUrl: candidate.SITEGRID_DATABASE_APP_URL,
    baseDomain: candidate.SITEGRID_BASE_DOMAIN,
    siteOrgSlug: candidate.SITEGRID_SITE_ORG,
    keySecret: secret?.value,
    keySecretSource: secret?.source,
    dataDir,
    host: candidate.HOST,
    port: candidate.PORT,
    logLevel: candidate.SITEGRID_LOG_LEVEL,
    bodyLimitBytes: candidate.SITEGRID_BODY_LIMIT_BYTES,
    rateLimitPerMinute: candidate.SITEGRID_RATE_LIMIT_PER_MINUTE,
    authRateLimitPerMinute: candidate.SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE,
    requestTimeoutMs: candidate.SITEGRID_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: candidate.SITEGRID_HEADERS_TIMEOUT_MS,
    maxConnections: candidate.SITEGRID_MAX_CONNECTIONS,
    migrateOnStart: candidate.SITEGRID_MIGRATE_ON_START,
    shutdownGraceMs: candidate.SITEGRID_SHUTDOWN_GRACE_MS,
    database: Object.freeze({
      connectTimeoutMs: candidate.SITEGRID_DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: candidate.SITEGRID_DB_STATEMENT_TIMEOUT_MS,
      queryTimeoutMs: candidate.SITEGRID_DB_QUERY_TIMEOUT_MS,
    }),
    lastUsedFlushMs: candidate.SITEGRID_LAST_USED_FLUSH_MS,
    trustProxy: candidate.SITEGRID_TRUST_PROXY,
    pinScryptLog2N: candidate.SITEGRID_PIN_SCRYPT_LOG2N,
    tenantPackageMaxBytes: candidate.SITEGRID_TENANT_PACKAGE_MAX_BYTES,
    tenantPackageMaxInflatedBytes: candidate.SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES,
    smtp,
    operatorEmail: candidate.SITEGRID_OPERATOR_EMAIL,
    reminderIntervalMs: candidate.SITEGRID_REMINDER_INTERVAL_MS,
    historianMaxFileBytes: candidate.SITEGRID_HISTORIAN_MAX_FILE_BYTES,
    historianLive: Object.freeze({
      maxSamples: candidate.SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES,
      maxSkewMs: candidate.SITEGRID_HISTORIAN_LIVE_MAX_SKEW_MS,
      maxAgeMs: candidate.SITEGRID_HISTORIAN_LIVE_MAX_AGE_MS,
    }),
    historianRetentionIntervalMs: candidate.SITEGRID_HISTORIAN_RETENTION_INTERVAL_MS,
    networkLoad: Object.freeze({
      maxBytes: candidate.SITEGRID_NETWORK_MAX_BYTES,
      maxNodes: candidate.SITEGRID_NETWORK_MAX_NODES,
      maxEdges: candidate.SITEGRID_NETWORK_MAX_EDGES,
    }),
    alarmWriteQueueMax: candidate.SITEGRID_ALARM_WRITE_QUEUE_MAX,
    edgeStatusQueueMax: candidate.SITEGRID_EDGE_STATUS_QUEUE_MAX,
    edgeStaleAfterMs: candidate.SITEGRID_EDGE_STALE_AFTER_MS,
    idempotencyWaitMs: candidate.SITEGRID_IDEMPOTENCY_WAIT_MS,
    link: Object.freeze({
      pushIdleMs: candidate.SITEGRID_LINK_PUSH_IDLE_MS,
      pullWaitMs: candidate.SITEGRID_LINK_PULL_WAIT_MS,
      pullPollMs: candidate.SITEGRID_LINK_PULL_POLL_MS,
      heartbeatMs: candidate.SITEGRID_LINK_HEARTBEAT_MS,
      backoffMaxMs: candidate.SITEGRID_LINK_BACKOFF_MAX_MS,
      timeoutMs: candidate.SITEGRID_LINK_TIMEOUT_MS,
      outboxRetentionDays: candidate.SITEGRID_LINK_OUTBOX_RETENTION_DAYS,
      ca: linkCa,
      // The proxy variables, as curl reads them (lower case first); the link's client reads nothing else of the env.
      proxyEnv: Object.freeze(Object.fromEntries(PROXY_VARIABLES.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])))),
    }),
    aiConfigFile: candidate.SITEGRID_AI_CONFIG_FILE,
    readEnv: (name: string) => env[name],
    oidc,
    publicOriginScheme: candidate.SITEGRID_PUBLIC_ORIGIN_SCHEME as 'https' | 'http',
    metrics: metrics!,
  })
}

/** `SITEGRID_` variables the program reads that are not settings: the config file's path, bin/sitegrid's switch to the sources. */
const OTHER_VARIABLES = new Set(['SITEGRID_CONFIG_FILE', 'SITEGRID_FROM_SOURCE'])

/**
 * A `SITEGRID_` variable that is no setting (a typo such as SITEGRID_RATE_LIMT) is ignored, so each is named in a
 * warning with the setting nearest it: a warning and not a refusal, because the environment is shared with other
 * programs (the test harness's SITEGRID_TEST_* among them), unlike the config file, whose unknown keys are refused.
 */
export function unknownEnvSettings(env: NodeJS.ProcessEnv): string[] {
  const settings = Object.keys(RawConfigSchema.properties)
  return Object.keys(env)
    .filter((name) => name.startsWith('SITEGRID_') && !name.startsWith('SITEGRID_TEST_') && !OTHER_VARIABLES.has(name) && !settings.includes(name))
    .sort()
    .map((name) => {
      const [nearest] = settings.map((s) => [s, nameDistance(name, s)] as const).sort((a, b) => a[1] - b[1])
      const hint = nearest && nearest[1] <= Math.max(1, Math.floor(name.length / 8)) ? ` (did you mean ${nearest[0]}?)` : ''
      return `${name} is not a setting and is ignored${hint}; the settings are listed in README.md § Configuration`
    })
}

/** How far a misspelt name is from a setting: edits between the two, either cut short (RATE_LIMT is near RATE_LIMIT_PER_MINUTE). */
function nameDistance(a: string, b: string): number {
  const [x, y] = [a.replace(/^SITEGRID_/, ''), b.replace(/^SITEGRID_/, '')]
  return Math.min(prefixDistance(x, y), prefixDistance(y, x))
}

/** The fewest edits from `a` to some prefix of `b` (Levenshtein, the last row's minimum). */
function prefixDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = row
  }
  return Math.min(...previous)
}

/** The rule of a setting with a pattern, as an operator reads it (TypeBox says only `must match pattern "…"`). */
const PATTERN_RULES: Record<string, string> = {
  DATABASE_URL: 'must be sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE',
  SITEGRID_DATABASE_APP_URL: 'must be postgres://USER:PASSWORD@HOST:PORT/DATABASE',
  SITEGRID_BASE_DOMAIN: 'must be a domain name in lower case (a-z, 0-9, dots and hyphens)',
  SITEGRID_SITE_ORG: "must be an organisation's slug (a-z, 0-9 and hyphens, starting with a letter or digit)",
  SITEGRID_METRICS_ADDRESS: 'must be HOST:PORT, [IPv6]:PORT, PORT or off',
}

const INTEGER_TEXT = /^-?\d+$/

/**
 * Integer settings as an operator writes them: digits only. TypeBox's conversion would otherwise take `8080.5` as
 * 8080, `0x50` as 80 and `1e3` as 1000 (and a file's 25.5 as 25); such a value is refused and left out of the
 * conversion, so the setting is reported once.
 */
function checkNumerals(merged: Record<string, unknown>, problems: string[]): void {
  for (const [key, schema] of Object.entries(RawConfigSchema.properties) as Array<[string, { type?: unknown }]>) {
    const value = merged[key]
    if (schema.type !== 'integer' || value === undefined) continue
    if (typeof value === 'string' ? INTEGER_TEXT.test(value) : typeof value !== 'number' || Number.isInteger(value)) continue
    problems.push(`${key}: must be a whole number in digits, got ${JSON.stringify(value)}`)
    delete merged[key]
  }
}

/** The configuration file (absolute): SITEGRID_CONFIG_FILE, else `sitegrid.json` in SITEGRID_DATA_DIR (default ./data). */
export function configFilePath(env: NodeJS.ProcessEnv): string {
  return resolve(env.SITEGRID_CONFIG_FILE || join(env.SITEGRID_DATA_DIR || 'data', 'sitegrid.json'))
}

/** The data folder: SITEGRID_DATA_DIR (absolute once read), else the configuration file's folder. */
function dataDirOf(configFile: string, setting: string | undefined): string {
  return resolve(setting ?? dirname(configFile))
}

/**
 * For `sitegrid init`, before there is anything to validate: the configuration file, the data folder it implies and
 * the verifier secret already configured (in the environment or the file, the environment first), so that init
 * creates no secret file that nothing would read.
 */
export function locateDataFolder(env: NodeJS.ProcessEnv): { configFile: string; dataDir: string; keySecretFile?: string; hasInlineKeySecret: boolean } {
  const configFile = configFilePath(env)
  const fromFile = readConfigFile(configFile, env, [])
  const setting = (key: string) => env[key] || (typeof fromFile[key] === 'string' && fromFile[key] !== '' ? fromFile[key] : undefined)
  const keySecretFile = setting('SITEGRID_KEY_SECRET_FILE')
  return {
    configFile,
    dataDir: dataDirOf(configFile, setting('SITEGRID_DATA_DIR')),
    keySecretFile: keySecretFile === undefined ? undefined : resolve(keySecretFile),
    hasInlineKeySecret: setting('SITEGRID_KEY_SECRET') !== undefined,
  }
}

/** Settings that name a file or a folder: relative in the configuration file, they are relative to the file's folder. */
const PATH_SETTINGS = [
  'SITEGRID_DATA_DIR',
  'SITEGRID_KEY_SECRET_FILE',
  'SITEGRID_SMTP_PASSWORD_FILE',
  'SITEGRID_OIDC_CLIENT_SECRET_FILE',
  'SITEGRID_LINK_CA_FILE',
  'SITEGRID_AI_CONFIG_FILE',
]

/**
 * The file's paths made absolute against its own folder, so that a command finds the same files from any working
 * directory (the environment's paths stay relative to the working directory, as a shell user expects).
 */
function rebased(settings: Record<string, unknown>, folder: string): Record<string, unknown> {
  const out = { ...settings }
  for (const key of PATH_SETTINGS) if (typeof out[key] === 'string' && out[key] !== '') out[key] = resolve(folder, out[key])
  const url = out.DATABASE_URL
  if (typeof url === 'string' && url.startsWith('sqlite:') && url !== 'sqlite::memory:') out.DATABASE_URL = `sqlite:${resolve(folder, url.slice(7))}`
  return out
}

/**
 * `sitegrid init` on a configuration file written before its paths were relative to its own folder (they were relative
 * to the working directory, e.g. `./data/key-secret` in `./data/sitegrid.json`): a relative path that names nothing
 * from the file's folder but names an existing file or folder from the working directory is rewritten relative to the
 * file's folder, so an upgraded server starts as before. Answers what changed (`KEY: old → new`); writes only then.
 */
export function upgradeConfigPaths(configFile: string, cwd: string): string[] {
  let settings: Record<string, unknown>
  try {
    settings = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>
  } catch {
    return [] // absent or unreadable: serve reports it
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) return []
  const folder = dirname(configFile)
  const moved = (path: string): string | undefined => {
    if (path === '' || isAbsolute(path) || existsSync(resolve(folder, path)) || !existsSync(resolve(cwd, path))) return undefined
    return relative(folder, resolve(cwd, path)) || '.'
  }
  const changes: string[] = []
  for (const key of [...PATH_SETTINGS, 'DATABASE_URL']) {
    const value = settings[key]
    if (typeof value !== 'string') continue
    const sqlite = key === 'DATABASE_URL'
    if (sqlite && (!value.startsWith('sqlite:') || value === 'sqlite::memory:')) continue
    const path = sqlite ? value.slice('sqlite:'.length) : value
    const next = moved(path)
    if (next === undefined) continue
    settings[key] = sqlite ? `sqlite:${next}` : next
    changes.push(`${key}: ${value} → ${String(settings[key])}`)
  }
  if (changes.length > 0) writeFileSync(configFile, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 })
  return changes
}

/** A SQLite database whose folder does not exist: where the command looked, and the setting that changes it. */
function checkDatabaseFolder(databaseUrl: string, where: { dataDir: string; configFile: string; candidate: RawConfig }, problems: string[]): void {
  if (!databaseUrl.startsWith('sqlite:') || databaseUrl === 'sqlite::memory:') return
  const folder = dirname(resolve(databaseUrl.slice('sqlite:'.length)))
  if (existsSync(folder)) return
  const { dataDir, configFile, candidate } = where
  if (candidate.DATABASE_URL !== undefined) {
    problems.push(`DATABASE_URL: the folder ${folder} of the SQLite database does not exist (only \`sitegrid init\` creates folders)`)
    return
  }
  const why = candidate.SITEGRID_DATA_DIR === undefined ? `SITEGRID_DATA_DIR is unset: the folder of the configuration file ${configFile}` : 'SITEGRID_DATA_DIR'
  problems.push(
    `SITEGRID_DATA_DIR: the data folder ${dataDir} does not exist (${why}). Run \`sitegrid init\` to create it, or point SITEGRID_DATA_DIR or ` +
      `SITEGRID_CONFIG_FILE at an existing one (relative values in the environment are relative to the working directory ${process.cwd()})`,
  )
}

function readConfigFile(path: string, env: NodeJS.ProcessEnv, problems: string[]): Record<string, unknown> {
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
    return rebased(typedSettings(parsed as Record<string, unknown>, path, problems), dirname(path))
  } catch {
    problems.push(`${path}: not a JSON object`)
    return {}
  }
}

const JSON_TYPES = { integer: ['number', 'a whole number'], boolean: ['boolean', 'true or false'] } as Record<string, [string, string]>

/**
 * The file's values as JSON types them: a setting's own type, or a string as the environment would give it. Anything
 * else (`"PORT": true`, which TypeBox's conversion would take as port 1) is refused naming the setting and the type
 * found, never the value (it may be a secret), and left out.
 */
function typedSettings(parsed: Record<string, unknown>, path: string, problems: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(parsed)) {
    const schema = (RawConfigSchema.properties as Record<string, { type?: string }>)[key]
    const [type, wanted] = JSON_TYPES[schema?.type ?? ''] ?? ['string', 'a string']
    if (schema && typeof value !== 'string' && typeof value !== type) {
      problems.push(`${key}: must be ${wanted} in ${path}, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}`)
      continue
    }
    out[key] = value
  }
  return out
}

const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY', 'no_proxy', 'NO_PROXY']

/** The extra certificate authorities the site server trusts for its cloud (PEM), read once at start. */
function readLinkCa(raw: RawConfig, problems: string[]): string | undefined {
  const path = raw.SITEGRID_LINK_CA_FILE
  if (path === undefined) return undefined
  try {
    const pem = readFileSync(path, 'utf8')
    if (pem.includes('-----BEGIN CERTIFICATE-----')) return pem
    problems.push(`SITEGRID_LINK_CA_FILE: ${path} holds no PEM certificate`)
  } catch (err) {
    problems.push(`SITEGRID_LINK_CA_FILE: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  return undefined
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

// Issue 4: OIDC is the cloud cell's sign-in. The client secret, like the key secret, is never logged.
function readOidc(raw: RawConfig, problems: string[]): OidcConfig | undefined {
  const issuer = raw.SITEGRID_OIDC_ISSUER
  const clientFields = [raw.SITEGRID_OIDC_AUDIENCE, raw.SITEGRID_OIDC_CLIENT_ID, raw.SITEGRID_OIDC_CLIENT_SECRET, raw.SITEGRID_OIDC_CLIENT_SECRET_FILE]
  if (issuer === undefined) {
    if (clientFields.some((v) => v !== undefined)) problems.push('SITEGRID_OIDC_ISSUER: required when other SITEGRID_OIDC_* settings are given')
    return undefined
  }
  if (raw.SITEGRID_MODE !== 'cloud') {
    problems.push('SITEGRID_OIDC_ISSUER: OIDC sign-in is for cloud mode (SITEGRID_MODE=cloud); a site server signs in with site PINs')
    return undefined
  }
  if (raw.SITEGRID_OIDC_AUDIENCE === undefined) {
    problems.push('SITEGRID_OIDC_AUDIENCE: required with SITEGRID_OIDC_ISSUER (the `aud` of the access tokens this cell accepts)')
    return undefined
  }
  const clientId = raw.SITEGRID_OIDC_CLIENT_ID
  let secret = raw.SITEGRID_OIDC_CLIENT_SECRET
  if (secret === undefined && raw.SITEGRID_OIDC_CLIENT_SECRET_FILE !== undefined) {
    try {
      secret = readFileSync(raw.SITEGRID_OIDC_CLIENT_SECRET_FILE, 'utf8').trim()
    } catch (err) {
      problems.push(`SITEGRID_OIDC_CLIENT_SECRET_FILE: cannot read ${raw.SITEGRID_OIDC_CLIENT_SECRET_FILE} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
      return undefined
    }
  }
  if ((clientId === undefined) !== (secret === undefined || secret === '')) {
    problems.push('SITEGRID_OIDC_CLIENT_ID and SITEGRID_OIDC_CLIENT_SECRET (or _FILE): give both for browser sign-in, or neither')
    return undefined
  }
  return Object.freeze({
    issuer,
    audience: raw.SITEGRID_OIDC_AUDIENCE,
    clockSkewSec: raw.SITEGRID_OIDC_CLOCK_SKEW_SEC,
    client: clientId === undefined || !secret ? undefined : Object.freeze({ id: clientId, secret }),
  })
}

function readSmtp(raw: RawConfig, problems: string[]): SmtpConfig | undefined {
  if (raw.SITEGRID_SMTP_HOST === undefined) return undefined
  let password = raw.SITEGRID_SMTP_PASSWORD
  if (password === undefined && raw.SITEGRID_SMTP_PASSWORD_FILE !== undefined) {
    try {
      password = readFileSync(raw.SITEGRID_SMTP_PASSWORD_FILE, 'utf8').trim()
    } catch (err) {
      problems.push(`SITEGRID_SMTP_PASSWORD_FILE: cannot read ${raw.SITEGRID_SMTP_PASSWORD_FILE} (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
      return undefined
    }
  }
  if ((raw.SITEGRID_SMTP_USER === undefined) !== (password === undefined)) {
    problems.push('SITEGRID_SMTP_USER and SITEGRID_SMTP_PASSWORD (or _FILE): give both, or neither')
    return undefined
  }
  return Object.freeze({
    host: raw.SITEGRID_SMTP_HOST,
    port: raw.SITEGRID_SMTP_PORT,
    security: raw.SITEGRID_SMTP_SECURITY,
    user: raw.SITEGRID_SMTP_USER,
    password,
    from: raw.SITEGRID_SMTP_FROM,
  })
}

/** The metrics listener's address (loopback unless a token guards it) and the token's hash (http/metrics-endpoint.ts). */
function readMetrics(raw: RawConfig, problems: string[]): Config['metrics'] {
  const sealedToken = raw.SITEGRID_METRICS_TOKEN === undefined ? undefined : createHash('sha256').update(raw.SITEGRID_METRICS_TOKEN).digest()
  if (raw.SITEGRID_METRICS_ADDRESS === 'off') return Object.freeze({ listen: undefined, sealedToken })
  const [, bracketed, named, port] = /^(?:\[(.+)\]:|(.+):)?(\d+)$/.exec(raw.SITEGRID_METRICS_ADDRESS)!
  const host = bracketed ?? named ?? '127.0.0.1'
  if (Number(port) > 65535) problems.push(`SITEGRID_METRICS_ADDRESS: port ${port} is above 65535`)
  if (!isLoopback(host) && sealedToken === undefined) {
    problems.push(`SITEGRID_METRICS_ADDRESS: ${host} is not a loopback address; set SITEGRID_METRICS_TOKEN too (the metrics are not public)`)
  }
  return Object.freeze({ listen: Object.freeze({ host, port: Number(port) }), sealedToken })
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'))
}
