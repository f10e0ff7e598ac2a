/** Size bounds of an instance (spec 2.4 gives none; these are ours, documented in the OpenAPI document). */
export const INSTANCE_LIMITS = {
  idMaxLength: 100,
  nameMaxLength: 200,
  typeIdMaxLength: 100,
  typeVersionMaxLength: 50,
  assetNumberMaxLength: 100,
  areaMaxLength: 100,
  tagMappingsMaxKeys: 1000,
  tagKeyMaxLength: 200,
  tagValueMaxLength: 500,
  tagMappingsMaxBytes: 65_536,
  configMaxKeys: 100,
  configKeyMaxLength: 100,
  configMaxBytes: 16_384,
  configMaxDepth: 8,
  bulkMaxItems: 5000,
} as const

export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$'

/** UTF-8 bytes of the canonical JSON text, the way it is stored. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(canonicalJson(value), 'utf8')
}

/** JSON with object keys sorted, so equal values store (and compare) as equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value))
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    // fromEntries defines own properties, so a key named `__proto__` is kept as data, never as a prototype.
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    )
  }
  return value
}

/** Nesting depth of a JSON value: a scalar is 0, `{}` is 1. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  let deepest = 0
  for (const child of children) deepest = Math.max(deepest, jsonDepth(child))
  return deepest + 1
}
