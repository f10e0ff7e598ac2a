import { DomainError, domainError } from '../errors/domain-error.ts'
import type { Org } from '../identity.ts'

/**
 * Ctrl-C during a long command (progress.ts): what it was reading stops. A DomainError, so the services treat it as
 * input refused half-way, as an HTTP upload cut short (MultipartMalformed): nothing of it is kept (a historian import
 * leaves no failed batch, a tenant import rolls back). main.ts prints it and exits 130.
 */
export class Cancelled extends domainError('MalformedBody') {
  constructor() {
    super('cancelled (SIGINT); nothing of it was kept')
  }
}

/** Arguments of a command that break the rules of what they describe (the area's schema): each names its `--option` or ARGUMENT. */
export class OptionsInvalid extends domainError('ValidationFailed') {
  constructor(problems: Array<{ argument: string; message: string }>) {
    super('the arguments are not valid', { errors: problems.map((p) => ({ in: 'body', pointer: `/${p.argument}`, message: p.message })) })
  }
}

/**
 * A thing named on the command line (an organisation, a site user) that this server does not hold: NotFound (exit 1)
 * naming it and the command that lists them. The operator at the server itself may learn what exists, unlike an API
 * caller (the API's one anonymous 404).
 */
export class NotOnServer extends domainError('NotFound') {}

/** The service's anonymous NotFound of a thing the command named, as NotOnServer saying what and where to look. */
export async function naming<T>(missing: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (err) {
    if (err instanceof DomainError && err.code === 'NotFound') throw new NotOnServer(missing)
    throw err
  }
}

/** A command naming a site by CODE: the service's anonymous NotFound names the site and where to look. */
export function onSite<T>(org: Org, code: string, action: () => Promise<T>): Promise<T> {
  return naming(`no site ${JSON.stringify(code)} in ${org.slug} (\`sitegrid site list\` shows them)`, action)
}

/** A command naming an organisation by SLUG: the service's anonymous NotFound names the slug, as orgBySlug does. */
export function onOrg<T>(slug: string, action: () => Promise<T>): Promise<T> {
  return naming(`no organisation ${JSON.stringify(slug)} on this server (\`sitegrid org list\` shows them)`, action)
}
