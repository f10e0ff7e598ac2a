import { DomainError } from '../../errors/domain-error.ts'

export class OrgSlugTaken extends DomainError<'Conflict'> {
  constructor(slug: string) { super('Conflict', `An organisation with slug ${slug} already exists.`) }
}

export class InvalidOrgSlug extends DomainError<'ValidationFailed'> {
  constructor() {
    super('ValidationFailed', 'slug: 1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit', {
      errors: [{ in: 'body', pointer: '/slug', message: 'must be a DNS label: 1 to 63 of a-z, 0-9 and -, not starting or ending with -' }],
    })
  }
}
