import { DomainError } from '../../errors/domain-error.ts'

export class SiteCodeTaken extends DomainError<'Conflict'> {
  constructor(code: string) { super('Conflict', `A site with code ${code} already exists in this organisation.`) }
}

export class SiteDeletionUnconfirmed extends DomainError<'ConfirmationRequired'> {
  constructor(code: string, wouldDelete: Record<string, number>) {
    super('ConfirmationRequired', `Deleting site ${code} removes everything it owns; repeat with ?confirm=${code}.`, { extensions: { wouldDelete } })
  }
}
