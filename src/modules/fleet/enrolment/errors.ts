import { domainError } from '../../../errors/domain-error.ts'

export class LinkAlreadyEnrolled extends domainError('Conflict') {
  constructor(cloudUrl: string) {
    super(`This site server is enrolled with ${cloudUrl}; it re-enrols only there (with a new code from that cloud).`, {
      errors: [{ in: 'body', pointer: '/cloud', message: `is not ${cloudUrl}, the cloud this site server is enrolled with` }],
    })
  }
}

export class SeveralOrganisations extends domainError('Conflict') {
  constructor() {
    super('This site server holds several organisations; set SITEGRID_SITE_ORG to the one to link.')
  }
}

/** The cloud refused the one-time code: unknown, expired or already used. */
export class EnrolmentCodeRefused extends domainError('Unauthorized') {
  constructor() {
    super('The cloud refused the enrolment code: it is unknown, expired or already used. Ask an administrator for a new one.')
  }
}

/** The cloud did not answer, or not with the fleet link's answer; `what` says what came back (never a secret). */
export class LinkCloudUnavailable extends domainError('LinkCloudUnavailable') {
  constructor(what: string, options?: { cause?: unknown }) {
    super(`The cloud could not complete the request: ${what}.`, options)
  }
}

export class NotEnrolled extends domainError('Conflict') {
  constructor() {
    super('This site server is not enrolled with a cloud: run `sitegrid link enrol --cloud URL --code CODE` first.')
  }
}

/** The cloud refused the enrolment for a reason of its own (e.g. the code is for another site server); its detail is quoted. */
export class CloudRefusedEnrolment extends domainError('Conflict') {
  constructor(detail: string) {
    super(`The cloud refused the enrolment: ${detail}`)
  }
}

/** A link call with the stored credential got the uniform 401: it was revoked in the cloud (or the server removed). */
export class LinkCredentialRefused extends domainError('Unauthorized') {
  constructor() {
    super('The cloud refused this site server’s link credential (revoked?). Re-enrol with a new code (`sitegrid link enrol`), then run the command again.')
  }
}

/** A reseed whose local part was done (the sites' old data removed, the new epoch stored) but whose seed was cut off. */
export class ReseedIncomplete extends domainError('LinkCloudUnavailable') {
  constructor(what: string, options?: { cause?: unknown }) {
    super(
      `The reseed removed this server's data of its linked sites and the cloud accepted the new epoch, but the seed did not complete (${what}). ` +
        'The sites are missing here until it does: run `sitegrid link seed` to finish it (no new code needed).',
      options,
    )
  }
}
