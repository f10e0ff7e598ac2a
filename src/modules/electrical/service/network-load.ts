import { pipeline, Transform, type Readable } from 'node:stream'
import type { ErrorObject } from 'ajv'
import { parser } from 'stream-json'
import { Assembler } from 'stream-json/assembler.js'
import { batch } from 'stream-json/utils/batch.js'
import { DomainError, type FieldProblem } from '../../../errors/domain-error.ts'
import { DEPTH_RULE, findUnsafeJson, MAX_JSON_DEPTH, utf8Checked } from '../../../http/input-guard.ts'
import { createBodyValidator } from '../../../http/validation.ts'
import type { OrgId } from '../../../ids.ts'
import { NetworkBodyCutOff, NetworkBodyEmpty, NetworkBodyNotJson, NetworkFieldsInvalid, NetworkTooLarge } from '../errors.ts'
import { nodeFieldProblems, nodeRow } from '../rows.ts'
import { CreateNodeBody, EdgeBody, type CreateNodeInput, type EdgeInput } from '../schemas.ts'
import type { Db } from '../../../db/schema.ts'
import { InvalidNetwork, type NetworkProblem } from '../topology.ts'
import { duplicateNodeIds, EDGE, NODE, repeatedTriples, selfLoops, unknownEnds, type StagedRow } from '../staging-store.ts'

/** Bounds of one streamed load (SITEGRID_NETWORK_MAX_BYTES / _NODES / _EDGES; README § Electrical network). */
export interface NetworkLoadLimits {
  readonly maxBytes: number
  readonly maxNodes: number
  readonly maxEdges: number
}

/** The configuration's defaults (config/schema.ts), for a service built without them; stale after 2 × the request timeout. */
export const DEFAULT_NETWORK_LOAD = { maxBytes: 1_073_741_824, maxNodes: 100_000, maxEdges: 200_000, staleAfterMs: 1_800_000 } as const

/** Rows per staging INSERT: 26 columns × 1000 stays under SQLite's 32 766 and PostgreSQL's 65 535 parameters. */
const STAGING_CHUNK = 1000
/** Problems listed at most (the rest counted in `problemCount`); the body is read no further once reached. */
const MAX_PROBLEMS = 100
/** One string, number or key of the document, in bytes: far above any valid one (metadata ≤ 16 KiB as a whole). */
const SCALAR_MAX_BYTES = 1_048_576
/** JSON values in one node or edge: far above any valid element (metadata ≤ 100 keys, tag bindings ≤ 200). */
const ELEMENT_MAX_TOKENS = 100_000

// The request bodies' validator (http/validation.ts): strict types, formats, every error, unknown properties refused.
const ajv = createBodyValidator()
const validateNode = ajv.compile<CreateNodeInput>(CreateNodeBody)
const validateEdge = ajv.compile<EdgeInput>(EdgeBody)

type AjvProblem = Pick<ErrorObject, 'instancePath' | 'keyword' | 'params' | 'message' | 'parentSchema'>

/**
 * A schema problem of the streamed document, answered exactly like Fastify's own body validation (the error
 * handler in http/problem.ts turns `validation` into 400 `ValidationFailed` with one pointer per field).
 */
class StreamedBodyInvalid extends Error {
  readonly validation: AjvProblem[]
  readonly validationContext = 'body'
  constructor(validation: AjvProblem[]) {
    super('The streamed network document is not valid.')
    this.validation = validation
  }
}

const tooLarge = (detail: string) => new NetworkTooLarge(detail)

/**
 * Counts the body's bytes as they arrive (one byte over the bound fails the load with 413) and bounds every
 * string, key and number: the parser packs them whole, so no single one may grow with the document.
 */
function byteMeter(maxBytes: number): Transform {
  let seen = 0
  let inString = false
  let escaped = false
  let run = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      if (seen > maxBytes) return callback(tooLarge(`The network document exceeds the limit of ${maxBytes} bytes (SITEGRID_NETWORK_MAX_BYTES).`))
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!
        if (inString) {
          if (escaped) escaped = false
          else if (c === 0x5c) escaped = true
          else if (c === 0x22) {
            inString = false
            run = 0
            continue
          }
          run++
        } else if (c === 0x22) {
          inString = true
          run = 0
          continue
        } else if (c <= 0x20 || c === 0x2c || c === 0x3a || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) {
          run = 0
          continue
        } else run++
        if (run > SCALAR_MAX_BYTES) return callback(tooLarge(`A string or number of the network document exceeds ${SCALAR_MAX_BYTES} bytes.`))
      }
      callback(null, chunk)
    },
  })
}

