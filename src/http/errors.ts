import { domainError } from '../errors/domain-error.ts'

/**
 * The 415 of every route: the body's content type is not one the route reads. `acceptedTypes` lists those it does
 * (also in the detail), so a client can correct the request without reading the document.
 */
export class UnsupportedMediaType extends domainError('UnsupportedMediaType') {
  constructor(acceptedTypes: readonly string[]) {
    super(`Send the body as ${acceptedTypes.join(' or ')}.`, { extensions: { acceptedTypes: [...acceptedTypes] } })
  }
}

/**
 * A body sent with a content encoding (gzip, deflate, br) in a type its route reads: no route inflates one, so it is
 * refused as what it is rather than read as broken JSON or CSV (a 400 that a client cannot correct from).
 */
export class ContentEncodingRefused extends domainError('UnsupportedMediaType') {
  constructor(encoding: string, type: string) {
    super(`The body is sent with Content-Encoding ${encoding}: send ${type} unencoded (identity).`, {
      extensions: { acceptedTypes: [type], acceptedEncodings: ['identity'] },
    })
  }
}

/** A text body declared in a character set other than UTF-8 (`charset=latin1`, `utf-16`): every text is read as UTF-8. */
export class CharsetRefused extends domainError('UnsupportedMediaType') {
  constructor(charset: string, type: string) {
    super(`The body is sent with charset=${charset || '""'}: send ${type} as UTF-8 (charset=utf-8, or no charset).`, {
      extensions: { acceptedTypes: [type], acceptedCharsets: ['utf-8'] },
    })
  }
}

/**
 * A text body holding a byte that is not UTF-8, the only character set read: not well-formed for its type (as broken
 * JSON is), and named by its line and column.
 */
export class BodyNotUtf8 extends domainError('MalformedBody') {
  constructor(line: number, message: string) {
    super(`The body is not UTF-8 text: line ${line}: ${message}`, { errors: [{ in: 'body', pointer: `/line/${line}`, message }] })
  }
}

/** `GET /readyz`: the database did not answer its ping. */
export class DatabaseUnreachable extends domainError('ServiceUnavailable') {
  constructor() {
    super('The database is not reachable.')
  }
}

/** The server is draining (SIGTERM): an answer it holds open (an AI completion's event stream) ends with this. */
export class ServerDraining extends domainError('ServiceUnavailable') {
  constructor() {
    super('The server is shutting down; send the request again.')
  }
}

/** The organisation used this `Idempotency-Key` within 24 hours for another method, path or body. */
export class IdempotencyKeyReused extends domainError('IdempotencyKeyReused') {
  constructor() {
    super('This Idempotency-Key was used for another request (method, path or body) or by another credential within the last 24 hours.')
  }
}

/** The stored answer was sealed under another verifier secret (rotated since): it cannot be shown and must not run again. */
export class IdempotencyAnswerUnreadable extends domainError('IdempotencyKeyReused') {
  constructor() {
    super('The stored answer for this Idempotency-Key is no longer readable; use a new key.')
  }
}

/** Another request with the same key and body is still executing after the wait. */
export class IdempotencyKeyInProgress extends domainError('IdempotencyKeyInProgress') {
  constructor() {
    super('A request with this Idempotency-Key is still executing; retry after Retry-After seconds to receive its answer.', { retryAfterSeconds: 1 })
  }
}
