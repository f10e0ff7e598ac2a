import { domainError } from '../../errors/domain-error.ts'

export class DomainTaken extends domainError('Conflict') {
  // The same answer whichever organisation holds it: the caller learns only that it is taken.
  constructor(domain: string) {
    super(`The domain ${domain} is already bound to an organisation.`)
  }
}
