import { domainError, invalidField, type FieldProblem } from '../../errors/domain-error.ts'

export class NodeIdTaken extends domainError('Conflict') {
  constructor(id: string) {
    super(`A node with id ${JSON.stringify(id)} already exists in this site.`, {
      errors: [{ in: 'body', pointer: '/id', message: 'is already used by another node of the site' }],
    })
  }
}

export class NodeHasEdges extends domainError('Conflict') {
  constructor(id: string, edgeCount: number) {
    super(`Node ${JSON.stringify(id)} is connected by ${edgeCount} edge(s); delete them first or repeat with ?cascade=true.`, { extensions: { edgeCount } })
  }
}

export class EdgeExists extends domainError('Conflict') {
  constructor() {
    super('An edge with this sourceId, targetId and edgeType already exists.')
  }
}

/** An edge end that names no node of the site (422, pointing at each such end). */
export class EdgeEndsUnknown extends domainError('UnprocessableEntity') {
  constructor(ends: Array<'sourceId' | 'targetId'>) {
    super(`${ends.join(' and ')} must name a node of this site.`, {
      errors: ends.map((end) => ({ in: 'body' as const, pointer: `/${end}`, message: 'names no node of this site' })),
    })
  }
}

export class SelfLoop extends domainError('UnprocessableEntity') {
  constructor() {
    super('An edge cannot connect a node to itself.', { errors: [{ in: 'body', pointer: '/targetId', message: 'equals sourceId' }] })
  }
}

/** The node lacks a usable curve, pickup or TMS for a trip-time answer. */
export class NoProtectionSettings extends domainError('UnprocessableEntity') {
  constructor(nodeId: string, reason: string) {
    super(`Node ${JSON.stringify(nodeId)} has no usable protection settings: ${reason}.`, { extensions: { reason } })
  }
}

export class NodeNotSupplied extends domainError('UnprocessableEntity') {
  constructor(nodeId: string, supplyId?: string) {
    super(
      supplyId === undefined
        ? `Node ${JSON.stringify(nodeId)} is connected to no supply, so it has no supply path.`
        : `Supply ${JSON.stringify(supplyId)} is not reachable from node ${JSON.stringify(nodeId)}.`,
    )
  }
}

/** A network document over one of its bounds (bytes, a scalar's bytes, nodes, edges): `detail` names the limit. */
export class NetworkTooLarge extends domainError('PayloadTooLarge') {
  constructor(detail: string) {
    super(detail)
  }
}

/** A network load with no body at all; `format` is how the detail names the expected body. */
export class NetworkBodyEmpty extends domainError('MalformedBody') {
  constructor(format: 'JSON' | 'application/json') {
    super(`The body is empty; send the network document as ${format}.`)
  }
}

/** The client closed the connection before the whole network document arrived. */
export class NetworkBodyCutOff extends domainError('MalformedBody') {
  constructor() {
    super('The connection closed before the whole document arrived.')
  }
}

/** The network document is not well-formed JSON: the parser's reason (shortened), or an end inside the document. */
export class NetworkBodyNotJson extends domainError('MalformedBody') {
  constructor(reason: string, cause?: unknown) {
    super(`The body is not well-formed JSON: ${reason}`, { cause })
  }
}

/** Field rules broken by nodes or edges: the first 100 problems (and `problemCount` when there are more). */
export class NetworkFieldsInvalid extends domainError('ValidationFailed') {
  constructor(problems: FieldProblem[], total: number, maxProblems: number) {
    const summary = problems
      .slice(0, 3)
      .map((p) => `${p.pointer.slice(1)}: ${p.message}`)
      .join('; ')
    super(total > 3 ? `${summary} (and ${total - 3} more)` : summary, {
      errors: problems.slice(0, maxProblems),
      extensions: total > maxProblems ? { problemCount: total } : undefined,
    })
  }
}

export const createOnly = (field: 'tagBindings' | 'metadata') =>
  invalidField(`/${field}`, 'is create-only: it is set when the node is created and cannot be changed by an update')

export const notUpdatable = () => invalidField('/id', 'is not updatable: delete the node and create it under the new id')

/** A time–current curve range whose upper end is not above its lower end (given, or the default from the pickups). */
export const curveRangeEmpty = (fromA: number, toA: number) =>
  invalidField('/toA', `must be greater than fromA (${fromA} A); the range asked for is ${fromA} A to ${toA} A`, 'query')

export interface MissingStudyData {
  readonly nodeId: string
  readonly parameter: string
  readonly reason: string
}

/** A study that needs parameters the network does not hold: each node and parameter named, nothing defaulted. */
export class StudyDataMissing extends domainError('StudyDataMissing') {
  constructor(study: string, missing: readonly MissingStudyData[]) {
    const first = missing[0]!
    super(
      `The ${study} needs ${missing.length} parameter(s) the network does not hold, first ${first.parameter} of node ${JSON.stringify(first.nodeId)} (${first.reason}).`,
      { extensions: { missing: missing.slice(0, 100), missingCount: missing.length } },
    )
  }
}

