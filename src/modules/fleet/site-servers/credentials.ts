import type { DatabaseHandle } from '../../../db/connect.ts'
import type { OrgId } from '../../../ids.ts'
import { CREDENTIAL_PATTERN, credentialVerifierOf, verifiersEqual } from './secrets.ts'
import { findActiveSiteServerByVerifier } from './store.ts'

/** The link credentials as the auth selector reads them (auth/link-validator.ts `LinkLookup`; app.ts hands it over). */
export function createLinkCredentials(deps: { handle: DatabaseHandle; keySecret: Buffer }) {
  const { handle, keySecret } = deps
  if (keySecret.length < 32) throw new TypeError('the verifier secret must hold at least 32 bytes')
  return {
    /** Whether a credential has the shape of a link credential; a malformed one is worth no hash and no query. */
    isWellFormed(credential: string): boolean {
      return CREDENTIAL_PATTERN.test(credential)
    },

    /** The verifier a well-formed link credential is stored under. */
    verifierOf(credential: string): string {
      return credentialVerifierOf(keySecret, credential)
    },

    /** The enrolled, non-revoked site server stored under a verifier (compared in constant time); undefined otherwise. */
    async activeServerByVerifier(orgId: OrgId, verifier: string) {
      const row = await findActiveSiteServerByVerifier(handle.db, orgId, verifier)
      if (!row || row.credential_verifier === null || !verifiersEqual(row.credential_verifier, verifier)) return undefined
      return { orgId: row.org_id as OrgId, serverId: row.id, sites: JSON.parse(row.sites) as string[] }
    },
  }
}
