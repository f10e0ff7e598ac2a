import { domainError } from '../errors/domain-error.ts'

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
 * An organisation named on the command line that this server does not hold: NotFound (exit 1) naming it. The operator
 * at the server's own console may learn which slugs exist (`org list` shows them), unlike an API caller.
 */
export class OrgNotFound extends domainError('NotFound') {
  constructor(slug: string) {
    super(`no organisation ${JSON.stringify(slug)} on this server (\`sitegrid org list\` shows them)`)
  }
}
