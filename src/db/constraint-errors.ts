// Driver errors that mean "the database refused a write for a rule": one recognition for both dialects.

/** A unique or primary-key violation (PostgreSQL 23505; SQLite SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/** A foreign-key violation (PostgreSQL 23503, SQLite SQLITE_CONSTRAINT_FOREIGNKEY). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY'
}

/**
 * The rule of its table a written row broke, other than uniqueness: `not null`, `foreign key`, `check`, or `type` (a
 * value the column cannot hold: PostgreSQL class 22, SQLite SQLITE_MISMATCH); undefined for any other error.
 */
export function rowRuleBroken(err: unknown): 'not null' | 'foreign key' | 'check' | 'type' | undefined {
  const code = (err as { code?: unknown } | null)?.code
  if (code === '23502' || code === 'SQLITE_CONSTRAINT_NOTNULL') return 'not null'
  if (isForeignKeyViolation(err)) return 'foreign key'
  if (code === '23514' || code === 'SQLITE_CONSTRAINT_CHECK') return 'check'
  if ((typeof code === 'string' && code.startsWith('22') && code.length === 5) || code === 'SQLITE_MISMATCH') return 'type'
  return undefined
}
