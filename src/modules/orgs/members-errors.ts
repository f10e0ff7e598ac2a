import { DomainError } from '../../errors/domain-error.ts'

export class LastOwner extends DomainError<'Conflict'> {
  constructor() { super('Conflict', 'The organisation\'s last owner cannot be removed; approve another owner first.') }
}

export class MembershipAlreadyActive extends DomainError<'Conflict'> {
  constructor() { super('Conflict', 'This member is already active; only a pending request can be approved.') }
}

export class RoleAboveCaller extends DomainError<'Forbidden'> {
  constructor(what: 'grant' | 'remove') {
    super('Forbidden', what === 'grant'
      ? 'A member cannot be approved with a role above the role of the caller.'
      : 'A member whose role is above the caller\'s cannot be removed by that caller.')
  }
}
