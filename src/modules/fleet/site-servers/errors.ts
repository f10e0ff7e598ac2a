import { domainError } from '../../../errors/domain-error.ts'

export class SiteAlreadyLinked extends domainError('Conflict') {
  constructor(site: string, serverId: string) {
    super(`Site ${site} is already linked to site server ${serverId}; revoke that server first.`, {
      errors: [{ in: 'body', pointer: '/sites', message: `site ${site} is already linked to site server ${serverId}` }],
      extensions: { site, serverId },
    })
  }
}

/** Both organisation ids, so the operator sees which data the site server holds and which the code is for. */
export class LinkOrgMismatch extends domainError('LinkOrgMismatch') {
  constructor(siteOrgId: string, cloudOrgId: string) {
    super(
      `The site server holds the data of organisation ${siteOrgId}, but this enrolment code is for organisation ${cloudOrgId}. ` +
        'A site server enrols only with the organisation whose data it holds (a tenant transfer keeps ids).',
      { extensions: { siteOrgId, cloudOrgId } },
    )
  }
}

export class LinkVersionMismatch extends domainError('LinkVersionMismatch') {
  constructor(theirs: string, ours: number) {
    super(`The peer speaks fleet-link protocol ${theirs}; this server speaks ${ours}. Upgrade the older side.`, {
      extensions: { peerProtocol: theirs, protocol: ours },
    })
  }
}

/** The same protocol at another schema (the latest migration): the two sides' rows are not the same shape. */
export class LinkSchemaMismatch extends domainError('LinkVersionMismatch') {
  constructor(theirs: string, ours: string) {
    super(`The peer runs schema ${theirs}; this server runs ${ours}. The link waits until both run the same version; both keep working locally.`, {
      extensions: { peerSchema: theirs, schema: ours },
    })
  }
}

export class LinkServerMismatch extends domainError('Conflict') {
  constructor(serverId: string) {
    super(`This enrolment code is for another site server than ${serverId}, the one this site server is enrolled as. Use a code issued for ${serverId}.`, {
      errors: [{ in: 'body', pointer: '/serverId', message: 'is not the site server this code was issued for' }],
    })
  }
}
