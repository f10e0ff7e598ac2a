import { domainError, type FieldProblem } from '../../errors/domain-error.ts'
import type { BulkReport } from './schemas.ts'

export class InstanceIdTaken extends domainError('Conflict') {
  constructor(id: string) {
    super(`An instance with id ${id} already exists in this site.`, { errors: [{ in: 'body', pointer: '/id', message: 'is already used in this site' }] })
  }
}

export class UnknownController extends domainError('UnprocessableEntity') {
  constructor(controllerId: string) {
    super(`controllerId ${controllerId} names no controller of this site.`, {
      errors: [{ in: 'body', pointer: '/controllerId', message: 'names no controller of this site' }],
    })
  }
}

export class BulkRefused extends domainError('UnprocessableEntity') {
  constructor(report: BulkReport, errors: FieldProblem[]) {
    super(`${report.refused} line(s) refused; nothing was written (all or nothing). \`report\` gives every line's outcome.`, {
      errors,
      extensions: { report },
    })
  }
}

/** Tag mappings or configuration over their bounds (bytes as JSON, nesting depth): a 400 listing each. */
export class InstanceOverLimits extends domainError('ValidationFailed') {
  constructor(problems: ReadonlyArray<{ pointer: string; message: string }>) {
    super(problems.map((p) => `${p.pointer.slice(1)}: ${p.message}`).join('; '), { errors: problems.map((p) => ({ in: 'body', ...p })) })
  }
}

/** Other writers kept changing the site while a bulk batch was checked, every attempt; nothing was written. */
export class BulkSiteKeptChanging extends domainError('Conflict') {
  constructor() {
    super('The site kept changing while the batch was checked; nothing was written. Retry.')
  }
}
