import { domainError } from '../../errors/domain-error.ts'

export class OrgSlugTaken extends domainError('Conflict') {
  constructor(slug: string) {
    super(`An organisation with slug ${slug} already exists.`)
  }
}

export class InvalidOrgSlug extends domainError('ValidationFailed') {
  constructor() {
    super('slug: 1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit', {
      errors: [{ in: 'body', pointer: '/slug', message: 'must be a DNS label: 1 to 63 of a-z, 0-9 and -, not starting or ending with -' }],
    })
  }
}

export class OrgIdTaken extends domainError('Conflict') {
  constructor(id: string) {
    super(`An organisation with id ${id} already exists.`)
  }
}

/** A configuration reload whose new configuration is invalid (422); `problems` lists every bad setting. */
export class ConfigReloadRefused extends domainError('UnprocessableEntity') {
  constructor(problems: string[]) {
    super(`The configuration is invalid; the running configuration stays in force. ${problems.join('; ')}`, { extensions: { problems } })
  }
}
