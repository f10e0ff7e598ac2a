import { catalog, type ErrorCode } from './catalog.ts'

export interface FieldProblem {
  /** Where the field is: the request body, the query string, the path, a multipart part or a header. */
  in: 'body' | 'query' | 'params' | 'headers' | 'part'
  /** RFC 6901 JSON pointer to the field inside that location (`/connection/port`). */
  pointer: string
  message: string
}

/** A property's name as one token of a JSON pointer (RFC 6901: `~` is written `~0`, `/` is written `~1`). */
export const pointerToken = (name: string): string => name.replaceAll('~', '~0').replaceAll('/', '~1')

export interface DomainErrorOptions {
  errors?: FieldProblem[]
  extensions?: Record<string, unknown>
  /** Seconds the caller should wait before sending it again: the answer's `Retry-After` header (http/problem.ts). */
  retryAfterSeconds?: number
  /** For logs (debug) only; the error handler never puts it in a response. */
  cause?: unknown
}

/**
 * A condition the caller can act on. Services throw these and never think about HTTP;
 * `http/problem.ts` turns them into RFC 9457 problems using the catalog. Declare one with `domainError(code)`.
 */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C
  readonly errors: FieldProblem[] | undefined
  readonly extensions: Record<string, unknown> | undefined
  readonly retryAfterSeconds: number | undefined

  constructor(code: C, detail: string, options?: DomainErrorOptions) {
    // `cause` is for logs (debug) only; the error handler never puts it in a response.
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = code
    this.code = code
    this.errors = options?.errors
    this.extensions = options?.extensions
    this.retryAfterSeconds = options?.retryAfterSeconds
  }

  /** The HTTP status, from the catalog only: no error class states its own. */
  get status(): (typeof catalog)[C]['status'] {
    return catalog[this.code].status
  }
}

/**
 * The base class of a named error with the wire code `code`, which the class then carries as its static `code`:
 * `class SiteCodeTaken extends domainError('Conflict') { constructor(code: string) { super(`…${code}…`) } }`.
 */
export function domainError<C extends ErrorCode>(code: C) {
  return class extends DomainError<C> {
    static readonly code: C = code

    constructor(detail: string, options?: DomainErrorOptions) {
      super(code, detail, options)
    }
  }
}

/** A field that breaks a rule the schema cannot express; a 400 naming the field. */
export class InvalidField extends domainError('ValidationFailed') {
  constructor(pointer: string, message: string, where: FieldProblem['in'] = 'body') {
    super(`${pointer.slice(1) || 'request'}: ${message}`, { errors: [{ in: where, pointer, message }] })
  }
}

/** A body field that breaks a rule the schema cannot express; a 400 naming the field. */
export function invalidField(pointer: string, message: string, where: FieldProblem['in'] = 'body'): DomainError<'ValidationFailed'> {
  return new InvalidField(pointer, message, where)
}

export class NotFound extends domainError('NotFound') {
  // One detail for every absent, foreign or revoked resource so that ids cannot be probed.
  constructor() {
    super('No such resource.')
  }
}

export class Forbidden extends domainError('Forbidden') {
  constructor(detail = 'Your role does not allow this operation.') {
    super(detail)
  }
}

/** The uniform 401's detail: the same whatever went wrong with the credential. */
export const UNAUTHORIZED_DETAIL = 'A valid credential is required.'

export class Unauthorized extends domainError('Unauthorized') {
  constructor() {
    super(UNAUTHORIZED_DETAIL)
  }
}
