import { domainError } from '../../errors/domain-error.ts'

export class AlarmStateConflict extends domainError('AlarmStateConflict') {
  constructor(reason: string) {
    super(`The alarm's state does not allow this: ${reason}.`)
  }
}
