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
