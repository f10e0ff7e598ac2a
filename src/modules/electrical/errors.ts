import { DomainError, invalidField } from '../../errors/domain-error.ts'

export class NodeIdTaken extends DomainError<'Conflict'> {
  constructor(id: string) {
    super('Conflict', `A node with id ${JSON.stringify(id)} already exists in this site.`, { errors: [{ in: 'body', pointer: '/id', message: 'is already used by another node of the site' }] })
  }
}

export class NodeHasEdges extends DomainError<'Conflict'> {
  constructor(id: string, edgeCount: number) {
    super('Conflict', `Node ${JSON.stringify(id)} is connected by ${edgeCount} edge(s); delete them first or repeat with ?cascade=true.`, { extensions: { edgeCount } })
  }
}

export class EdgeExists extends DomainError<'Conflict'> {
  constructor() { super('Conflict', 'An edge with this sourceId, targetId and edgeType already exists.') }
}

/** An edge end that names no node of the site (422, pointing at each such end). */
export class EdgeEndsUnknown extends DomainError<'UnprocessableEntity'> {
  constructor(ends: Array<'sourceId' | 'targetId'>) {
    super('UnprocessableEntity', `${ends.join(' and ')} must name a node of this site.`, {
      errors: ends.map((end) => ({ in: 'body' as const, pointer: `/${end}`, message: 'names no node of this site' })),
    })
  }
}

export class SelfLoop extends DomainError<'UnprocessableEntity'> {
  constructor() {
    super('UnprocessableEntity', 'An edge cannot connect a node to itself.', { errors: [{ in: 'body', pointer: '/targetId', message: 'equals sourceId' }] })
  }
}

/** The node lacks a usable curve, pickup or TMS for a trip-time answer. */
export class NoProtectionSettings extends DomainError<'UnprocessableEntity'> {
  constructor(nodeId: string, reason: string) {
    super('UnprocessableEntity', `Node ${JSON.stringify(nodeId)} has no usable protection settings: ${reason}.`, { extensions: { reason } })
  }
}

export class NodeNotSupplied extends DomainError<'UnprocessableEntity'> {
  constructor(nodeId: string, supplyId?: string) {
    super('UnprocessableEntity', supplyId === undefined
      ? `Node ${JSON.stringify(nodeId)} is connected to no supply, so it has no supply path.`
      : `Supply ${JSON.stringify(supplyId)} is not reachable from node ${JSON.stringify(nodeId)}.`)
  }
}

export const createOnly = (field: 'tagBindings' | 'metadata') =>
  invalidField(`/${field}`, 'is create-only: it is set when the node is created and cannot be changed by an update')

export const notUpdatable = () => invalidField('/id', 'is not updatable: delete the node and create it under the new id')
