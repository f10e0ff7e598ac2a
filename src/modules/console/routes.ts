import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { NotFound } from '../../errors/domain-error.ts'
import { CONSOLE_PATHS } from '../../../web/src/paths.ts'
import { ConsoleNotBuilt } from './errors.ts'

/** Where `npm run build:console` (web/build.ts) writes the console. */
export const DEFAULT_CONSOLE_DIR = join(import.meta.dirname, '..', '..', '..', 'web', 'dist', 'console')

export interface ConsoleOptions {
  /** The build output: index.html and assets/ (content-hashed names). */
  dir: string
  mode: 'cloud' | 'site'
  /** Cloud mode with a browser sign-in client: the sign-in page offers GET /auth/login. */
  browserSignIn: boolean
}

/**
 * The HTML's policy: scripts and styles only from this origin (no inline script, no eval), data only from the
 * same-origin API, never framed. uPlot styles its elements through the CSSOM (element.style), which style-src
 * does not govern; its stylesheet is in the console's own.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const ASSET_NAME = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.(js|css)$/
const CONTENT_TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' }
const etagOf = (body: string | Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | null)?.code === 'ENOENT' || (error as NodeJS.ErrnoException | null)?.code === 'ENOTDIR'

function send(request: FastifyRequest, reply: FastifyReply, body: string | Buffer, etag: string) {
  reply.header('etag', etag).header('x-content-type-options', 'nosniff')
  if (request.headers['if-none-match'] === etag) return reply.code(304).send()
  return reply.send(body)
}

/**
 * The web console (issue 13): index.html at `/` and at every console path (history routing: a reload or a bookmark
 * of /sites/PLANT-1 gets the same page, which routes on the client), and its content-hashed assets under /assets/.
 * Public: these are static files; every piece of data the console shows comes from the API with credentials.
 */
export const consoleRoutes: FastifyPluginAsync<ConsoleOptions> = async (app, options) => {
  const serveIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    let template: string
    try {
      template = await readFile(join(options.dir, 'index.html'), 'utf8')
    } catch (error) {
      if (isMissing(error)) throw new ConsoleNotBuilt()
      throw error
    }
    const html = template.replace('%MODE%', options.mode).replace('%BROWSER_SIGN_IN%', String(options.browserSignIn))
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cache-control', 'no-cache')
    return send(request, reply, html, etagOf(html))
  }

  for (const path of CONSOLE_PATHS) {
    app.get(path, { config: { policy: 'public' }, schema: { hide: true } }, serveIndex)
  }

  app.get('/assets/:file', { config: { policy: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params as { file: string }
    const match = ASSET_NAME.exec(file)
    if (!match) throw new NotFound()
    let body: Buffer
    try {
      body = await readFile(join(options.dir, 'assets', file))
    } catch (error) {
      if (isMissing(error)) throw new NotFound()
      throw error
    }
    reply.type(CONTENT_TYPES[match[1]!]!).header('cache-control', 'public, max-age=31536000, immutable')
    return send(request, reply, body, etagOf(body))
  })
}
