import { domainError } from '../../errors/domain-error.ts'

export class ReservedRole extends domainError('ReservedRole') {
  constructor(role: string) {
    super(`The role "${role}" is reserved for the account control plane.`, {
      errors: [{ in: 'body', pointer: '/role', message: 'is reserved for the account control plane' }],
    })
  }
}

export class ExpiryPolicyViolation extends domainError('ExpiryPolicyViolation') {
  constructor() {
    super('expiresAt must lie from 1 hour to 730 days after the current time.', {
      errors: [{ in: 'body', pointer: '/expiresAt', message: 'must lie from 1 hour to 730 days after now' }],
    })
  }
}

export class RoleAboveCaller extends domainError('Forbidden') {
  constructor() {
    super('A key cannot carry a role above the role of the caller who mints it.')
  }
}

export class NetworksWiderThanCaller extends domainError('Forbidden') {
  constructor(pointer: string) {
    super('A key restricted to client networks mints only keys restricted to networks inside its own.', {
      errors: [{ in: 'body', pointer, message: "must lie inside the minting key's own networks" }],
    })
  }
}
