// The site server's HTTP client for the fleet link (issue 26). Only the site server opens connections, and plants
// allow outbound HTTPS only, often through a forward proxy: requests go through undici's EnvHttpProxyAgent, fed from
// the `env` the caller passes (process.env is read only where the configuration is loaded), so HTTPS_PROXY,
// HTTP_PROXY and NO_PROXY (lower-case forms first, as curl reads them) decide the route. As in undici, an https://
// cloud with HTTP_PROXY set and HTTPS_PROXY not goes through HTTP_PROXY (a plant that sets one variable means it).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { EnvHttpProxyAgent, fetch } from 'undici'

import { LINK_PROTOCOL, PROTOCOL_HEADER, SCHEMA_HEADER, SCHEMA_VERSION } from '../site-servers/protocol.ts'

export interface LinkRequest {
  method: string
  /**
   * A string or a Uint8Array goes as it is (`Content-Type` from `headers`, else application/json for a string and
   * application/octet-stream for bytes); anything else is serialised as JSON.
   */
  body?: unknown
  headers?: Record<string, string>
  /** Aborts the call, the body read included (the agent's shutdown). */
  signal?: AbortSignal
  /** This request's deadline for the answer's headers (a long poll waits longer than the client's default). */
  timeoutMs?: number
}

/**
 * What site-side code calls the cloud with: `path` is absolute under the cloud's base URL (`/api/link/push`). The
 * caller reads or cancels every answer's body (an unread body holds its connection).
 */
export interface LinkHttp {
  request(path: string, init: LinkRequest): Promise<Response>
}

export interface LinkHttpClient extends LinkHttp {
  /** `describeFailure` with this client's credential and proxy passwords redacted from the message. */
  describeFailure(failure: unknown): Promise<LinkFailure>
  /** Closes the pooled connections once the calls in flight end (abort their signal first to end them now). */
  close(): Promise<void>
}

export interface LinkHttpOptions {
  /** `https://{slug}.{domain}`: the organisation's cloud cell, optionally with a path prefix. */
  cloudUrl: string
  /** The link credential (`slk_…`); absent before enrolment (the enrol call authenticates with its code). */
  credential?: string
  /** Where the proxy variables are read: the process environment, passed by its one reader. */
  env: Readonly<Record<string, string | undefined>>
  /**
   * Default deadline from sending a request to its answer's headers (the upload included); the body then may pause
   * this long between bytes, however long it takes in all (a seed download over a slow WAN).
   */
  timeoutMs: number
  /** Extra trusted certificate authorities for the cloud (PEM); the system's stay trusted. */
  ca?: string | Buffer | Array<string | Buffer>
}

// RFC 6761 §6.3: `localhost` and its subdomains are loopback names; resolving them here (as curl and browsers do)
// lets an organisation's `{slug}.localhost` address reach a cell on this machine with Host and SNI intact.
const LOOPBACK_NAME = /(^|\.)localhost\.?$/i

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void
function linkLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  if (!LOOPBACK_NAME.test(hostname)) {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) =>
      options.all ? callback(err, addresses) : callback(err, addresses[0]?.address ?? '', addresses[0]?.family),
    )
    return
  }
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }])
  else callback(null, '127.0.0.1', 4)
}

/** The link's HTTP client; throws TypeError on a bad option (the credential is never echoed). */
export function createLinkHttp(options: LinkHttpOptions): LinkHttpClient {
  const base = new URL(options.cloudUrl)
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new TypeError(`cloudUrl must be http(s), not ${base.protocol}`)
  if (base.username || base.password || base.search || base.hash) throw new TypeError('cloudUrl takes no user, query or fragment')
  if (!(options.timeoutMs > 0)) throw new TypeError('timeoutMs must be positive')
  const { credential } = options
  // A header value with a control character would be refused by undici with the value in sight; refuse it here.
  if (credential !== undefined && !/^[\x21-\x7e]+$/.test(credential)) throw new TypeError('the link credential has characters a header cannot carry')
  const prefix = base.pathname.replace(/\/+$/, '')
  const env = options.env
  const proxy = {
    httpProxy: env.http_proxy ?? env.HTTP_PROXY ?? '',
    httpsProxy: env.https_proxy ?? env.HTTPS_PROXY ?? '',
    noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
  }
  const tls = options.ca === undefined ? {} : { ca: options.ca }
  const dispatcher = new EnvHttpProxyAgent({
    // Empty strings, not undefined: undici would otherwise fall back to process.env itself.
    ...proxy,
    connect: { ...tls, lookup: linkLookup },
    // TLS to the cloud inside a CONNECT tunnel.
    requestTls: { ...tls, lookup: linkLookup },
    // http:// clouds (tests) go through the proxy in absolute form: proxies commonly allow CONNECT to 443 only.
    proxyTunnel: false,
    // The headers' deadline is ours (per request); the body's is an idle one.
    headersTimeout: 0,
    bodyTimeout: options.timeoutMs,
  })
  const redact = [credential, ...[proxy.httpProxy, proxy.httpsProxy].map(proxyPassword)].filter((s): s is string => !!s)

  return {
    async request(path, init) {
      if (!path.startsWith('/')) throw new TypeError(`link path must start with '/': ${path}`)
      const headers: Record<string, string> = { accept: 'application/json', ...lowerKeys(init.headers) }
      headers[PROTOCOL_HEADER] = String(LINK_PROTOCOL)
      headers[SCHEMA_HEADER] = SCHEMA_VERSION
      if (credential !== undefined) headers.authorization = `Bearer ${credential}`
      let body: Uint8Array | undefined
      if (init.body instanceof Uint8Array) {
        body = init.body
        headers['content-type'] ??= 'application/octet-stream'
      } else if (init.body !== undefined) {
        body = Buffer.from(typeof init.body === 'string' ? init.body : JSON.stringify(init.body))
        headers['content-type'] ??= 'application/json'
      }
      const call = deadline(init.timeoutMs ?? options.timeoutMs, init.signal)
      try {
        const response = await fetch(`${base.origin}${prefix}${path}`, {
          method: init.method,
          headers,
          body,
          signal: call.signal,
          dispatcher,
          redirect: 'manual',
        })
        call.answered()
        return releasingBody(response, call.release)
      } catch (err) {
        call.release()
        throw err
      }
    },
    describeFailure: (failure) => describeFailure(failure, redact),
    close: () => dispatcher.close(),
  }
}

