import { Type, type Static, type TSchema } from 'typebox'

/**
 * The configuration as the operator writes it: environment variables, optionally completed by a JSON file
 * (`SITEGRID_CONFIG_FILE`, default `./data/sitegrid.json`, written by `sitegrid init`). The environment wins. Relative
 * paths in the file are relative to the file's folder; in the environment, to the working directory (config/load.ts).
 * Documented in README.md § Configuration.
 */
export const RawConfigSchema = Type.Object({
  DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^(sqlite:.|postgres://|postgresql://)',
      description: '`sqlite:PATH` or `postgres://…`; unset: `sqlite:` the data folder `/sitegrid.db`',
    }),
  ),
  SITEGRID_DATABASE_APP_URL: Type.Optional(
    Type.String({
      pattern: '^(postgres://|postgresql://)',
      description:
        'PostgreSQL: the role `serve` runs as ' +
        '(neither owner nor BYPASSRLS; row-level security applies); DATABASE_URL (the owner) then only migrates, ' +
        'and `sitegrid migrate` grants this role its table rights',
    }),
  ),
  SITEGRID_MODE: Type.Union([Type.Literal('site'), Type.Literal('cloud')], { default: 'site' }),
  SITEGRID_BASE_DOMAIN: Type.String({ default: 'localhost', minLength: 1, pattern: '^[a-z0-9.-]+$' }),
  SITEGRID_SITE_ORG: Type.Optional(
    Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'site mode: the organisation served on hosts that are not `{slug}.{base domain}`' }),
  ),
  SITEGRID_KEY_SECRET: Type.Optional(Type.String()),
  SITEGRID_KEY_SECRET_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_DATA_DIR: Type.Optional(Type.String({ minLength: 1, description: "unset: the configuration file's folder (by default ./data)" })),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  SITEGRID_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  SITEGRID_BODY_LIMIT_BYTES: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 104_857_600 }),
  SITEGRID_REQUEST_TIMEOUT_MS: Type.Integer({
    default: 900_000,
    minimum: 1000,
    description: 'a request (headers and body) must arrive within this; long for multi-gigabyte historian and tenant uploads',
  }),
  SITEGRID_HEADERS_TIMEOUT_MS: Type.Integer({
    default: 20_000,
    minimum: 1000,
    description: 'the request headers must arrive within this (slow-header clients are cut off)',
  }),
  SITEGRID_MAX_CONNECTIONS: Type.Integer({
    default: 10_000,
    minimum: 1,
    description: 'open client connections per process; further connections are refused by the server',
  }),
  SITEGRID_RATE_LIMIT_PER_MINUTE: Type.Integer({ default: 1200, minimum: 1 }),
  SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE: Type.Integer({
    default: 60,
    minimum: 1,
    description: 'sign-in endpoints (/auth/*): requests per client address per minute and process; 429 `RateLimited` with `Retry-After` above',
  }),
  SITEGRID_MIGRATE_ON_START: Type.Boolean({ default: true }),
  SITEGRID_SHUTDOWN_GRACE_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  SITEGRID_DB_CONNECT_TIMEOUT_MS: Type.Integer({
    default: 5_000,
    minimum: 100,
    description: 'PostgreSQL: longest wait for a pool connection (or a new one); then the request fails with 503 `ServiceUnavailable`',
  }),
  SITEGRID_DB_STATEMENT_TIMEOUT_MS: Type.Integer({
    default: 30_000,
    minimum: 100,
    description:
      'PostgreSQL: the server cancels a statement running longer ' +
      '(`statement_timeout`); historian merges and the electrical network replace lift it for their own transaction',
  }),
  SITEGRID_DB_QUERY_TIMEOUT_MS: Type.Integer({
    default: 0,
    minimum: 0,
    description:
      'PostgreSQL: a query without any answer from the server within this ' +
      'fails (503) and its connection is discarded; catches a silent network (blackhole) that statement_timeout cannot. 0: ' +
      'off. Must exceed the longest statement (historian merges run without a statement timeout)',
  }),
  SITEGRID_LAST_USED_FLUSH_MS: Type.Integer({ default: 2_000, minimum: 10, maximum: 60_000 }),
  SITEGRID_TRUST_PROXY: Type.Boolean({ default: false }),
  SITEGRID_PIN_SCRYPT_LOG2N: Type.Integer({
    default: 15,
    minimum: 10,
    maximum: 20,
    description: 'site PINs: scrypt cost N = 2^this (r=8, p=1); lower only in tests',
  }),
  SITEGRID_TENANT_PACKAGE_MAX_BYTES: Type.Integer({
    default: 4 * 1024 ** 3,
    minimum: 1024,
    description: 'largest tenant package accepted by PUT …/tenant/import/package',
  }),
  SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES: Type.Integer({
    default: 16 * 1024 ** 3,
    minimum: 1024,
    description:
      'largest inflated (gunzipped) ' +
      'size of a tenant package, checked while it is read: a decompression bomb is refused with 413 once past it, ' +
      'never inflated whole',
  }),
  SITEGRID_SMTP_HOST: Type.Optional(
    Type.String({ minLength: 1, description: 'SMTP relay for key-expiry reminders; unset: reminders are recorded as skipped' }),
  ),
  SITEGRID_SMTP_PORT: Type.Integer({ default: 587, minimum: 1, maximum: 65535 }),
  SITEGRID_SMTP_SECURITY: Type.Union([Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')], {
    default: 'starttls',
    description: '`starttls` (required upgrade), `tls` (implicit, port 465) or `none` (loopback relays only)',
  }),
  SITEGRID_SMTP_USER: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_SMTP_PASSWORD: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_SMTP_PASSWORD_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_SMTP_FROM: Type.String({ default: 'sitegrid <no-reply@localhost>', minLength: 3 }),
  SITEGRID_OPERATOR_EMAIL: Type.Optional(Type.String({ format: 'email', description: 'receives reminders for keys minted with the CLI' })),
  SITEGRID_REMINDER_INTERVAL_MS: Type.Integer({
    default: 86_400_000,
    minimum: 1000,
    description: 'how often the expiry-reminder job polls (spec 8: every 24 hours)',
  }),
  SITEGRID_HISTORIAN_MAX_FILE_BYTES: Type.Integer({
    default: 2_147_483_648,
    minimum: 1024,
    description: 'largest file part of a historian import upload (413 `PayloadTooLarge` above); separate from the JSON body limit',
  }),
  SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES: Type.Integer({
    default: 10_000,
    minimum: 1,
    maximum: 100_000,
    description: 'most samples one live push (POST …/historian/samples) holds (413 `PayloadTooLarge` at one more)',
  }),
  SITEGRID_HISTORIAN_LIVE_MAX_SKEW_MS: Type.Integer({
    default: 300_000,
    minimum: 0,
    description: "a live sample timestamped later than the server's clock plus this is refused (`in the future`)",
  }),
  SITEGRID_HISTORIAN_LIVE_MAX_AGE_MS: Type.Integer({
    default: 604_800_000,
    minimum: 1000,
    description:
      "a live sample timestamped earlier than the server's clock minus this is refused (`too old`); a gateway's store-and-forward buffer is pushed within it",
  }),
  SITEGRID_HISTORIAN_RETENTION_INTERVAL_MS: Type.Integer({
    default: 3_600_000,
    minimum: 1000,
    description: "how often the historian retention job applies each site's `retentionDays` (the first run a minute after the start)",
  }),
  SITEGRID_NETWORK_MAX_BYTES: Type.Integer({
    default: 1_073_741_824,
    minimum: 1024,
    description: 'largest body of the streamed electrical network load (PUT …/electrical/network; 413 above); separate from the JSON body limit',
  }),
  SITEGRID_NETWORK_MAX_NODES: Type.Integer({ default: 100_000, minimum: 1, description: 'most nodes one electrical network load may hold (413 at one more)' }),
  SITEGRID_NETWORK_MAX_EDGES: Type.Integer({ default: 200_000, minimum: 1, description: 'most edges one electrical network load may hold (413 at one more)' }),
  SITEGRID_ALARM_WRITE_QUEUE_MAX: Type.Integer({
    default: 1000,
    minimum: 1,
    maximum: 1_000_000,
    description: 'most alarm writes (event batches, operator actions) waiting or running in one server process; one more answers 503 with Retry-After at once',
  }),
  SITEGRID_EDGE_STATUS_QUEUE_MAX: Type.Integer({
    default: 1000,
    minimum: 1,
    maximum: 1_000_000,
    description:
      "most edge gateway heartbeats and stale sweeps waiting for their site's turn or running in one server process; one more answers 503 with Retry-After at once",
  }),
  SITEGRID_EDGE_STALE_AFTER_MS: Type.Integer({
    default: 60_000,
    minimum: 1000,
    maximum: 86_400_000,
    description:
      'an edge gateway (and each controller it polls) with no heartbeat within this is stale, and a communication alarm is raised for its controllers',
  }),
  SITEGRID_LINK_PUSH_IDLE_MS: Type.Integer({
    default: 250,
    minimum: 10,
    maximum: 60_000,
    description: 'site server, fleet link: how often an idle push loop looks for new local changes (one indexed query)',
  }),
  SITEGRID_LINK_PULL_WAIT_MS: Type.Integer({
    default: 20_000,
    minimum: 0,
    maximum: 25_000,
    description: 'site server, fleet link: how long a pull waits at the cloud for a change (a long poll)',
  }),
  SITEGRID_LINK_PULL_POLL_MS: Type.Integer({
    default: 250,
    minimum: 10,
    maximum: 5000,
    description: 'cloud, fleet link: how often a waiting pull looks for a new change',
  }),
  SITEGRID_LINK_HEARTBEAT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    maximum: 600_000,
    description: "site server, fleet link: how often the link's state and backlog are reported to the cloud",
  }),
  SITEGRID_LINK_BACKOFF_MAX_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    maximum: 3_600_000,
    description: 'site server, fleet link: the longest wait between two attempts while the cloud is unreachable (doubling from 1 s)',
  }),
  SITEGRID_LINK_TIMEOUT_MS: Type.Integer({
    default: 60_000,
    minimum: 1000,
    maximum: 600_000,
    description: 'site server, fleet link: the longest a call to the cloud may take (a pull adds its wait)',
  }),
  SITEGRID_LINK_OUTBOX_RETENTION_DAYS: Type.Integer({
    default: 7,
    minimum: 0,
    maximum: 3650,
    description:
      'fleet link, both sides: the age in days a change of the outbox must reach before the hourly sweep may delete it, once every peer has read it (0: as soon as every peer has); the latest change of each record stays',
  }),
  SITEGRID_LINK_CA_FILE: Type.Optional(
    Type.String({ minLength: 1, description: "site server, fleet link: PEM file of extra certificate authorities to trust for the cloud's HTTPS" }),
  ),
  SITEGRID_IDEMPOTENCY_WAIT_MS: Type.Integer({
    default: 30_000,
    minimum: 0,
    maximum: 600_000,
    description: 'how long a request whose `Idempotency-Key` is still executing elsewhere waits for that answer before 409 `IdempotencyKeyInProgress`',
  }),
  SITEGRID_AI_CONFIG_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'JSON file with the AI providers and tiers (src/modules/ai/config.ts); unset: `POST /api/ai/complete` answers 503 `AiNotConfigured`',
    }),
  ),
  SITEGRID_OIDC_ISSUER: Type.Optional(
    Type.String({ minLength: 1, description: 'cloud mode: the OpenID provider (relying party for bearer tokens and browser sign-in)' }),
  ),
  SITEGRID_OIDC_AUDIENCE: Type.Optional(Type.String({ minLength: 1, description: 'the `aud` our access tokens carry' })),
  SITEGRID_OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, description: 'browser sign-in client; without it /auth/* is not served' })),
  SITEGRID_OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_OIDC_CLIENT_SECRET_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SITEGRID_OIDC_CLOCK_SKEW_SEC: Type.Integer({ default: 60, minimum: 0, maximum: 300 }),
  SITEGRID_METRICS_ADDRESS: Type.String({
    default: '127.0.0.1:9464',
    pattern: '^(off|([A-Za-z0-9.-]+:|\\[[0-9A-Fa-f:.]+\\]:)?[0-9]{1,5})$',
    description:
      'the Prometheus metrics listener (GET /metrics, docs/metrics.md): `HOST:PORT`, `PORT` (on 127.0.0.1) or `off`; ' +
      'an address that is not loopback needs SITEGRID_METRICS_TOKEN; one per process',
  }),
  SITEGRID_METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 32,
      description: 'a bearer token the metrics listener then requires, and with which the main listener serves GET /metrics too; never logged',
    }),
  ),
  SITEGRID_PUBLIC_ORIGIN_SCHEME: Type.Union([Type.Literal('https'), Type.Literal('http')], {
    default: 'https',
    description: 'scheme of the public tenant origins (redirect URI, Origin checks)',
  }),
})
export type RawConfig = Static<typeof RawConfigSchema>

