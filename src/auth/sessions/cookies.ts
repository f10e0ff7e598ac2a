import type { FastifyReply, FastifyRequest } from 'fastify'
import { Forbidden } from '../../errors/domain-error.ts'

// `__Host-` (RFC 6265bis §4.1.3.2): Secure, Path=/, no Domain, so a sibling tenant subdomain can neither
// set nor overwrite it. HttpOnly keeps it from scripts; SameSite=Lax still sends it on the top-level
// redirect back from the provider, and never on a cross-site POST.
export const SESSION_COOKIE = '__Host-sitegrid-session'
export const LOGIN_COOKIE = '__Host-sitegrid-login'

const ATTRIBUTES = { path: '/', httpOnly: true, secure: true, sameSite: 'lax' } as const

export function setHostCookie(reply: FastifyReply, name: string, value: string, maxAgeSec: number): void {
  reply.setCookie(name, value, { ...ATTRIBUTES, maxAge: maxAgeSec })
}

export function clearHostCookie(reply: FastifyReply, name: string): void {
  reply.setCookie(name, '', { ...ATTRIBUTES, maxAge: 0, expires: new Date(0) })
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const value = request.cookies[name]
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined
}

/** The public origin of the request's host: `{scheme}://{host[:port]}`. */
export function originOf(request: FastifyRequest, scheme: 'https' | 'http'): string {
  return `${scheme}://${request.host}`
}

/**
 * Cross-site request forgery defence for the state-changing session endpoints: a browser always sends
 * Origin on a POST, and it must be this host's own. A missing or foreign Origin is refused (403).
 */
export function requireSameOrigin(request: FastifyRequest, scheme: 'https' | 'http'): void {
  if (request.headers.origin !== originOf(request, scheme)) throw new Forbidden("The Origin header must be this host's own origin.")
}
