import { firstBreak, type RuleBreak } from '../../http/validation.ts'
import { isRole, ROLES } from '../../identity.ts'
import { checkDomain } from './domains-rules.ts'

const MEMBERSHIP_STATUSES = ['pending', 'active', 'revoked']

/** The first rule of the members' endpoints a stored membership row breaks, for rows that arrive without a request. */
export function membershipRowBreak(row: Readonly<Record<string, unknown>>): RuleBreak | undefined {
  const { status, role } = row as { status: string; role: string | null }
  if (!MEMBERSHIP_STATUSES.includes(status)) return { pointer: '/status', message: `must be one of ${MEMBERSHIP_STATUSES.join(', ')}` }
  if (role === null ? status === 'active' : !isRole(role))
    return { pointer: '/role', message: `must be one of ${ROLES.join(', ')}${status === 'active' ? '' : ', or null'}` }
  return undefined
}

/**
 * The first rule of `POST …/domains` a stored binding breaks (`baseDomain`: this server's): a crafted package
 * could otherwise bind `localhost`, an IP address or the base domain itself to the organisation.
 */
export function domainBindingRowBreak(row: Readonly<Record<string, unknown>>, server: { baseDomain?: string }): RuleBreak | undefined {
  if (row.is_enabled !== 0 && row.is_enabled !== 1) return { pointer: '/isEnabled', message: 'must be 0 or 1' }
  return firstBreak(() => {
    checkDomain(row.domain as string, server.baseDomain ?? '')
    return []
  })
}
