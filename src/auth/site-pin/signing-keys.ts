import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { OrgId } from '../../ids.ts'
import {
  deleteSigningKeysRetiredBefore,
  findNewestActiveSigningKey,
  findVerificationKey,
  insertSigningKey,
  listVerificationKeys,
  retireActiveSigningKeys,
} from './key-store.ts'
import { seal, unseal } from './seal.ts'
import { ACCESS_TOKEN_TTL_S, CLOCK_TOLERANCE_S, SIGNING_ALG } from './token-policy.ts'

/** A retired key keeps verifying for as long as a token it signed may live. */
const RETIRED_KEY_GRACE_MS = (ACCESS_TOKEN_TTL_S + CLOCK_TOLERANCE_S) * 1000

export interface SigningKey {
  kid: string
  key: CryptoKey
}

/**
 * The organisation's local signing keys (ES256), kept in the database with the private half sealed under the
 * verifier secret. Created on first need; `rotate` adds a new key and retires the old ones, which keep
 * verifying until their tokens have expired. Private keys are never logged, returned or served.
 */
export function createSigningKeys(deps: { handle: DatabaseHandle; clock: Clock; keySecret: Buffer }) {
  const { handle, clock, keySecret } = deps
  const db = handle.db
  if (keySecret.length < 32) throw new TypeError('the verifier secret must hold at least 32 bytes')
  const privateKeys = new Map<string, CryptoKey>() // by org:kid; a kid's key never changes

  async function addKey(orgId: OrgId): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true })
    const publicJwk = await exportJWK(publicKey)
    const kid = await calculateJwkThumbprint(publicJwk)
    const now = clock.now()
    await db.transaction().execute(async (trx) => {
      await retireActiveSigningKeys(trx, orgId, now)
      await deleteSigningKeysRetiredBefore(trx, orgId, now - RETIRED_KEY_GRACE_MS)
      await insertSigningKey(trx, {
        org_id: orgId,
        kid,
        alg: SIGNING_ALG,
        created_at: now,
        retired_at: null,
        public_jwk: JSON.stringify({ ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }),
        sealed_private_jwk: seal(keySecret, JSON.stringify(await exportJWK(privateKey)), `${orgId}:${kid}`),
      })
    })
    privateKeys.set(`${orgId}:${kid}`, privateKey)
    return { kid, key: privateKey }
  }

  return {
    /** The key new tokens are signed with, created if the organisation has none that this secret can open. */
    async current(orgId: OrgId): Promise<SigningKey> {
      const row = await findNewestActiveSigningKey(db, orgId)
      if (!row) return addKey(orgId)
      const cached = privateKeys.get(`${orgId}:${row.kid}`)
      if (cached) return { kid: row.kid, key: cached }
      const jwk = unseal(keySecret, row.sealed_private_jwk, `${orgId}:${row.kid}`)
      // Sealed under another verifier secret (it was replaced): start a new key; the old one retires.
      if (jwk === undefined) return addKey(orgId)
      const key = (await importJWK(JSON.parse(jwk) as JWK, row.alg)) as CryptoKey
      privateKeys.set(`${orgId}:${row.kid}`, key)
      return { kid: row.kid, key }
    },

    /** Adds a new signing key and retires the others (they verify for one more token lifetime); returns its kid. */
    async rotate(orgId: OrgId): Promise<string> {
      return (await addKey(orgId)).kid
    },

    /** The public key set served at /.well-known/jwks.json: public members only. */
    async publicKeySet(orgId: OrgId): Promise<{ keys: PublicJwk[] }> {
      const rows = await listVerificationKeys(db, orgId, clock.now() - RETIRED_KEY_GRACE_MS)
      return { keys: rows.map((r) => publicOnly(JSON.parse(r.public_jwk) as JWK)) }
    },

    /** The public key for `kid` if it may still verify tokens of this organisation. */
    async verificationKey(orgId: OrgId, kid: string): Promise<CryptoKey | undefined> {
      const row = await findVerificationKey(db, orgId, kid, clock.now() - RETIRED_KEY_GRACE_MS)
      if (!row || row.alg !== SIGNING_ALG) return undefined
      return (await importJWK({ ...publicOnly(JSON.parse(row.public_jwk) as JWK) }, SIGNING_ALG)) as CryptoKey
    },

    async list(orgId: OrgId) {
      const rows = await listVerificationKeys(db, orgId, clock.now() - RETIRED_KEY_GRACE_MS)
      return rows.map((r) => ({
        kid: r.kid,
        alg: r.alg,
        createdAt: new Date(r.created_at).toISOString(),
        retiredAt: r.retired_at === null ? null : new Date(r.retired_at).toISOString(),
      }))
    },
  }
}

export interface PublicJwk {
  kty: string
  crv: string
  x: string
  y: string
  kid: string
  alg: string
  use: string
}

// Defence in depth: whatever was stored, only the EC public members leave this module.
function publicOnly(jwk: JWK): PublicJwk {
  return { kty: String(jwk.kty), crv: String(jwk.crv), x: String(jwk.x), y: String(jwk.y), kid: String(jwk.kid), alg: String(jwk.alg), use: 'sig' }
}

export type SigningKeys = ReturnType<typeof createSigningKeys>
