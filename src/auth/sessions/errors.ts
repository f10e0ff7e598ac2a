import { domainError } from '../../errors/domain-error.ts'

/** The identity provider's token endpoint is not reachable (its `unavailable`); the provider's error is the cause. */
export class IdentityProviderUnreachable extends domainError('ServiceUnavailable') {
  constructor(cause: unknown) {
    super('The identity provider is not reachable; try again shortly.', { cause })
  }
}

/** A browser sign-in that cannot be accepted (400): no attempt in progress, expired, replayed, or refused by the provider. */
export class SignInFailed extends domainError('SignInFailed') {
  constructor(detail: string, cause?: unknown) {
    super(detail, cause === undefined ? undefined : { cause })
  }
}
