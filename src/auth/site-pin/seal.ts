import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

// The signing key's private half is sealed under a key derived from the verifier secret (which lives outside
// the database), so a copy of the database alone cannot mint site tokens.
const INFO = 'sitegrid/site-signing-key/v1'

function sealingKey(secret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO, 32))
}

/** AES-256-GCM; `context` (org and kid) is bound as associated data, so a sealed value cannot be moved between rows. */
export function seal(secret: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', sealingKey(secret), iv)
  cipher.setAAD(Buffer.from(context))
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
}

/** The plaintext, or undefined when the value was sealed under another secret or altered. */
export function unseal(secret: Buffer, sealed: string, context: string): string | undefined {
  const [version, iv, tag, body] = sealed.split('.')
  if (version !== 'v1' || !iv || !tag || body === undefined) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(secret), Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}
