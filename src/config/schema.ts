import { Type, type Static } from 'typebox'

/**
 * The configuration as the operator writes it: environment variables, optionally completed by a JSON file
 * (`SITEGRID_CONFIG_FILE`, default `./data/sitegrid.json`, written by `sitegrid init`). The environment wins.
 * Documented in README.md § Configuration.
 */
export const RawConfigSchema = Type.Object({
  DATABASE_URL: Type.String({ default: 'sqlite:./data/sitegrid.db', pattern: '^(sqlite:|postgres://|postgresql://)', description: '`sqlite:PATH` or `postgres://…`' }),
  SITEGRID_MODE: Type.Union([Type.Literal('site'), Type.Literal('cloud')], { default: 'site' }),
  SITEGRID_BASE_DOMAIN: Type.String({ default: 'localhost', minLength: 1, pattern: '^[a-z0-9.-]+$' }),
  SITEGRID_SITE_ORG: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'site mode: the organisation served on hosts that are not `{slug}.{base domain}`' })),
  SITEGRID_KEY_SECRET: Type.Optional(Type.String()),
  SITEGRID_KEY_SECRET_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  SITEGRID_LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
  SITEGRID_BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 104_857_600 }),
  SITEGRID_RATE_LIMIT_PER_MINUTE: Type.Integer({ default: 1200, minimum: 1 }),
  SITEGRID_MIGRATE_ON_START: Type.Boolean({ default: true }),
  SITEGRID_SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  SITEGRID_LAST_USED_FLUSH_MS: Type.Integer({ default: 2_000, minimum: 10, maximum: 60_000 }),
  SITEGRID_TRUST_PROXY: Type.Boolean({ default: false }),
})
export type RawConfig = Static<typeof RawConfigSchema>

export type Mode = 'site' | 'cloud'

/** The validated, frozen configuration every part of the program receives. */
export interface Config {
  readonly mode: Mode
  readonly databaseUrl: string
  readonly baseDomain: string
  readonly siteOrgSlug: string | undefined
  /** The API-key verifier secret; `undefined` only for commands that never verify or mint keys. */
  readonly keySecret: Buffer | undefined
  readonly keySecretSource: string | undefined
  readonly dataDir: string
  readonly host: string
  readonly port: number
  readonly logLevel: string
  readonly bodyLimitBytes: number
  readonly rateLimitPerMinute: number
  readonly migrateOnStart: boolean
  readonly shutdownGraceMs: number
  readonly lastUsedFlushMs: number
  readonly trustProxy: boolean
}
