import { DomainError } from '../../errors/domain-error.ts'

/** Correct e-mail and PIN, but the account is locked: said only after a correct PIN. */
export class PinLocked extends DomainError<'PinLocked'> {
  readonly retryAfterSec: number
  constructor(retryAfterSec: number) {
    super('PinLocked', 'This account is locked after repeated wrong PINs; try again after Retry-After seconds.', { extensions: { retryAfter: retryAfterSec } })
    this.retryAfterSec = retryAfterSec
  }
}

/** Too many failures from this client address: refused before any PIN is checked. */
export class SignInThrottled extends DomainError<'SignInThrottled'> {
  readonly retryAfterSec: number
  constructor(retryAfterSec: number) {
    super('SignInThrottled', 'Too many failed sign-ins from this address; try again after Retry-After seconds.', { extensions: { retryAfter: retryAfterSec } })
    this.retryAfterSec = retryAfterSec
  }
}
