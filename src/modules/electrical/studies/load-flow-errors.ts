import { domainError } from '../../../errors/domain-error.ts'

/** What a load-flow case error is about: a bus or a branch, by its id. */
export type LoadFlowSubject = { busId: string } | { branchId: string }

/**
 * A bus/branch model the load flow cannot solve as given (a missing slack, an unknown bus, a zero impedance, a number
 * out of range): names the bus or branch, the field and the rule, so the network mapping can point at the node.
 */
export class LoadFlowCaseInvalid extends domainError('UnprocessableEntity') {
  constructor(subject: LoadFlowSubject, field: string, rule: string) {
    const who = 'busId' in subject ? `Bus ${JSON.stringify(subject.busId)}` : `Branch ${JSON.stringify(subject.branchId)}`
    super(`${who}: ${field} ${rule}.`, { extensions: { ...subject, field, rule } })
  }
}
