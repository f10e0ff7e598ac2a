import { lookup as dnsLookup } from 'node:dns/promises'
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { Readable } from 'node:stream'
import { isForbiddenAddress, isInternalName } from './outbound-address.ts'

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>

/** An outbound call to an address the configuration does not allow (SSRF). Never retried. */
export class OutboundAddressRefused extends Error {
  override readonly name = 'OutboundAddressRefused'
  readonly host: string
  readonly address: string | undefined
  constructor(host: string, address?: string) {
    super(
      `outbound call to ${host}${address !== undefined && address !== host ? ` (${address})` : ''} refused: loopback, private, link-local, metadata or otherwise internal address`,
    )
    this.host = host
    this.address = address
  }
}

export interface GuardOptions {
  /** Every address allowed (an on-premise provider in the plant network): the AI provider's `allowPrivateNetwork`. */
  readonly allowPrivateNetwork?: boolean
  /** Internal addresses allowed one by one (a CIDR allow-list, see outbound-address.ts createAllowList). */
  readonly isAllowed?: (address: string) => boolean
  /** DNS; tests inject their own to play a rebinding resolver. Default: the system resolver, every answer. */
  readonly resolve?: Resolver
  /** Called for every refused attempt (the operator's log). */
  readonly onRefused?: (error: OutboundAddressRefused) => void
}

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * A `fetch` for outbound calls that refuses internal addresses (outbound-address.ts) unless allowed: a literal
 * host is judged as written (after WHATWG URL normalisation: `0x7f.1`, `2130706433` and `[::ffff:127.0.0.1]`
 * all become loopback); a name is resolved once, EVERY answer is judged, and the socket connects to the judged
 * addresses only (a pinned `lookup`), so a DNS answer that changes between check and connect (rebinding) cannot
 * slip through. Redirects are never followed: `redirect: 'manual'` hands the 3xx back, anything else fails.
 * Supports what our callers use: method, headers, a string body, signal; the body streams.
 */
export function createGuardedFetch(options: GuardOptions = {}): typeof fetch {
  const resolve = options.resolve ?? systemResolver
  const allowed = (address: string) => options.allowPrivateNetwork === true || options.isAllowed?.(address) === true || !isForbiddenAddress(address)
  const refuse = (host: string, address?: string): never => {
    const error = new OutboundAddressRefused(host, address)
    options.onRefused?.(error)
    throw error
  }

  // Runs inside net.connect for a name: the only resolution whose answer is used, so the check is the connect.
  const pinnedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname)
      .then((answers) => {
        if (answers.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' })
        const bad = answers.find((a) => !allowed(a.address))
        if (bad !== undefined) refuse(hostname, bad.address)
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? answers.filter((a) => a.family === lookupOptions.family) : answers
        if (wanted.length === 0) throw Object.assign(new Error(`no IPv${String(lookupOptions.family)} address for ${hostname}`), { code: 'ENOTFOUND' })
        if (lookupOptions.all === true) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [...wanted])
        else callback(null, wanted[0]!.address, wanted[0]!.family)
      })
      .catch((error: unknown) => callback(error as NodeJS.ErrnoException, '', 0))
  }

  // Own connection pools: a kept-alive socket was connected to a judged address, but it must never be reused by a
  // guard with another policy (the global agent pools by host and port only).
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }

  return async function guardedFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const url = new URL(input instanceof Request ? input.url : input)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`fetch failed: unsupported protocol ${url.protocol}`)
    const host = url.hostname.replace(/^\[|\]$/g, '')
    // `localhost` and metadata names are internal whatever a resolver says (RFC 6761); an allow-list opts out.
    const nameRefused = isInternalName(host) && options.allowPrivateNetwork !== true && options.isAllowed === undefined
    if (isIP(host) !== 0 ? !allowed(host) : nameRefused) refuse(url.hostname, host)
    const signal = init.signal ?? undefined
    signal?.throwIfAborted()
    const headers = new Headers(init.headers)
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') throw new TypeError('guarded fetch sends string bodies only')
    const body = init.body ?? undefined
    if (body !== undefined) headers.set('content-length', String(Buffer.byteLength(body)))
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest

    const res = await new Promise<IncomingMessage>((resolvePromise, reject) => {
      const req = send(
        url,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(headers),
          signal,
          lookup: pinnedLookup,
          agent: url.protocol === 'https:' ? agents.https : agents.http,
          servername: isIP(host) === 0 ? host : undefined,
        },
        resolvePromise,
      )
      req.on('error', (error) => {
        if (signal?.aborted) reject(signal.reason)
        else if (error instanceof OutboundAddressRefused) reject(error)
        // fetch's contract (and what callers test for): a network failure is a TypeError.
        else reject(new TypeError('fetch failed', { cause: error }))
      })
      req.end(body)
    })

    const status = res.statusCode ?? 0
    if (status >= 300 && status < 400 && init.redirect !== 'manual') {
      res.destroy()
      throw new TypeError(`fetch failed: redirect (${status}) refused; outbound calls never follow redirects`)
    }
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue
      for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(name, item)
    }
    const hasBody = ![101, 204, 205, 304].includes(status) && init.method !== 'HEAD'
    if (!hasBody) res.resume()
    const stream = hasBody ? asFetchBody(res, signal) : null
    return new Response(stream, { status, statusText: res.statusMessage, headers: responseHeaders })
  }
}

/** The body as fetch gives it: a failure mid-body is a TypeError (the caller's abort, its reason), as with undici. */
function asFetchBody(res: IncomingMessage, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  const inner = (Readable.toWeb(res) as ReadableStream<Uint8Array>).getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await inner.read()
        if (done) controller.close()
        else controller.enqueue(value)
      } catch (error) {
        controller.error(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error }))
      }
    },
    cancel: (reason) => inner.cancel(reason),
  })
}
