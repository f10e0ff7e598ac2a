import type { Actor, Role } from '../../identity.ts'
import type { OrgId } from '../../ids.ts'

/*
 * What site-PIN sign-in asks of the site users. Declared here, satisfied by the site-users module's service, passed
 * in by app.ts: auth/ imports no module.
 */

/** What sign-in and token validation need to know about a site user; never the PIN hash. */
export interface SiteUserCredential {
  id: string
  role: Role
  tokenVersion: number
}

export interface SiteUserCredentials {
  /** The form an e-mail is stored under, and the one its sign-in lock is keyed by. */
  normaliseEmail(email: string): string
  /** The user when e-mail and PIN match, else undefined; an unknown e-mail costs as long as a wrong PIN. */
  checkPin(orgId: OrgId, email: string, pin: string): Promise<SiteUserCredential | undefined>
  /** Current role and token version of a site user, read on every request a site-PIN token makes. */
  credentialState(orgId: OrgId, userId: string): Promise<SiteUserCredential | undefined>
  /** Replaces the PIN; every token issued before stops working. */
  setPin(orgId: OrgId, actor: Actor, userId: string, pin: string): Promise<void>
}
