import { domainError } from '../../errors/domain-error.ts'

export class SiteUserEmailTaken extends domainError('Conflict') {
  constructor() {
    super('A site user with this e-mail already exists in the organisation.')
  }
}

export class LastSiteOwner extends domainError('Conflict') {
  constructor() {
    super('The last site owner cannot be removed or demoted; make another user owner first.')
  }
}

export class SiteRoleAboveCaller extends domainError('Forbidden') {
  constructor() {
    super('Nobody can give a site role above their own, or manage a user who ranks above them.')
  }
}
