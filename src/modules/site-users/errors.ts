import { DomainError } from '../../errors/domain-error.ts'

export class SiteUserEmailTaken extends DomainError<'Conflict'> {
  constructor() { super('Conflict', 'A site user with this e-mail already exists in the organisation.') }
}

export class LastSiteOwner extends DomainError<'Conflict'> {
  constructor() { super('Conflict', 'The last site owner cannot be removed or demoted; make another user owner first.') }
}

export class SiteRoleAboveCaller extends DomainError<'Forbidden'> {
  constructor() { super('Forbidden', 'Nobody can give a site role above their own, or manage a user who ranks above them.') }
}