/** The node columns of a staged edge row. */
const NO_NODE_FIELDS = {
  node_id: null,
  name: null,
  node_type: null,
  rated_voltage_v: null,
  rated_current_a: null,
  rated_power_kw: null,
  impedance_ohms: null,
  cable_size: null,
  cable_length_m: null,
  protection_curve: null,
  protection_pickup_a: null,
  protection_tms: null,
  description: null,
  tag_bindings: null,
  metadata: null,
  study: null,
  created_at: null,
} as const

interface Token {
  name: string
  value?: unknown
}
type Kind = 'nodes' | 'edges'

export interface StageTarget {
  orgId: OrgId
  siteCode: string
  loadId: string
  stagedAt: number
  limits: NetworkLoadLimits
  /** Writes one chunk of one kind (each call its own short transaction). */
  write(rows: StagedRow[]): Promise<void>
}

/**
 * Reads `{ nodes: [...], edges: [...] }` from `body` as it arrives (stream-json tokens), validates each element
 * with the request schema and the field rules of POST …/nodes and …/edges, and stages the valid ones in chunks.
 * Memory stays bounded by one chunk and one element, whatever the document's size. Throws the 400/413 of the
 * first problems met (schema problems first, like the request validator); the caller removes staged rows.
 */
export async function stageDocument(body: Readable, target: StageTarget): Promise<{ nodes: number; edges: number }> {
  const { limits } = target
  const schemaProblems: AjvProblem[] = []
  const fieldProblems: FieldProblem[] = []
  let problemCount = 0
  const nodeRows: StagedRow[] = []
  const edgeRows: StagedRow[] = []
  const count = { nodes: 0, edges: 0 }

  // Structure: the top object, which array we are in, and the element being assembled.
  let phase = 'start' as 'start' | 'keys' | 'value' | 'items' | 'end'
  let key = ''
  const seenKeys = new Set<string>()
  let kind: Kind | null = null
  let skipDepth = 0
  let skipping = false
  let element: Assembler | null = null
  let elementTokens = 0

  const pointerHere = () => (kind === null ? `/${key}` : `/${kind}/${count[kind]}`)
  const addSchema = (prefix: string, errors: readonly AjvProblem[]) => {
    for (const e of errors) {
      problemCount++
      // parentSchema: an enumeration's error names its codes (http/problem.ts).
      schemaProblems.push({
        instancePath: `${prefix}${e.instancePath}`,
        keyword: e.keyword,
        params: e.params,
        message: e.message,
        parentSchema: e.parentSchema,
      })
    }
  }
  const fatalSchema = (pointer: string, keyword: string, message: string) => {
    addSchema('', [{ instancePath: pointer, keyword, params: {}, message }])
    throw new StreamedBodyInvalid(schemaProblems)
  }

  const staged = (kind: number, position: number) => ({
    org_id: target.orgId,
    load_id: target.loadId,
    kind,
    position,
    site_code: target.siteCode,
    staged_at: target.stagedAt,
  })

  const finishElement = (value: unknown) => {
    if (kind === null) return
    const index = count[kind]++
    const prefix = `/${kind}/${index}`
    // Text the database cannot store (NUL, a lone surrogate), refused like in every other body (http/input-guard.ts).
    const unsafe = findUnsafeJson(value, prefix)
    if (unsafe) {
      problemCount++
      fieldProblems.push({ in: 'body', ...unsafe })
      return
    }
    if (kind === 'nodes') {
      if (index >= limits.maxNodes) throw tooLarge(`The network has more than ${limits.maxNodes} nodes (SITEGRID_NETWORK_MAX_NODES).`)
      if (!validateNode(value)) return addSchema(prefix, validateNode.errors ?? [])
      const problems = nodeFieldProblems(value, prefix)
      if (problems.length > 0) {
        problemCount += problems.length
        fieldProblems.push(...problems)
        return
      }
      if (problemCount > 0) return // nothing more is staged once the load is known to fail
      const { id, org_id: _org, site_code: _site, created_at: _created, updated_at: _updated, ...fields } = nodeRow(target.orgId, target.siteCode, value, 0, 0)
      nodeRows.push({ ...staged(NODE, index), node_id: id, ...fields, created_at: null, source_id: null, target_id: null, edge_type: null })
    } else {
      if (index >= limits.maxEdges) throw tooLarge(`The network has more than ${limits.maxEdges} edges (SITEGRID_NETWORK_MAX_EDGES).`)
      if (!validateEdge(value)) return addSchema(prefix, validateEdge.errors ?? [])
      if (problemCount > 0) return
      edgeRows.push({ ...staged(EDGE, index), ...NO_NODE_FIELDS, source_id: value.sourceId, target_id: value.targetId, edge_type: value.edgeType })
    }
  }

  const isValueStart = (name: string) =>
    name === 'startObject' ||
    name === 'startArray' ||
    name === 'stringValue' ||
    name === 'numberValue' ||
    name === 'nullValue' ||
    name === 'trueValue' ||
    name === 'falseValue'

  const handle = (tok: Token) => {
    const { name } = tok
    if (element !== null) {
      if (++elementTokens > ELEMENT_MAX_TOKENS) fatalSchema(pointerHere(), 'maxProperties', `must be at most ${ELEMENT_MAX_TOKENS} JSON values`)
      element.consume(tok as never)
      // An element nests like the body of POST …/nodes or …/edges: at most MAX_JSON_DEPTH levels (http/input-guard.ts).
      if (element.depth > MAX_JSON_DEPTH) fatalSchema(pointerHere(), 'maxDepth', DEPTH_RULE)
      if (element.depth === 0) {
        const value = element.current
        element = null
        finishElement(value)
      }
      return
    }
    if (skipping) {
      if (name === 'startObject' || name === 'startArray') skipDepth++
      else if (name === 'endObject' || name === 'endArray') skipDepth--
      if (skipDepth === 0) {
        skipping = false
        phase = 'keys'
      }
      return
    }
    switch (phase) {
      case 'start':
        if (name !== 'startObject') fatalSchema('', 'type', 'must be object')
        phase = 'keys'
        return
      case 'keys':
        if (name === 'endObject') {
          phase = 'end'
          return
        }
        key = tok.value as string // keyValue
        phase = 'value'
        return
      case 'value': {
        const known = key === 'nodes' || key === 'edges'
        if (known && name === 'startArray' && !seenKeys.has(key)) {
          seenKeys.add(key)
          kind = key as Kind
          phase = 'items'
          return
        }
        addSchema('', [
          known
            ? seenKeys.has(key)
              ? { instancePath: `/${key}`, keyword: 'uniqueKey', params: {}, message: 'appears more than once' }
              : { instancePath: `/${key}`, keyword: 'type', params: {}, message: 'must be array' }
            : { instancePath: '', keyword: 'additionalProperties', params: { additionalProperty: key }, message: 'must NOT have additional properties' },
        ])
        if (name === 'startObject' || name === 'startArray') {
          skipping = true
          skipDepth = 1
        } else phase = 'keys'
        return
      }
      case 'items':
        if (name === 'endArray') {
          kind = null
          phase = 'keys'
          return
        }
        if (!isValueStart(name)) return
        element = new Assembler()
        elementTokens = 1
        element.consume(tok as never)
        if (element.depth === 0) {
          const value = element.current
          element = null
          finishElement(value)
        }
        return
      case 'end':
        return
    }
  }

  const tokens = parser.asStream({ streamValues: false }) // packed keys, strings and numbers only: half the tokens
  const groups = batch.asStream({ batchSize: 512 })
  const meter = byteMeter(limits.maxBytes)
  // UTF-8 checked as it streams: stream-json's decoding put U+FFFD in the place of a byte that is not UTF-8 (session 23).
  const source = pipeline(meter, utf8Checked(), tokens, groups, () => {})
  body.pipe(meter)
  const onClose = () => {
    if (!body.readableEnded) meter.destroy(new NetworkBodyCutOff())
  }
  body.once('close', onClose)
  body.once('error', (err) => meter.destroy(err))
  try {
    for await (const group of source as AsyncIterable<Token[]>) {
      for (const tok of group) handle(tok)
      if (problemCount >= MAX_PROBLEMS) break
      if (nodeRows.length >= STAGING_CHUNK) await target.write(nodeRows.splice(0))
      if (edgeRows.length >= STAGING_CHUNK) await target.write(edgeRows.splice(0))
    }
  } catch (err) {
    if (err instanceof DomainError || err instanceof StreamedBodyInvalid) throw err
    const message = err instanceof Error ? err.message : String(err)
    throw new NetworkBodyNotJson(message.slice(0, 200), err)
  } finally {
    body.off('close', onClose)
    body.unpipe(meter)
    if (!body.readableEnded) body.resume() // the rest of a refused body is read and dropped, never buffered
    if (!source.destroyed) source.destroy()
  }
  if (problemCount === 0 && phase !== 'end') {
    if (phase === 'start') throw new NetworkBodyEmpty('JSON')
    throw new NetworkBodyNotJson('it ended inside the document.')
  }
  if (problemCount < MAX_PROBLEMS) {
    for (const required of ['nodes', 'edges']) {
      if (!seenKeys.has(required) && !schemaProblems.some((p) => p.instancePath === `/${required}`)) {
        addSchema('', [{ instancePath: '', keyword: 'required', params: { missingProperty: required }, message: `must have required property '${required}'` }])
      }
    }
  }
  if (schemaProblems.length > 0) throw new StreamedBodyInvalid(schemaProblems)
  if (fieldProblems.length > 0) throwProblems(fieldProblems, problemCount)
  await target.write(nodeRows.splice(0))
  await target.write(edgeRows.splice(0))
  return count
}