/** A study asked of more buses than its dense solver answers in reasonable time (studies/short-circuit.ts). */
export class StudyTooLarge extends domainError('UnprocessableEntity') {
  constructor(study: string, buses: number, max: number) {
    super(`The ${study} handles networks of at most ${max} energised buses; this one has ${buses}.`, { extensions: { busCount: buses, maxBuses: max } })
  }
}

/** A supply path of more protective devices than the study's per-device currents are given for (protection.ts). */
export class TooManyStudiedDevices extends domainError('UnprocessableEntity') {
  constructor(devices: number, max: number) {
    super(
      `The short-circuit study gives the currents of at most ${max} protective devices on a supply path; this one has ${devices}. ` +
        'Type faultCurrentA to grade them by the referral of that current.',
      { extensions: { deviceCount: devices, maxDevices: max } },
    )
  }
}

/** A short-circuit study of more sources' shares (sources × buses) than it keeps (studies/short-circuit.ts). */
export class StudyTooManySources extends domainError('UnprocessableEntity') {
  constructor(buses: number, sources: number, max: number) {
    super(
      `The short-circuit study keeps at most ${max} shares of sources at buses (sources × buses); this network has ${sources} sources and ${buses} buses.`,
      { extensions: { busCount: buses, sourceCount: sources, maxSourceShares: max } },
    )
  }
}

/** An answer of every source's contribution at every bus larger than one is listed (studies/short-circuit.ts). */
export class TooManyContributions extends domainError('UnprocessableEntity') {
  constructor(buses: number, sources: number, max: number) {
    super(
      `contributions=all lists at most ${max} contributions over the network (buses × sources); this one has ${buses} buses and ${sources} sources: ` +
        'ask for the largest of each bus (contributions=largest) or for one bus (busId).',
      {
        extensions: { busCount: buses, sourceCount: sources, maxContributions: max },
        errors: [{ in: 'query', pointer: '/contributions', message: `must not be all for more than ${max} contributions without busId` }],
      },
    )
  }
}

/** The figures of a refused elimination (studies/load-flow-sparse.ts): work is Σ d² over the pivots, d a pivot's later neighbours. */
export interface EliminationFigures {
  readonly buses: number
  readonly branches: number
  readonly eliminated: number
  readonly fillBlocks: number
  readonly work: number
  readonly maxWork: number
}

/**
 * A study whose network is so meshed that its sparse elimination fills in towards a dense matrix: refused once the
 * work passes the bound (MAX_ELIMINATION_WORK), before the minutes it would take; nothing computed is kept.
 */
export class StudyTooMeshed extends domainError('UnprocessableEntity') {
  constructor(study: string, figures: EliminationFigures) {
    const { buses, branches, eliminated, fillBlocks, work, maxWork } = figures
    super(
      `The network is too meshed for the ${study}: its sparse solver accepts at most ${maxWork} elimination operations ` +
        `(the sum over the buses of the square of each one's remaining neighbours when it is eliminated), and this network of ` +
        `${buses} buses and ${branches} branches passed that after ${eliminated} buses (${work} operations, ${fillBlocks} fill-in blocks). ` +
        'Radial networks with a few rings, as plants are, need 1.3 to 1.5 operations a bus; check the edges for ties or connections made in error.',
      {
        extensions: {
          rule: 'network too meshed',
          busCount: buses,
          branchCount: branches,
          eliminatedBuses: eliminated,
          fillBlocks,
          eliminationWork: work,
          maxEliminationWork: maxWork,
        },
      },
    )
  }
}

/**
 * More electrical network writes wait for their site's turn in this server process than it keeps waiting
 * (service/network.ts): refused at once, nothing changed.
 */
export class NetworkWritesQueueFull extends domainError('ServiceUnavailable') {
  constructor(limit: number) {
    super(`${limit} electrical network writes are already waiting in this server process; nothing was changed. Send it again shortly.`, {
      extensions: { limit },
    })
  }
}

/**
 * A study whose equations are singular as the network's parameters stand (an impedance of zero, or values so far out
 * of scale that the arithmetic loses them): named by the bus where the solve failed, never a 500.
 */
export class StudyNotSolvable extends domainError('UnprocessableEntity') {
  constructor(study: string, busId: string) {
    super(
      `The ${study} has no solution as the network's parameters stand: its equations are singular at bus ${JSON.stringify(busId)}. ` +
        'An impedance there or next to it is zero or far out of scale (a power factor of 1e-300, a short-circuit power of 1e308 MVA): ' +
        "check the study parameters of the bus's nodes and their neighbours.",
      { extensions: { busId } },
    )
  }
}

/** A protection read asked to compute the fault current at a node the short-circuit study has no bus for (issue 31). */
export class NoFaultLevel extends domainError('UnprocessableEntity') {
  constructor(nodeId: string) {
    super(
      `The short-circuit study computes no fault current at node ${JSON.stringify(nodeId)} (its part of the network has no utility supply or ` +
        'generator, e.g. a UPS alone feeds it); give faultCurrentA.',
      { errors: [{ in: 'query', pointer: '/faultCurrentA', message: 'required here: the short-circuit study has no fault level at this node' }] },
    )
  }
}
