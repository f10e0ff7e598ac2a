import type { OrgId } from '../ids.ts'

export const ROLES = ['owner', 'admin', 'member'] as const
export type Role = (typeof ROLES)[number]

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 }

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}

/** True when `role` is at least `required` (owner > admin > member). */
export function roleAtLeast(role: Role, required: Role): boolean {
  return RANK[role] >= RANK[required]
}

export type PrincipalKind = 'apiKey' | 'user' | 'sitePin'

/**
 * Who is calling, after authentication. The organisation and the role come from the credential's record
 * on the server (key row, membership, site user), never from the request body.
 */
export interface Principal {
  readonly orgId: OrgId
  readonly kind: PrincipalKind
  /** The organisation role (cloud) or site role (site mode) that policies check. */
  readonly role: Role
  /** keyId for an API key, OIDC `sub` for a bearer session, site user id for a site-PIN principal. */
  readonly subject: string
  readonly isPlatformAdmin: boolean
  /** A signed-in user's membership key (OIDC `oid`); `subject` is then the pairwise `sub`. */
  readonly account?: string
  /**
   * A signed-in user whose membership request awaits approval (issue 4): authenticated, so it is told 403
   * rather than 401, but it fails every policy. `role` is then a placeholder and grants nothing.
   */
  readonly isPending?: boolean
}

/** Who did something, as recorded in audit rows and `createdByUserId`. */
export interface Actor {
  readonly kind: PrincipalKind | 'cli'
  readonly subject: string
  readonly role: Role
  /** As Principal.account: set for signed-in users only. */
  readonly account?: string
}

export function actorOf(principal: Principal): Actor {
  return principal.account === undefined
    ? { kind: principal.kind, subject: principal.subject, role: principal.role }
    : { kind: principal.kind, subject: principal.subject, role: principal.role, account: principal.account }
}

export const CLI_ACTOR: Actor = { kind: 'cli', subject: 'cli', role: 'owner' }
