// Bounded JSON over HTTP for provider calls: a timeout, a size cap, no redirects.

export type FetchLike = typeof globalThis.fetch

export interface JsonResponse {
  status: number
  body: unknown
}

export class HttpJsonFailed extends Error {
  override readonly name = 'HttpJsonFailed'
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** https, or plain http to a loopback host (tests, a provider on the same box). */
export function isAllowedProviderUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const url = parseUrl(value)
  if (!url || url.username || url.password || url.hash) return false
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))
}

export function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}

/**
 * Fetches `url` and reads its JSON answer within `timeoutMs` and `maxBytes`. A GET is idempotent (RFC 9110 §9.2.2):
 * its network failure is retried once at once, within the same time limit, as a kept-alive connection the provider
 * closed just as it was reused fails the first attempt; a timeout, an answer of any status, or a POST is not retried.
 */
export async function requestJson(url: string, init: RequestInit, limits: { fetch: FetchLike; timeoutMs: number; maxBytes: number }): Promise<JsonResponse> {
  const signal = AbortSignal.timeout(limits.timeoutMs)
  const attempt = () => limits.fetch(url, { ...init, redirect: 'error', signal })
  const isIdempotent = (init.method ?? 'GET').toUpperCase() === 'GET'
  let res: Response
  try {
    res = await attempt().catch((error: unknown) => {
      if (!isIdempotent || signal.aborted) throw error
      return attempt()
    })
  } catch (cause) {
    throw new HttpJsonFailed(`request to ${url} failed`, { cause })
  }
  const declared = Number(res.headers.get('content-length') ?? 0)
  if (declared > limits.maxBytes) {
    await res.body?.cancel()
    throw new HttpJsonFailed(`response from ${url} is larger than ${limits.maxBytes} bytes`)
  }
  const text = await readCapped(res, limits.maxBytes, url)
  if (!/\bjson\b/i.test(res.headers.get('content-type') ?? '')) {
    throw new HttpJsonFailed(`response from ${url} (status ${res.status}) is not JSON`)
  }
  try {
    return { status: res.status, body: JSON.parse(text) as unknown }
  } catch (cause) {
    throw new HttpJsonFailed(`response from ${url} is malformed JSON`, { cause })
  }
}

async function readCapped(res: Response, maxBytes: number, url: string): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      size += part.value.byteLength
      if (size > maxBytes) throw new HttpJsonFailed(`response from ${url} is larger than ${maxBytes} bytes`)
      chunks.push(part.value)
    }
  } catch (cause) {
    await reader.cancel().catch(() => undefined)
    if (cause instanceof HttpJsonFailed) throw cause
    throw new HttpJsonFailed(`reading the response from ${url} failed`, { cause })
  }
  return Buffer.concat(chunks).toString('utf8')
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
