import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import type { Org, Role } from '../../src/identity.ts'
import { CLI_ACTOR } from '../../src/identity.ts'
import { pinScryptCost } from '../../src/modules/site-users/pin-hash.ts'
import { createSiteUsersService } from '../../src/modules/site-users/service.ts'
import type { Harness } from '../harness.ts'

/**
 * Harness settings for site tests: a cheap scrypt cost (2^10) so that the many sign-ins stay fast. Tests of the
 * production cost and of the timing of failures use the default instead.
 */
export const CHEAP_PINS = { SITEGRID_PIN_SCRYPT_LOG2N: '10' }

/** A valid `POST /api/site/users` body for a new user of `role` (a unique e-mail), with `extra` fields over it. */
export const newUserBody = (role: string, extra: Record<string, unknown> = {}) => ({
  email: `${role}-${Math.random().toString(36).slice(2, 8)}@Plant.example`,
  displayName: `New ${role}`,
  siteRole: role,
  pin: '13572468',
  ...extra,
})

/** The organisation's site-user rows, to prove a refused request changed nothing. */
export function siteUserRows(h: Harness, org: Org) {
  return h.handle.db
    .selectFrom('site_users')
    .select(['id', 'email', 'site_role', 'display_name', 'pin_hash'])
    .where('org_id', '=', org.id)
    .orderBy('id')
    .execute()
}

export interface SiteUserFixture {
  id: string
  email: string
  pin: string
  role: Role
}

/** Adds a site user through the service (as the CLI would) with a fresh e-mail and PIN. */
export async function addSiteUser(h: Harness, org: Org, role: Role = 'owner', options: { email?: string; pin?: string } = {}): Promise<SiteUserFixture> {
  const siteUsers = createSiteUsersService({ handle: h.handle, clock: h.clock, scryptCost: pinScryptCost(h.config) })
  const email = options.email ?? `${role}-${randomBytes(4).toString('hex')}@plant.example`
  const pin = options.pin ?? String(100000 + (randomBytes(3).readUIntBE(0, 3) % 900000))
  const user = await siteUsers.create(org.id, CLI_ACTOR, { email, displayName: `${role} user`, siteRole: role, pin })
  return { id: user.id, email, pin, role }
}

export function login(h: Harness, org: Org, email: string, pin: string, remoteAddress = '10.0.0.1'): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST',
    url: '/auth/site/login',
    remoteAddress,
    headers: { host: `${org.slug}.localhost`, 'content-type': 'application/json' },
    payload: JSON.stringify({ email, pin }),
  })
}

export function refresh(h: Harness, org: Org, refreshToken: string): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST',
    url: '/auth/site/refresh',
    headers: { host: `${org.slug}.localhost`, 'content-type': 'application/json' },
    payload: JSON.stringify({ refreshToken }),
  })
}

/** Signs a site user in and returns the session body. */
export async function signedIn(h: Harness, org: Org, role: Role = 'owner'): Promise<{ user: SiteUserFixture; accessToken: string; refreshToken: string }> {
  const user = await addSiteUser(h, org, role)
  const res = await login(h, org, user.email, user.pin)
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`)
  const body = res.json() as { accessToken: string; refreshToken: string }
  return { user, accessToken: body.accessToken, refreshToken: body.refreshToken }
}
