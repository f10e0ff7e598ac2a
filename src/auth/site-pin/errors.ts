import { domainError } from '../../errors/domain-error.ts'

/** The lock's end for everyone (the rightful user included): seconds left and the instant. */
function lockExtensions(lockedUntil: number, now: number) {
  return { retryAfter: Math.max(1, Math.ceil((lockedUntil - now) / 1000)), lockedUntil: new Date(lockedUntil).toISOString() }
}

/**
 * Sign-in with this e-mail is locked after repeated wrong PINs: the same answer for every attempt while the lock
 * lasts, whatever the PIN and whether or not the e-mail belongs to a site user (no PIN is checked).
 */
export class PinLocked extends domainError('PinLocked') {
  constructor(lockedUntil: number, now: number) {
    const extensions = lockExtensions(lockedUntil, now)
    super('Sign-in with this e-mail is locked after repeated wrong PINs; try again after Retry-After seconds, or ask an owner to unlock it.', {
      extensions,
      retryAfterSeconds: extensions.retryAfter,
    })
  }
}

/** Too many failures from this client address: refused before any PIN is checked. */
export class SignInThrottled extends domainError('SignInThrottled') {
  constructor(lockedUntil: number, now: number) {
    const extensions = lockExtensions(lockedUntil, now)
    super('Too many failed sign-ins from this address; try again after Retry-After seconds.', { extensions, retryAfterSeconds: extensions.retryAfter })
  }
}
