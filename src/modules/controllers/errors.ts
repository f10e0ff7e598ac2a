import { domainError } from '../../errors/domain-error.ts'

export class ControllerAssetNumberTaken extends domainError('Conflict') {
  constructor(assetNumber: string) {
    super(`A controller with asset number ${assetNumber} already exists in this site.`, {
      errors: [{ in: 'body', pointer: '/assetNumber', message: 'is already used by another controller of this site' }],
    })
  }
}

export class ControllerInUse extends domainError('Conflict') {
  constructor(instances: number) {
    super(`The controller is referenced by ${instances} instance(s); move or delete them first.`, { extensions: { instances } })
  }
}
