import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'

// Provider tokens rest in the sessions table sealed with AES-256-GCM under a key derived from the verifier
// secret, so a copy of the database (a backup, a replica) holds no usable access or refresh token. The AAD
// binds each value to its session row: a sealed token moved to another row does not open.

export interface Sealer {
  seal(plaintext: string, context: string): string
  /** Undefined when the value was not sealed by this key for this context. */
  open(sealed: string, context: string): string | undefined
}

export function createSealer(secret: Buffer): Sealer {
  if (secret.length < 32) throw new TypeError('the sealing secret must hold at least 32 bytes')
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'sitegrid session tokens v1', 32))
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context, 'utf8'))
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')
    },
    open(sealed, context) {
      const raw = Buffer.from(sealed, 'base64url')
      if (raw.length < 28) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(Buffer.from(context, 'utf8'))
        decipher.setAuthTag(raw.subarray(12, 28))
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
      } catch {
        return undefined
      }
    },
  }
}

/** A fresh cookie value: 256 random bits. */
export function newCookieValue(): string {
  return randomBytes(32).toString('base64url')
}

/** Rows are keyed by a hash of the cookie: reading the table does not yield a cookie that works. */
export function cookieDigest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url')
}
