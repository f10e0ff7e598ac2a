import { CompiledQuery, type Compilable, SelectQueryNode } from 'kysely'
import { directReader } from './connect.ts'
import type { Db } from './schema.ts'

interface Shape {
  sql: string
  /** For each bound parameter: the index of the argument it takes, or -1 for a constant of the query. */
  slots: number[]
  constants: unknown[]
}

/**
 * Kysely builds and compiles a query's tree on every call, which costs more than running a small indexed query.
 * For a hot read whose shape never changes, this compiles it once per database (with marker values in place of
 * the string arguments) and afterwards runs the same SQL with the real arguments bound. Reads only (a SELECT without
 * locking clause), and small ones (an indexed lookup): on PostgreSQL the reads of a turn run together in one
 * transaction, one after the other on one connection (pg-pool.ts), where a write would hold its locks for the others'
 * time and be undone by their failure, and a slow read would hold up the others. Arguments must be bound
 * parameters of the query (values compared or inserted), never identifiers or anything that changes its shape.
 * Outside a transaction the statement runs without Kysely's executor (connect.ts `directReader`): on SQLite directly on
 * the connection, on PostgreSQL prepared by name on a pooled client carrying the caller's scope (pg-pool.ts).
 */
export function reusableQuery<Args extends string[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
  const shapes = new WeakMap<Db, Shape>()
  return (db: Db, ...args: Args): Promise<Row[]> => {
    // Not async, and a direct read's promise handed on as it is (issue 29, fifth pass: each promise of a request
    // runs Node's promise hooks on PostgreSQL); a failure is still a rejection, never a throw.
    try {
      let shape = shapes.get(db)
      if (!shape) {
        const markers = args.map((_, i) => `\u0000reusable-query-argument-${i}\u0000`) as Args
        const compiled = build(db, ...markers).compile()
        if (!SelectQueryNode.is(compiled.query) || compiled.query.endModifiers?.length) {
          throw new TypeError('reusableQuery: reads only (a SELECT without a locking clause such as FOR UPDATE)')
        }
        const slots = compiled.parameters.map((p) => (typeof p === 'string' ? markers.indexOf(p) : -1))
        if (new Set(slots.filter((s) => s >= 0)).size !== args.length) throw new TypeError('reusableQuery: every argument must be a bound parameter')
        shape = { sql: compiled.sql, slots, constants: [...compiled.parameters] }
        shapes.set(db, shape)
      }
      const { sql, slots, constants } = shape
      const parameters = slots.map((slot, i) => (slot < 0 ? constants[i] : args[slot]))
      const rows = directReader(db)?.(sql, parameters)
      if (rows) return Promise.resolve(rows as Row[] | Promise<Row[]>)
      return db.executeQuery(CompiledQuery.raw(sql, parameters)).then((result) => result.rows as Row[])
    } catch (err) {
      return Promise.reject(err as Error)
    }
  }
}