/** A 400 listing field problems (up to 100; `problemCount` when there are more). */
export function throwProblems(problems: FieldProblem[], total = problems.length): void {
  if (problems.length === 0) return
  throw new NetworkFieldsInvalid(problems, total, MAX_PROBLEMS)
}

/**
 * The graph rules of a load, checked in SQL against its staged rows (the same problems and pointers as
 * topology.ts's buildGraph): duplicate ids, ends naming no node, self-loops, repeated triples. 422 listing each.
 */
export async function checkStagedGraph(db: Db, orgId: OrgId, loadId: string): Promise<void> {
  const duplicates = await duplicateNodeIds(db, orgId, loadId)
  const sources = await unknownEnds(db, orgId, loadId, 'source_id')
  const targets = await unknownEnds(db, orgId, loadId, 'target_id')
  const loops = await selfLoops(db, orgId, loadId)
  const repeated = await repeatedTriples(db, orgId, loadId)
  const total = duplicates.count + sources.count + targets.count + loops.count + repeated.count
  if (total === 0) return
  const edgeProblems = [
    ...sources.rows.map((r) => ({
      at: r.position,
      order: 0,
      pointer: `/edges/${r.position}/sourceId`,
      message: `Edge ${r.position} starts at unknown node ${JSON.stringify(r.a)}.`,
    })),
    ...targets.rows.map((r) => ({
      at: r.position,
      order: 1,
      pointer: `/edges/${r.position}/targetId`,
      message: `Edge ${r.position} ends at unknown node ${JSON.stringify(r.a)}.`,
    })),
    ...loops.rows.map((r) => ({
      at: r.position,
      order: 2,
      pointer: `/edges/${r.position}`,
      message: `Edge ${r.position} connects node ${JSON.stringify(r.a)} to itself.`,
    })),
  ].sort((x, y) => x.at - y.at || x.order - y.order)
  const problems: NetworkProblem[] = [
    ...duplicates.rows.map((r) => ({ pointer: `/nodes/${r.position}/id`, message: `Duplicate node id ${JSON.stringify(r.a)}.` })),
    ...edgeProblems.map(({ pointer, message }) => ({ pointer, message })),
    ...repeated.rows.map((r) => ({
      pointer: `/edges/${r.position}`,
      message: `Edge ${r.position} repeats the triple (source, target, type) of an earlier edge.`,
    })),
  ]
  throw new InvalidNetwork(problems.slice(0, MAX_PROBLEMS), total)
}
