import { domainError } from '../../errors/domain-error.ts'

export class SiteCodeTaken extends domainError('Conflict') {
  constructor(code: string) {
    super(`A site with code ${code} already exists in this organisation.`)
  }
}

export class SiteDeletionUnconfirmed extends domainError('ConfirmationRequired') {
  constructor(code: string, wouldDelete: Record<string, number>) {
    super(`Deleting site ${code} removes everything it owns; repeat with ?confirm=${code}.`, { extensions: { wouldDelete } })
  }
}
