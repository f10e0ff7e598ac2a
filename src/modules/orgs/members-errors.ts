import { domainError } from '../../errors/domain-error.ts'

export class LastOwner extends domainError('Conflict') {
  constructor() {
    super("The organisation's last owner cannot be removed; approve another owner first.")
  }
}

export class MembershipAlreadyActive extends domainError('Conflict') {
  constructor() {
    super('This member is already active; only a pending request can be approved.')
  }
}

export class RoleAboveCaller extends domainError('Forbidden') {
  constructor(what: 'grant' | 'remove') {
    super(
      what === 'grant'
        ? 'A member cannot be approved with a role above the role of the caller.'
        : "A member whose role is above the caller's cannot be removed by that caller.",
    )
  }
}
