import type { FastifyBaseLogger } from 'fastify'
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from 'pino'

/** Every credential header and secret-bearing field is censored before a line is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.plaintext',
  '*.pin',
  '*.password',
  '*.secret',
  '*.keySecret',
  '*.verifier',
  '*.token',
  '*.apiKey',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.client_secret',
  '*.refreshToken',
  '*.accessToken',
]

const CENSOR = '[redacted]'

/**
 * Query parameters whose value is a credential, by name (case-insensitive, `-` read as `_`): a client that puts its
 * key or token in the URL (refused: credentials go in headers) must not have it written to the log (issue 24, defect 13).
 */
const CREDENTIAL_PARAMETER =
  /^(x_)?(api_?key|key|token|\w*_token|code|pass(word|wd)?|pwd|(new_?)?pin|secret|\w*_secret|auth(orization)?|bearer|jwt|session(_?id)?|sig(nature)?|credentials?)$/i

/** An API-key plaintext (`csk_` + more than the 4 characters of its public prefix) anywhere, also with `_` percent-encoded. */
const API_KEY_PLAINTEXT = /csk(_|%5f)[0-9A-Za-z]{5,}/gi

/** A query parameter (`?name=value` or `&name=value`) wherever it appears in a log line, as the line's JSON writes it. */
const QUERY_PARAMETER = /([?&])([^=&\s"?#\\]+)=([^&\s"#\\]*)/g

function parameterName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' ')).replaceAll('-', '_')
  } catch {
    return raw
  }
}

/**
 * A log line as it may be written: the values of credential-named query parameters and API-key plaintexts replaced
 * by `[redacted]`, wherever a URL appears (the request's `url`, an error message that quotes it, …).
 */
export function redactCredentials(line: string): string {
  return line
    .replace(API_KEY_PLAINTEXT, `csk_${CENSOR}`)
    .replace(QUERY_PARAMETER, (whole, start: string, name: string) => (CREDENTIAL_PARAMETER.test(parameterName(name)) ? `${start}${name}=${CENSOR}` : whole))
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      // Every line, whatever logged it: a URL can reach a message or an error as well as `req.url`.
      hooks: { streamWrite: redactCredentials },
      serializers: {
        // Query strings of sign-in callbacks carry codes and state: log the path only there.
        req: (req: { method?: string; url?: string; hostname?: string }) => ({
          method: req.method,
          url: req.url?.startsWith('/auth/') ? req.url.split('?')[0] : req.url,
          host: req.hostname,
        }),
      },
    },
    destination,
  )
}

type LineLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
const LEVEL_VALUES: Record<string, number | undefined> = pino.levels.values

/**
 * Fastify's logger of one request (its `reqId` bound), made into a pino child at its first line written at an enabled
 * level (issue 29): most requests write none at the configured level, and a child a request (its level methods,
 * its serialized bindings) cost 2–3.5 µs and a tenth of an authenticated GET's garbage (30 000 GETs: 82 scavenges,
 * 72 without it). A line is written exactly as the child would write it; a route with its own level or serializers
 * gets its child at once.
 */
class LazyRequestLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  #child: FastifyBaseLogger | undefined

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  #log(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings))
  }

  #write(level: LineLevel, args: unknown[]): void {
    // 'silent' (or an unknown level) has no value: nothing is enabled.
    if (this.#child === undefined && !(LEVEL_VALUES[level]! >= (LEVEL_VALUES[this.#parent.level] ?? Infinity))) return
    const log = this.#log()
    ;(log[level] as (...line: unknown[]) => void).apply(log, args)
  }

  get level(): string {
    return (this.#child ?? this.#parent).level
  }
  set level(level: string) {
    this.#log().level = level
  }
  fatal(...args: unknown[]): void {
    this.#write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.#write('error', args)
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args)
  }
  info(...args: unknown[]): void {
    this.#write('info', args)
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args)
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log().child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, a pino child only once it writes (LazyRequestLogger). */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return parent.child(bindings, options)
  return new LazyRequestLogger(parent, bindings) as unknown as FastifyBaseLogger
}
