// Small readers for validating an untyped configuration object. Each records a precise problem and returns a
// placeholder, so one pass reports every bad key instead of stopping at the first.

export interface AiConfigProblem {
  /** JSON pointer into the input, e.g. `/providers/1/baseUrl`. */
  readonly pointer: string
  readonly message: string
}

export type Problems = AiConfigProblem[]

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? 'a string' : `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`
}

/** Reports keys that are not allowed, which catches typos such as `timeoutMS`. */
export function checkKeys(record: Record<string, unknown>, allowed: readonly string[], at: string, problems: Problems): void {
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key)) problems.push({ pointer: `${at}/${key}`, message: `unknown key; expected one of ${allowed.join(', ')}` })
  }
}

export function readRecord(value: unknown, at: string, problems: Problems): Record<string, unknown> | undefined {
  if (isRecord(value)) return value
  problems.push({ pointer: at, message: value === undefined ? 'is required (an object)' : `must be an object, got ${describe(value)}` })
  return undefined
}

export function readArray(value: unknown, at: string, problems: Problems, options: { minItems: number }): unknown[] {
  if (!Array.isArray(value)) {
    problems.push({ pointer: at, message: value === undefined ? 'is required (an array)' : `must be an array, got ${describe(value)}` })
    return []
  }
  if (value.length < options.minItems) problems.push({ pointer: at, message: `must hold at least ${options.minItems} item(s)` })
  return value
}

export function readString(
  record: Record<string, unknown>, key: string, at: string, problems: Problems,
  rule: { pattern?: RegExp; hint?: string; maxLength?: number } = {},
): string {
  const value = record[key]
  const pointer = `${at}/${key}`
  if (typeof value !== 'string' || value === '') {
    problems.push({ pointer, message: value === undefined ? 'is required' : `must be a non-empty string, got ${describe(value)}` })
    return ''
  }
  if (rule.maxLength !== undefined && value.length > rule.maxLength) {
    problems.push({ pointer, message: `must be at most ${rule.maxLength} characters, got ${value.length}` })
  } else if (rule.pattern && !rule.pattern.test(value)) {
    problems.push({ pointer, message: `"${value}" ${rule.hint ?? `does not match ${rule.pattern.source}`}` })
  }
  return value
}

export function readInteger(
  record: Record<string, unknown>, key: string, at: string, problems: Problems,
  rule: { min: number; max: number; fallback?: number },
): number {
  const value = record[key]
  if (value === undefined && rule.fallback !== undefined) return rule.fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || value > rule.max) {
    const got = typeof value === 'number' ? String(value) : describe(value)
    problems.push({ pointer: `${at}/${key}`, message: value === undefined ? 'is required' : `must be an integer from ${rule.min} to ${rule.max}, got ${got}` })
    return rule.fallback ?? rule.min
  }
  return value
}

export function readBoolean(record: Record<string, unknown>, key: string, at: string, problems: Problems, fallback: boolean): boolean {
  const value = record[key]
  if (value === undefined) return fallback
  if (typeof value === 'boolean') return value
  problems.push({ pointer: `${at}/${key}`, message: `must be true or false, got ${describe(value)}` })
  return fallback
}

/** Reports every name seen twice in a list of named items. */
export function checkUnique(names: readonly string[], at: string, field: string, problems: Problems): void {
  const seen = new Set<string>()
  names.forEach((name, index) => {
    if (name !== '' && seen.has(name)) problems.push({ pointer: `${at}/${index}/${field}`, message: `"${name}" is used more than once` })
    seen.add(name)
  })
}