export const ModeSchema = Type.Union([Type.Literal('site'), Type.Literal('cloud')])
export type Mode = Static<typeof ModeSchema>

const Maybe = <T extends TSchema>(type: T) => Type.Union([type, Type.Undefined()])

/** SMTP relay for reminders (issue 12); the password never leaves this object except to the transport. */
export const SmtpConfigSchema = Type.ReadonlyObject(
  Type.Object({
    host: Type.String(),
    port: Type.Integer(),
    security: Type.Union([Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')]),
    user: Maybe(Type.String()),
    password: Maybe(Type.String()),
    from: Type.String(),
  }),
)
export type SmtpConfig = Static<typeof SmtpConfigSchema>

export const OidcConfigSchema = Type.ReadonlyObject(
  Type.Object(
    {
      issuer: Type.String(),
      audience: Type.String(),
      clockSkewSec: Type.Integer(),
      client: Maybe(Type.ReadonlyObject(Type.Object({ id: Type.String(), secret: Type.String() }))),
    },
    { description: 'client: the browser sign-in client; undefined when only bearer tokens are accepted.' },
  ),
)
export type OidcConfig = Static<typeof OidcConfigSchema>

/**
 * The validated, frozen configuration every part of the program receives: {@link RawConfigSchema} normalised by
 * loadConfig (config/load.ts), secrets read from their files. Not a wire shape: it holds a Buffer and a function.
 */
export const ConfigSchema = Type.ReadonlyObject(
  Type.Object({
    mode: ModeSchema,
    databaseUrl: Type.String(),
    databaseAppUrl: Maybe(
      Type.String({
        description: 'PostgreSQL: the non-owner role `serve` connects as (row-level security); undefined: DATABASE_URL serves too.',
      }),
    ),
    baseDomain: Type.String(),
    siteOrgSlug: Maybe(Type.String()),
    keySecret: Maybe(Type.Unsafe<Buffer>({ description: 'The API-key verifier secret; `undefined` only for commands that never verify or mint keys.' })),
    keySecretSource: Maybe(Type.String()),
    dataDir: Type.String(),
    host: Type.String(),
    port: Type.Integer(),
    logLevel: Type.String(),
    bodyLimitBytes: Type.Integer(),
    rateLimitPerMinute: Type.Integer(),
    authRateLimitPerMinute: Type.Integer({ description: 'Requests per client address per minute to the sign-in endpoints (/auth/*).' }),
    requestTimeoutMs: Type.Integer({ description: 'HTTP server limits (API4): whole request, headers alone, open connections.' }),
    headersTimeoutMs: Type.Integer(),
    maxConnections: Type.Integer(),
    migrateOnStart: Type.Boolean(),
    shutdownGraceMs: Type.Integer(),
    database: Type.ReadonlyObject(
      Type.Object(
        { connectTimeoutMs: Type.Integer(), statementTimeoutMs: Type.Integer(), queryTimeoutMs: Type.Integer() },
        {
          description: 'PostgreSQL timeouts (0 query timeout: off); see README § Configuration.',
        },
      ),
    ),
    lastUsedFlushMs: Type.Integer(),
    trustProxy: Type.Boolean(),
    pinScryptLog2N: Type.Integer({ description: 'Site PINs are hashed with scrypt N = 2^pinScryptLog2N; stored hashes keep their own cost.' }),
    tenantPackageMaxBytes: Type.Integer(),
    tenantPackageMaxInflatedBytes: Type.Integer(),
    smtp: Maybe(SmtpConfigSchema),
    operatorEmail: Maybe(Type.String()),
    reminderIntervalMs: Type.Integer(),
    historianMaxFileBytes: Type.Integer({ description: 'Largest file part of a historian import upload (multipart), apart from the JSON body limit.' }),
    historianLive: Type.ReadonlyObject(
      Type.Object(
        { maxSamples: Type.Integer(), maxSkewMs: Type.Integer(), maxAgeMs: Type.Integer() },
        { description: 'Bounds of a live push (POST …/historian/samples): samples per push, the clock-skew window.' },
      ),
    ),
    historianRetentionIntervalMs: Type.Integer({ description: 'How often the historian retention job runs.' }),
    networkLoad: Type.ReadonlyObject(
      Type.Object(
        { maxBytes: Type.Integer(), maxNodes: Type.Integer(), maxEdges: Type.Integer() },
        {
          description: 'Bounds of the streamed electrical network load (PUT …/electrical/network).',
        },
      ),
    ),
    alarmWriteQueueMax: Type.Integer({ description: 'Most alarm writes waiting or running in one process (then 503 with Retry-After at once).' }),
    edgeStatusQueueMax: Type.Integer({ description: 'Most edge heartbeats and sweeps waiting or running in one process (then 503 with Retry-After at once).' }),
    edgeStaleAfterMs: Type.Integer({ description: 'An edge gateway with no heartbeat within this is stale (issue 30).' }),
    idempotencyWaitMs: Type.Integer({ description: 'A request whose Idempotency-Key is still executing waits at most this long for its answer (then 409).' }),
    link: Type.ReadonlyObject(
      Type.Object(
        {
          pushIdleMs: Type.Integer(),
          pullWaitMs: Type.Integer(),
          pullPollMs: Type.Integer(),
          heartbeatMs: Type.Integer(),
          backoffMaxMs: Type.Integer(),
          timeoutMs: Type.Integer(),
          outboxRetentionDays: Type.Integer(),
          ca: Maybe(Type.String({ description: 'PEM of SITEGRID_LINK_CA_FILE' })),
          proxyEnv: Type.Readonly(Type.Record(Type.String(), Type.String(), { description: 'HTTPS_PROXY, HTTP_PROXY, NO_PROXY (either case) as set' })),
        },
        { description: "The fleet link (issue 26): the site agent's timing and the cloud's long poll." },
      ),
    ),
    aiConfigFile: Maybe(Type.String({ description: 'Path of the AI configuration JSON; undefined switches AI completion off.' })),
    readEnv: Type.Function([Type.String()], Maybe(Type.String()), {
      description: 'Looks up an environment variable named by the AI configuration (`apiKey: { env }`); a function, so it never prints.',
    }),
    oidc: Maybe(OidcConfigSchema),
    publicOriginScheme: Type.Union([Type.Literal('https'), Type.Literal('http')]),
    metrics: Type.ReadonlyObject(
      Type.Object(
        {
          listen: Maybe(Type.ReadonlyObject(Type.Object({ host: Type.String(), port: Type.Integer() }))),
          sealedToken: Maybe(Type.Unsafe<Buffer>({ description: 'SHA-256 of SITEGRID_METRICS_TOKEN (the token itself is not kept)' })),
        },
        { description: 'GET /metrics (http/metrics-endpoint.ts): its own listener (undefined: off), and the token.' },
      ),
    ),
  }),
)
export type Config = Static<typeof ConfigSchema>
