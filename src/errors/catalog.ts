/**
 * Every wire error code with its HTTP status, title and documentation. Codes never change once shipped.
 * `satisfies` makes a missing entry a compile error; `test/errors.test.ts` walks the whole table.
 */
export const catalog = {
  ValidationFailed: { status: 400, title: 'The request is not valid', doc: 'A field breaks a rule of the schema. `errors` lists each field (`in`, `pointer`) with the rule it breaks.' },
  MalformedBody: { status: 400, title: 'The body could not be parsed', doc: 'The body is not well-formed for its content type (for example broken JSON, or an empty body with a JSON content type).' },
  ReservedRole: { status: 400, title: 'The role is reserved for the account control plane', doc: 'Roles `platform_admin`, `platform_operator` and `service` (any case) cannot be given to a tenant API key.' },
  ExpiryPolicyViolation: { status: 400, title: 'Expiry outside the allowed window', doc: '`expiresAt` must lie from 1 hour to 730 days after the current time; a past value fails the minimum.' },
  Unauthorized: { status: 401, title: 'Unauthorized', doc: 'The credential is missing, malformed, unknown, wrong, revoked or expired, or belongs to another organisation than the host. The answer is the same in every case.' },
  Forbidden: { status: 403, title: 'Forbidden', doc: 'The caller is authenticated but its role is too low for this operation.' },
  NotFound: { status: 404, title: 'Not found', doc: 'The resource does not exist, belongs to another organisation, or was revoked. The cause is never revealed.' },
  MethodNotAllowed: { status: 405, title: 'Method not allowed', doc: 'The path exists but not with this method.' },
  Conflict: { status: 409, title: 'Conflict', doc: 'The request conflicts with the current state (a duplicate, or a resource still in use).' },
  ConfirmationRequired: { status: 409, title: 'Confirmation required', doc: 'A destructive operation needs an explicit confirmation; the answer says what would be affected.' },
  PayloadTooLarge: { status: 413, title: 'Payload too large', doc: 'The body exceeds the configured size limit (`SITEGRID_BODY_LIMIT_BYTES`).' },
  UnsupportedMediaType: { status: 415, title: 'Unsupported media type', doc: 'The content type of the body is not accepted by this endpoint.' },
  UnprocessableEntity: { status: 422, title: 'Unprocessable entity', doc: 'The body is well-formed but refers to something that does not exist or cannot be used.' },
  RateLimited: { status: 429, title: 'Too many requests', doc: 'The per-credential request rate was exceeded. `Retry-After` says when to try again.' },
  InternalError: { status: 500, title: 'Internal error', doc: 'An unexpected failure. Nothing about its cause is returned; the request id in `instance` finds it in the log.' },
  ServiceUnavailable: { status: 503, title: 'Service unavailable', doc: 'The server is shutting down or a dependency (the database) is not reachable. Retry later.' },
} as const satisfies Record<string, { status: number; title: string; doc: string }>

export type ErrorCode = keyof typeof catalog

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(catalog, value)
}
