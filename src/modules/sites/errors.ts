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

/** A site a site server serves (fleet link) is not deleted from one side: its data lives on both. */
export class SiteLinked extends domainError('Conflict') {
  constructor(code: string, where: 'cloud' | 'site') {
    super(
      where === 'cloud'
        ? `Site ${code} is served by a site server over the fleet link: its alarms and historian data live there. Revoke that site server (or register it without this site) before deleting the site.`
        : `Site ${code} is linked to the cloud: the cloud keeps its records. Delete it in the cloud after revoking this site server, or leave it.`,
    )
  }
}
