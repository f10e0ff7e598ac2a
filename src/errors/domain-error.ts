import type { ErrorCode } from './catalog.ts'

export interface FieldProblem {
  /** Where the field is: the request body, the query string, the path, a multipart part or a header. */
  in: 'body' | 'query' | 'params' | 'headers' | 'part'
  /** RFC 6901 JSON pointer to the field inside that location (`/connection/port`). */
  pointer: string
  message: string
}

/**
 * A condition the caller can act on. Services throw these and never think about HTTP;
 * `http/problem.ts` turns them into RFC 9457 problems using the catalog.
 */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C
  readonly errors: FieldProblem[] | undefined
  readonly extensions: Record<string, unknown> | undefined

  constructor(code: C, detail: string, options?: { errors?: FieldProblem[]; extensions?: Record<string, unknown>; cause?: unknown }) {
    // `cause` is for logs (debug) only; the error handler never puts it in a response.
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = code
    this.code = code
    this.errors = options?.errors
    this.extensions = options?.extensions
  }
}

/** A body field that breaks a rule the schema cannot express; a 400 naming the field. */
export function invalidField(pointer: string, message: string, where: FieldProblem['in'] = 'body'): DomainError<'ValidationFailed'> {
  return new DomainError('ValidationFailed', `${pointer.slice(1) || 'request'}: ${message}`, {
    errors: [{ in: where, pointer, message }],
  })
}

export class NotFound extends DomainError<'NotFound'> {
  // One detail for every absent, foreign or revoked resource so that ids cannot be probed.
  constructor() { super('NotFound', 'No such resource.') }
}

export class Forbidden extends DomainError<'Forbidden'> {
  constructor(detail = 'Your role does not allow this operation.') { super('Forbidden', detail) }
}

/** The uniform 401's detail: the same whatever went wrong with the credential. */
export const UNAUTHORIZED_DETAIL = 'A valid credential is required.'

export class Unauthorized extends DomainError<'Unauthorized'> {
  constructor() { super('Unauthorized', UNAUTHORIZED_DETAIL) }
}
