import { DomainError } from '../../errors/domain-error.ts'

export class AlarmStateConflict extends DomainError<'AlarmStateConflict'> {
  constructor(reason: string) { super('AlarmStateConflict', `The alarm's state does not allow this: ${reason}.`) }
}