/**
 * A signal that aborts when the caller's does, or with a TimeoutError when no answer came within `timeoutMs`.
 * Not AbortSignal.any: on Node 20 each composite stays attached to a long-lived source (the agent's shutdown signal)
 * for good (nodejs/node#54614). This call's listener goes on `release()`: once its body ended or the call failed.
 */
function deadline(timeoutMs: number, caller: AbortSignal | undefined) {
  const controller = new AbortController()
  const onAbort = () => controller.abort(caller?.reason)
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
  timer.unref()
  if (caller?.aborted) controller.abort(caller.reason)
  else caller?.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    answered: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer)
      caller?.removeEventListener('abort', onAbort)
    },
  }
}

const NULL_BODY_STATUSES = new Set([204, 205, 304])

/**
 * The answer as a global Response (undici's is another class: `instanceof Response` would fail) whose body calls
 * `release` when it ends, fails or is cancelled.
 */
function releasingBody(response: Awaited<ReturnType<typeof fetch>>, release: () => void): Response {
  const init = { status: response.status, statusText: response.statusText, headers: response.headers as unknown as Headers }
  if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
    release()
    return new Response(null, init)
  }
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (!done) return controller.enqueue(value)
        release()
        controller.close()
      } catch (err) {
        release()
        controller.error(err)
      }
    },
    async cancel(reason) {
      release()
      await reader.cancel(reason)
    },
  })
  return new Response(body, init)
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
}

function proxyPassword(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined
  } catch {
    return undefined
  }
}

/**
 * What went wrong with a link call, and so what the agent does next: back off and retry on `offline` and `server`;
 * stop and tell an admin on `unauthorized` (credential revoked: re-enrol), `version` (upgrade one side) and
 * `diverged` (reseed); `refused` is a request the cloud will never accept as sent; `aborted` is the caller's own
 * cancellation (shutdown); `error` is anything else (a bug here).
 */
export type LinkFailure =
  | { kind: 'offline'; reason: OfflineReason; message: string }
  | { kind: 'unauthorized'; status: number; message: string }
  | { kind: 'version' | 'diverged' | 'refused' | 'server'; status: number; code?: string; detail?: string; retryAfterMs?: number; message: string }
  | { kind: 'aborted' | 'error'; message: string }

export type OfflineReason = 'refused' | 'reset' | 'timeout' | 'dns' | 'unreachable' | 'tls' | 'proxy' | 'redirect' | 'network'

const OFFLINE_CODES: Record<string, OfflineReason> = {
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENETDOWN: 'unreachable',
  EHOSTDOWN: 'unreachable',
  UND_ERR_PRX_TLS: 'tls',
}

const PROBLEM_READ_LIMIT = 64 * 1024

/**
 * Classifies a failed link call: a thrown error (fetch's, or a body read's) or a response (status ≥ 400, or a peer
 * announcing another protocol). Reading a response's problem consumes its body. `redact` strings never appear in the
 * message.
 */
export async function describeFailure(failure: unknown, redact: readonly string[] = []): Promise<LinkFailure> {
  const result = isResponse(failure) ? await describeResponse(failure) : describeError(failure)
  // Redacted first, then cut: a secret is never left half-shown. OpenSSL's reasons span lines.
  const clean = (text: string) =>
    redact
      .reduce((out, secret) => (secret ? out.split(secret).join('[redacted]') : out), text)
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 500)
  return { ...result, message: clean(result.message), ...('detail' in result && result.detail !== undefined ? { detail: clean(result.detail) } : {}) }
}

