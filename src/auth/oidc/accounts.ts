import type { Access, AccountClaims } from '../../identity.ts'
import type { OrgId } from '../../ids.ts'

/*
 * What OIDC sign-in asks of the organisations' records. Declared here, satisfied by the orgs module's members and
 * platform-admins services, passed in by app.ts: auth/ imports no module.
 */

/** The membership table: what an account may do at an organisation (never read from the token). */
export interface Memberships {
  /** The stored access of an account, recording nothing; undefined when it never signed in here. */
  accessOf(orgId: OrgId, accountId: string): Promise<Access | undefined>
  /** The access of an account on a bearer call; an account never seen here gets a pending membership request recorded. */
  accessForBearer(orgId: OrgId, claims: AccountClaims): Promise<Access>
  /** An interactive sign-in: records the request of an unknown account, reopens a revoked one, refreshes e-mail and name. */
  recordSignIn(orgId: OrgId, claims: AccountClaims): Promise<Access>
}

/** The control plane's operators (`sitegrid platform-admin`). */
export interface PlatformAdminList {
  isPlatformAdmin(accountId: string): Promise<boolean>
}
