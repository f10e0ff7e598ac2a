import { normaliseProtocol } from './codes.ts'

/**
 * The poll budget: can the edge gateway read every mapped tag of a controller within its poll interval?
 * A planning estimate, not a measurement. Assumptions (documented in the OpenAPI document):
 * - tags travel in requests of a protocol-typical size: CIP multi-service packets ~20 tags, PCCC 10, S7 PDU 18,
 *   Modbus 8 (registers grouped in small blocks), OPC UA 500 per Read, anything else 10;
 * - one request costs ~10 ms round trip on a plant LAN, plus 5 ms per routed CIP hop beyond the first.
 */
export const ROUND_TRIP_MS = 10
export const ROUTED_HOP_MS = 5
export const NEAR_CAPACITY = 0.8
export const SLOW_DETECTION_MS = 60_000

const TAGS_PER_REQUEST: Record<string, number> = {
  cip: 20,
  enip: 20,
  eip: 20,
  ethernetip: 20,
  cipethernetip: 20,
  logix: 20,
  abeip: 20,
  pccc: 10,
  pcccethernetip: 10,
  s7: 18,
  s7comm: 18,
  isoontcp: 18,
  modbus: 8,
  modbustcp: 8,
  umas: 8,
  opcua: 500,
  opctcp: 500,
}

export interface PollInputs {
  protocol: string
  pollIntervalMs: number
  timeoutMs: number
  retryDelayMs: number
  maxRetries: number
  cipHops: number
  mappedTags: number
  instances: number
}

export interface PollWarning {
  code: 'PollOverrun' | 'PollNearCapacity' | 'SlowFailureDetection'
  message: string
}

export interface PollBudget {
  instances: number
  mappedTags: number
  tagsPerRequest: number
  requestsPerPoll: number
  estimatedPollMs: number
  utilisation: number
  failureDetectionMs: number
  warnings: PollWarning[]
}

export function pollBudget(p: PollInputs): PollBudget {
  const tagsPerRequest = TAGS_PER_REQUEST[normaliseProtocol(p.protocol)] ?? 10
  const requestsPerPoll = Math.ceil(p.mappedTags / tagsPerRequest)
  const perRequestMs = ROUND_TRIP_MS + ROUTED_HOP_MS * Math.max(0, p.cipHops - 1)
  const estimatedPollMs = requestsPerPoll * perRequestMs
  const utilisation = Math.round((estimatedPollMs / p.pollIntervalMs) * 1000) / 1000
  // An unanswered controller: the first try and every retry time out, with the retry delay between them.
  const failureDetectionMs = p.timeoutMs * (p.maxRetries + 1) + p.retryDelayMs * p.maxRetries
  const warnings: PollWarning[] = []
  const load = `${p.mappedTags} mapped tags need about ${estimatedPollMs} ms per poll (${requestsPerPoll} requests of up to ${tagsPerRequest} tags at ~${perRequestMs} ms)`
  if (estimatedPollMs > p.pollIntervalMs) {
    warnings.push({
      code: 'PollOverrun',
      message: `${load}, more than the ${p.pollIntervalMs} ms poll interval: the gateway will fall behind. Raise pollIntervalMs or move instances to another controller.`,
    })
  } else if (estimatedPollMs > p.pollIntervalMs * NEAR_CAPACITY) {
    warnings.push({
      code: 'PollNearCapacity',
      message: `${load}, over ${NEAR_CAPACITY * 100}% of the ${p.pollIntervalMs} ms poll interval: little headroom for retries.`,
    })
  }
  if (p.mappedTags > 0 && failureDetectionMs > SLOW_DETECTION_MS) {
    warnings.push({
      code: 'SlowFailureDetection',
      message: `With timeoutMs ${p.timeoutMs}, ${p.maxRetries} retries and retryDelayMs ${p.retryDelayMs}, a controller that stops answering is noticed only after ${Math.round(failureDetectionMs / 1000)} s; its tags stay stale meanwhile.`,
    })
  }
  return { instances: p.instances, mappedTags: p.mappedTags, tagsPerRequest, requestsPerPoll, estimatedPollMs, utilisation, failureDetectionMs, warnings }
}