function isResponse(value: unknown): value is Response {
  return typeof value === 'object' && value !== null && typeof (value as Response).status === 'number' && typeof (value as Response).headers?.get === 'function'
}

async function describeResponse(res: Response): Promise<LinkFailure> {
  const status = res.status
  const peerProtocol = res.headers.get(PROTOCOL_HEADER)
  const problem = await readProblem(res)
  const { code, detail } = problem
  const said = `${status}${code ? ` ${code}` : ''}${detail ? `: ${detail}` : ''}`
  if (peerProtocol !== null && peerProtocol !== String(LINK_PROTOCOL)) {
    return { kind: 'version', status, ...problem, message: `version: the cloud speaks link protocol ${peerProtocol}, this server ${LINK_PROTOCOL} (${said})` }
  }
  if (status === 401)
    return {
      kind: 'unauthorized',
      status,
      message: 'unauthorized: the cloud refused the link credential (revoked, unknown, or its organisation suspended): re-enrol if it was revoked',
    }
  if (status === 409 && code === 'LinkVersionMismatch') return { kind: 'version', status, ...problem, message: `version: ${said}` }
  if (status === 409 && code === 'LinkDiverged') return { kind: 'diverged', status, ...problem, message: `diverged: ${said}` }
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'))
    return { kind: 'server', status, ...problem, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), message: `server: ${said}` }
  }
  if (status >= 300 && status < 400) return { kind: 'offline', reason: 'redirect', message: `offline: the cloud URL redirects (${status}) (a captive portal?)` }
  if (status >= 400) return { kind: 'refused', status, ...problem, message: `refused: ${said}` }
  return { kind: 'error', message: `not a failure: ${status}` }
}

async function readProblem(res: Response): Promise<{ code?: string; detail?: string }> {
  const type = res.headers.get('content-type') ?? ''
  if (!/json/i.test(type) || Number(res.headers.get('content-length') ?? 0) > PROBLEM_READ_LIMIT) {
    await res.body?.cancel().catch(() => {})
    return {}
  }
  try {
    const body = JSON.parse(await res.text()) as { code?: unknown; detail?: unknown }
    return {
      ...(typeof body.code === 'string' ? { code: body.code.slice(0, 100) } : {}),
      ...(typeof body.detail === 'string' ? { detail: body.detail.slice(0, 500) } : {}),
    }
  } catch {
    return {}
  }
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

function describeError(err: unknown): LinkFailure {
  // fetch wraps a network failure as TypeError('fetch failed') and a cut body read as TypeError('terminated'), the
  // precise reason in `cause`: the whole chain is read before falling back on a message.
  const chain: Array<{ name: string; code: string; text: string; dom: boolean }> = []
  for (let e: unknown = err; e && chain.length < 6; e = (e as { cause?: unknown }).cause) {
    const { name, code, message } = e as { name?: unknown; code?: unknown; message?: unknown }
    const dom = e instanceof DOMException
    chain.push({
      name: typeof name === 'string' ? name : '',
      code: typeof code === 'string' ? code : '',
      text: typeof message === 'string' ? message : '',
      dom,
    })
  }
  const said = (l: { code: string; text: string }) => [l.code, l.text].filter(Boolean).join(' ')
  const timeout = chain.find((l) => l.name === 'TimeoutError')
  if (timeout) return offline('timeout', timeout.text || 'no answer within the timeout')
  // The caller's abort is a DOMException; undici names some of its own errors AbortError too (a proxy's refusal).
  if (chain.some((l) => l.dom && l.name === 'AbortError')) return { kind: 'aborted', message: 'aborted by the caller' }
  const known = chain.find((l) => OFFLINE_CODES[l.code])
  if (known) return offline(OFFLINE_CODES[known.code] as OfflineReason, said(known))
  const tls = chain.find((l) => /^ERR_(TLS|SSL)|CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(l.code))
  if (tls) return offline('tls', said(tls))
  const proxy = chain.find((l) => /when HTTP Tunneling|Proxy response/i.test(l.text))
  if (proxy) return offline('proxy', proxy.text)
  const reset = chain.find((l) => /other side closed|terminated|socket hang up/i.test(l.text))
  if (reset) return offline('reset', reset.text)
  if (err instanceof TypeError && err.message === 'fetch failed') return offline('network', describeCause(err))
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
  return { kind: 'error', message: `error: ${text}` }
}

function describeCause(err: Error): string {
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined
  return [cause?.code, cause?.message].filter((s) => typeof s === 'string').join(' ') || err.message
}

function offline(reason: OfflineReason, what: string): LinkFailure {
  return { kind: 'offline', reason, message: `offline (${reason}): ${what}` }
}
