import { DomainError, type FieldProblem } from '../../errors/domain-error.ts'
import type { BulkReport } from './schemas.ts'

export class InstanceIdTaken extends DomainError<'Conflict'> {
  constructor(id: string) {
    super('Conflict', `An instance with id ${id} already exists in this site.`, { errors: [{ in: 'body', pointer: '/id', message: 'is already used in this site' }] })
  }
}

export class UnknownController extends DomainError<'UnprocessableEntity'> {
  constructor(controllerId: string) {
    super('UnprocessableEntity', `controllerId ${controllerId} names no controller of this site.`, {
      errors: [{ in: 'body', pointer: '/controllerId', message: 'names no controller of this site' }],
    })
  }
}

export class BulkRefused extends DomainError<'UnprocessableEntity'> {
  constructor(report: BulkReport, errors: FieldProblem[]) {
    super('UnprocessableEntity', `${report.refused} line(s) refused; nothing was written (all or nothing). \`report\` gives every line's outcome.`, {
      errors, extensions: { report },
    })
  }
}
