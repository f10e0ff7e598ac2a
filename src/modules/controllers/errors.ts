import { DomainError } from '../../errors/domain-error.ts'

export class ControllerAssetNumberTaken extends DomainError<'Conflict'> {
  constructor(assetNumber: string) {
    super('Conflict', `A controller with asset number ${assetNumber} already exists in this site.`, {
      errors: [{ in: 'body', pointer: '/assetNumber', message: 'is already used by another controller of this site' }],
    })
  }
}

export class ControllerInUse extends DomainError<'Conflict'> {
  constructor(instances: number) {
    super('Conflict', `The controller is referenced by ${instances} instance(s); move or delete them first.`, { extensions: { instances } })
  }
}
