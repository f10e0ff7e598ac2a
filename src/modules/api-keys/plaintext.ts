import { createHmac, timingSafeEqual } from 'node:crypto'
import { randomBase62 } from '../../ids.ts'

/** Spec 2.1: `csk_` followed by 32 base62 characters. */
export const KEY_PATTERN = /^csk_[0-9A-Za-z]{32}$/
export const KEY_PREFIX_LENGTH = 8

export function generatePlaintext(): string {
  return `csk_${randomBase62(32)}`
}

/** The one-way verifier stored in place of the key: HMAC-SHA256 under the verifier secret, hex. */
export function verifierOf(secret: Buffer, plaintext: string): string {
  return createHmac('sha256', secret).update(plaintext).digest('hex')
}

export function verifiersEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && timingSafeEqual(x, y)
}
