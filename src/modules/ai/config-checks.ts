// Turns the schema validator's errors (Ajv, allErrors) into the AI configuration's problems: one per JSON pointer,
// worded from the schema's own keywords, so that one pass reports every bad key instead of stopping at the first.
import type { ErrorObject } from 'ajv'
import { pointerToken } from '../../errors/domain-error.ts'

export interface AiConfigProblem {
  /** JSON pointer into the input, e.g. `/providers/1/baseUrl`. */
  readonly pointer: string
  readonly message: string
}

/** `orderAt`: a problem found after a part was read (a duplicate in a list, a key that cannot be resolved) reads at that part's end. */
export type Problems = Array<AiConfigProblem & { readonly orderAt?: string }>

/** The JSON Schema keywords the configuration's schemas use (TypeBox writes plain JSON Schema). */
interface Node {
  type?: string
  properties?: Record<string, Node>
  required?: string[]
  items?: Node
  anyOf?: Node[]
  enum?: unknown[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  pattern?: string
  /** Our own keyword (Ajv runs with strict: false): how a failed `pattern` (or union) reads. */
  hint?: string
  /** Our own keyword: the order an object's problems read in, when it is not the order of its properties. */
  problemOrder?: string[]
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? 'a string' : `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`
}

const segments = (pointer: string) => (pointer === '' ? [] : pointer.slice(1).split('/'))

function valueAt(value: unknown, pointer: string): unknown {
  return segments(pointer).reduce<unknown>((at, key) => (isRecord(at) || Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined), value)
}

function schemaAt(schema: Node, pointer: string): Node | undefined {
  return segments(pointer).reduce<Node | undefined>((at, key) => at?.properties?.[key] ?? at?.items ?? branchProperty(at, key), schema)
}

function branchProperty(node: Node | undefined, key: string): Node | undefined {
  return node?.anyOf?.map((branch) => branch.properties?.[key]).find((p) => p !== undefined)
}

function requiredMessage(node: Node | undefined): string {
  if (node?.type === 'object') return 'is required (an object)'
  return node?.type === 'array' ? 'is required (an array)' : 'is required'
}

/** Today's wording for a value the schema node refuses (the node's own bounds, pattern hint or choices). */
function refusal(node: Node, value: unknown): string {
  if (node.enum) return `unknown kind ${JSON.stringify(value)}; expected one of ${node.enum.join(', ')}`
  switch (node.type) {
    case 'object':
      return `must be an object, got ${describe(value)}`
    case 'array':
      return Array.isArray(value) ? `must hold at least ${node.minItems ?? 0} item(s)` : `must be an array, got ${describe(value)}`
    case 'boolean':
      return `must be true or false, got ${describe(value)}`
    case 'integer':
      return `must be an integer from ${node.minimum} to ${node.maximum}, got ${typeof value === 'number' ? String(value) : describe(value)}`
    case 'string':
      if (typeof value !== 'string' || value === '') return `must be a non-empty string, got ${describe(value)}`
      if (node.maxLength !== undefined && value.length > node.maxLength) return `must be at most ${node.maxLength} characters, got ${value.length}`
      return `"${value}" ${node.hint ?? `does not match ${node.pattern}`}`
    default:
      return 'is not valid'
  }
}

/** `{ "env": … }` or `{ "file": … }`: the one union; its branch is chosen by the key present. */
function unionProblems(node: Node, value: unknown, pointer: string): Problems {
  const keys = node.anyOf?.flatMap((branch) => Object.keys(branch.properties ?? {})) ?? []
  const present = isRecord(value) ? keys.filter((key) => key in value) : []
  if (!isRecord(value) || present.length !== 1) {
    const got = `${describe(value)}${isRecord(value) ? ' with ' + (Object.keys(value).join(', ') || 'no keys') : ''}`
    return [{ pointer, message: `${node.hint ?? 'must match one of its forms'}, got ${got}` }]
  }
  const branch = node.anyOf?.find((b) => b.properties?.[present[0]!] !== undefined) ?? {}
  const unknown = Object.keys(value)
    .filter((key) => !keys.includes(key))
    .map((key) => ({ pointer: `${pointer}/${pointerToken(key)}`, message: `unknown key; expected one of ${keys.join(', ')}` }))
  const field = branch.properties?.[present[0]!] ?? {}
  const own = value[present[0]!]
  const fine = typeof own === 'string' && own !== '' && (field.pattern === undefined || new RegExp(field.pattern).test(own))
  return fine ? unknown : [...unknown, { pointer: `${pointer}/${present[0]}`, message: refusal(field, own) }]
}

/** One problem per offending pointer, worded by {@link refusal}; a non-object also lists its required keys as missing. */
export function schemaProblems(schema: object, input: unknown, errors: readonly ErrorObject[]): Problems {
  const root = schema as Node
  const problems = new Map<string, string>()
  const add = (pointer: string, message: string) => {
    if (!problems.has(pointer)) problems.set(pointer, message)
  }
  const unions = new Set<string>()
  for (const error of errors) {
    const union = [...segments(error.instancePath).keys()]
      .map(
        (i) =>
          `/${segments(error.instancePath)
            .slice(0, i + 1)
            .join('/')}`,
      )
      .find((at) => schemaAt(root, at)?.anyOf !== undefined)
    if (union !== undefined) {
      unions.add(union)
      continue
    }
    const at = error.instancePath
    const node = schemaAt(root, at)
    if (error.keyword === 'required') {
      const key = (error.params as { missingProperty: string }).missingProperty
      add(`${at}/${key}`, requiredMessage(node?.properties?.[key]))
    } else if (error.keyword === 'additionalProperties') {
      const key = (error.params as { additionalProperty: string }).additionalProperty
      add(`${at}/${pointerToken(key)}`, `unknown key; expected one of ${Object.keys(node?.properties ?? {}).join(', ')}`)
    } else if (error.keyword === 'anyOf') {
      unions.add(at)
    } else if (node) {
      const value = valueAt(input, at)
      add(at, value === undefined ? requiredMessage(node) : refusal(node, value))
      // A value that is not an object is read as an empty one: its required keys are reported too.
      if (node.type === 'object' && !isRecord(value)) for (const key of node.required ?? []) add(`${at}/${key}`, requiredMessage(node.properties?.[key]))
    }
  }
  const result: Problems = [...problems].map(([pointer, message]) => ({ pointer, message }))
  for (const at of unions) result.push(...unionProblems(schemaAt(root, at) ?? {}, valueAt(input, at), at))
  return result
}

/** Reports every name seen twice in a list of named items (a list-level problem: it reads after the items'). */
export function uniqueProblems(names: readonly string[], at: string, field: string): Problems {
  const seen = new Set<string>()
  return names.flatMap((name, index) => {
    const twice = name !== '' && seen.has(name)
    seen.add(name)
    return twice ? [{ pointer: `${at}/${index}/${field}`, message: `"${name}" is used more than once`, orderAt: at }] : []
  })
}

/**
 * Problems in the order a reader meets them: keys in the schema's order (unknown keys first), items by index, a
 * container's own problem before its items', a problem with `orderAt` after everything inside that part.
 */
export function inDocumentOrder(schema: object, problems: Problems): AiConfigProblem[] {
  const ranks = (pointer: string): number[] => {
    let node: Node | undefined = schema as Node
    return segments(pointer).map((key) => {
      const keys = node?.problemOrder ?? (node?.properties ? Object.keys(node.properties) : node?.anyOf?.flatMap((b) => Object.keys(b.properties ?? {})))
      node = node?.properties?.[key] ?? node?.items ?? branchProperty(node, key)
      return keys ? keys.indexOf(key) : Number(key)
    })
  }
  const compare = (a: number[], b: number[]): number => {
    for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return a[i]! - b[i]!
    return a.length - b.length
  }
  return problems
    .map((p) => ({ p, key: p.orderAt === undefined ? ranks(p.pointer) : [...ranks(p.orderAt), Number.MAX_SAFE_INTEGER] }))
    .sort((x, y) => compare(x.key, y.key))
    .map(({ p }) => ({ pointer: p.pointer, message: p.message }))
}
