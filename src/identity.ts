/*
 * Who is who, shared by the layers: the organisation a request is for, the principal a credential proves, the
 * actor recorded for a change. A leaf: it imports nothing from auth/ or modules/, so identity (auth/, http/) and
 * the areas (modules/) both depend on it and not on each other; app.ts joins them.
 */
import type { OrgId } from './ids.ts'

/** A tenant organisation, as the orgs module stores it and the tenancy resolves it from the Host header. */
export interface Org {
  id: OrgId
  slug: string
  name: string
  createdAt: string
}

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

export const PRINCIPAL_KINDS = ['apiKey', 'user', 'sitePin', 'link'] as const
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number]

/**
 * Who is calling, after authentication. The organisation and the role come from the credential's record
 * on the server (key row, membership, site user), never from the request body.
 */
export interface Principal {
  readonly orgId: OrgId
  readonly kind: PrincipalKind
  /** The organisation role (cloud) or site role (site mode) that policies check. */
  readonly role: Role
  /** keyId for an API key, OIDC `sub` for a bearer session, site user id for a site-PIN principal, site server id for a link. */
  readonly subject: string
  readonly isPlatformAdmin: boolean
  /** A signed-in user's membership key (OIDC `oid`); `subject` is then the pairwise `sub`. */
  readonly account?: string
  /**
   * A signed-in user whose membership request awaits approval (issue 4): authenticated, so it is told 403
   * rather than 401, but it fails every policy. `role` is then a placeholder and grants nothing.
   */
  readonly isPending?: boolean
  /**
   * A link principal's sites (issue 26): the site codes its site server was registered for. Link routes take the
   * sites from here, never from the body; set for `link` principals only.
   */
  readonly sites?: readonly string[]
  /**
   * A site-restricted API key's site code (issue 30): the only site whose routes it reaches (http/auth.ts); every
   * other site answers as an unknown one. Absent: every site of the organisation.
   */
  readonly site?: string
  /**
   * An API key restricted to client networks (issue 30): it gives no access that works from elsewhere (http/auth.ts
   * refuses the routes marked `grantsAccess`; the mint keeps new keys inside its networks, api-keys/service.ts).
   */
  readonly networkBound?: true
}

/** Who can act: a principal, or the CLI on the server's own machine. */
export const ACTOR_KINDS = [...PRINCIPAL_KINDS, 'cli'] as const
export type ActorKind = (typeof ACTOR_KINDS)[number]

export function isActorKind(value: string): value is ActorKind {
  return (ACTOR_KINDS as readonly string[]).includes(value)
}

/** Who did something, as recorded in audit rows and `createdByUserId`. */
export interface Actor {
  readonly kind: ActorKind
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

/** What an account may do at an organisation, from the membership table (never from the token). */
export type Access = { readonly status: 'active'; readonly role: Role } | { readonly status: 'pending' | 'revoked' }

/** The identity claims a sign-in or a bearer call brings. */
export interface AccountClaims {
  readonly oid: string
  readonly email?: string
  readonly name?: string
}
