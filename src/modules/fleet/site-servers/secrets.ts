import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { newId, randomBase62 } from '../../../ids.ts'

/**
 * The fleet link's two secrets (issue 26). The one-time enrolment code is stored as its SHA-256 (a random code of
 * ~190 bits needs no key); the link credential `slk_<server id>_<secret>` as an HMAC under the verifier secret, like
 * API keys, so a copy of the database alone proves nothing.
 */
export const ENROLMENT_CODE_PATTERN = /^sle_[0-9A-Za-z]{32}$/
export const CREDENTIAL_PATTERN = /^slk_(srv_[0-9A-Z]{26})_[0-9A-Za-z]{32}$/

export const newSiteServerId = (now: number) => newId('srv', now)
export const newEnrolmentCode = () => `sle_${randomBase62(32)}`
export const newCredential = (serverId: string) => `slk_${serverId}_${randomBase62(32)}`

export function codeHashOf(code: string): string {
  return createHash('sha256').update(code).digest('hex')
}

/** The server id a well-formed credential names; undefined otherwise. */
export function serverIdOf(credential: string): string | undefined {
  return CREDENTIAL_PATTERN.exec(credential)?.[1]
}

export function credentialVerifierOf(secret: Buffer, credential: string): string {
  return createHmac('sha256', secret).update(credential).digest('hex')
}

export function verifiersEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && timingSafeEqual(x, y)
}
