import { Type, type TSchema } from 'typebox'
import { invalidField } from '../errors/domain-error.ts'
import { textRule } from './input-guard.ts'

/**
 * One paging convention for the whole API: `limit` and an opaque `cursor` in, `{ items, nextCursor }` out.
 * The cursor carries the sort key of the last item returned, so pages neither skip nor repeat items while
 * others write (keyset paging, stable order).
 */
export function PageQuery(options: { defaultLimit: number; maxLimit: number }) {
  return {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: options.maxLimit,
        default: options.defaultLimit,
        description: `Page size, 1 to ${options.maxLimit} (default ${options.defaultLimit}).`,
      }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 512, description: 'Opaque; the `nextCursor` of the previous page.' })),
  }
}

export function Page<T extends TSchema>(item: T, description?: string) {
  const name = (item as { $id?: unknown }).$id
  return Type.Object(
    {
      items: Type.Array(item),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
    },
    // A page of a named item is named after it (`SitePage`): one component of the OpenAPI document (http/openapi.ts).
    { additionalProperties: false, description, ...(typeof name === 'string' ? { $id: `${name}Page` } : {}) },
  )
}

export type CursorKey = ReadonlyArray<string | number>

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url')
}

/** Decodes a cursor made by `encodeCursor` with the given shape; anything else is a 400 naming `cursor`. */
export function decodeCursor(cursor: string | undefined, shape: ReadonlyArray<'string' | 'number'>): CursorKey | undefined {
  if (cursor === undefined) return undefined
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    // As made by encodeCursor: whole numbers (times, sequences, codes) and storable texts. A crafted `[1e400]` (read as
    // Infinity), `[1.5]` or a NUL in a text reached the database and answered 500 on PostgreSQL.
    if (
      Array.isArray(key) &&
      key.length === shape.length &&
      key.every((v, i) => typeof v === shape[i] && (typeof v === 'number' ? Number.isSafeInteger(v) : textRule(v) === undefined))
    )
      return key as CursorKey
  } catch {
    // fall through to the 400
  }
  throw invalidField('/cursor', 'is not a cursor returned by this list', 'query')
}

/** Splits a page fetched with `limit + 1` rows into the items and the next cursor. */
export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T, keyOf: (row: R) => CursorKey): { items: T[]; nextCursor: string | null } {
  const hasMore = rows.length > limit
  const pageRows = hasMore ? rows.slice(0, limit) : rows
  const last = pageRows[pageRows.length - 1]
  return { items: pageRows.map(map), nextCursor: hasMore && last !== undefined ? encodeCursor(keyOf(last)) : null }
}
