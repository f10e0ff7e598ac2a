import { STATUS_CODES, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { ErrorCode } from '../errors/catalog.ts'
import { PROBLEM_CONTENT_TYPE, problemOf } from './problem.ts'

/** What Node's HTTP parser (llhttp) refused, by the part of the request its code names. */
const PART_OF_CODE: Record<string, string> = {
  HPE_INVALID_METHOD: 'the request line (its method)',
  HPE_INVALID_URL: 'the request line (its target)',
  HPE_INVALID_CONSTANT: 'the request line (its HTTP version)',
  HPE_INVALID_VERSION: 'the request line (its HTTP version)',
  HPE_INVALID_HEADER_TOKEN: 'a header line',
  HPE_UNEXPECTED_SPACE: 'a header line',
  HPE_INVALID_CONTENT_LENGTH: "the body's framing (Content-Length)",
  HPE_UNEXPECTED_CONTENT_LENGTH: "the body's framing (Content-Length)",
  HPE_INVALID_TRANSFER_ENCODING: "the body's framing (Transfer-Encoding)",
  HPE_INVALID_CHUNK_SIZE: "the body's framing (a chunk)",
  HPE_INVALID_EOF_STATE: "the body's framing (the connection closed mid-request)",
}

function refusalOf(error: NodeJS.ErrnoException & { reason?: unknown }): { code: ErrorCode; detail: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      code: 'RequestTimeout',
      detail: 'The request did not arrive in time (SITEGRID_HEADERS_TIMEOUT_MS for its headers, SITEGRID_REQUEST_TIMEOUT_MS for the whole).',
    }
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') return { code: 'HeadersTooLarge', detail: 'The request line and headers exceed 16 KiB.' }
  if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { code: 'PayloadTooLarge', detail: "A chunk's extensions exceed 16 KiB." }
  // llhttp's reason is one of its own fixed sentences ("Invalid header value char"), never the request's bytes.
  const reason = typeof error.reason === 'string' ? `: ${error.reason}` : ''
  const part = PART_OF_CODE[error.code ?? ''] ?? 'the request'
  return { code: 'MalformedRequest', detail: `The request is not well-formed HTTP/1.1 (RFC 9112): ${part}${reason}.` }
}

/**
 * Fastify's `clientErrorHandler`: a request that Node's parser refuses (its syntax, headers over 16 KiB, a request or
 * its headers slower than their timeouts) is answered with a problem document like every other refusal, not
 * Fastify's own JSON, and the connection closed. As Node's own handler, it writes nothing once an answer on the
 * connection has begun (a pipelined request behind a response being sent), and nothing is logged of the request's
 * bytes (the error's `rawPacket` holds them, credentials included).
 */
export function clientErrorProblem(nextRequestId: () => string, log: FastifyBaseLogger) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const { code, detail } = refusalOf(error)
    log.debug({ code: error.code }, 'request refused by the HTTP parser')
    // Node's own check (lib/_http_server.js socketOnError): the connection's response in progress, if any.
    const inProgress = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (socket.writable && !inProgress?.headersSent) {
      const problem = problemOf(code, detail, nextRequestId())
      const json = JSON.stringify(problem)
      socket.write(
        `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\ncontent-type: ${PROBLEM_CONTENT_TYPE}\r\n` +
          `x-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
      )
    }
    socket.destroy()
  }
}
