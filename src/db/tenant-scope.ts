import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The tenant a piece of work runs for, as PostgreSQL row-level security sees it (README § PostgreSQL, row-level
 * security). The PostgreSQL driver (connect.ts) copies the current scope into the session setting
 * `sitegrid.org_id` of the connection a query or transaction acquires; the policies of migration 1200 show a row
 * only when its `org_id` equals that setting, or when the setting is the system scope `*`.
 *
 * - A request runs in its organisation's scope once authentication resolved it (http/auth.ts).
 * - Work that crosses organisations by design (authentication lookups before the tenant is known, background
 *   jobs, the CLI, migrations) runs inside `withSystemScope`, so that every such path is named and greppable.
 * - No scope at all is the empty setting: every tenant table looks empty (closed by default).
 * SQLite has no row-level security: requests carry no scope cell there (http/auth.ts), and until a PostgreSQL
 * database is connected in the process (`carryTenantScopes`, db/connect.ts) the scope functions only call through.
 */
export const SYSTEM_SCOPE = '*'

interface ScopeCell {
  scope: string
  /** A request's cell, which the tenancy layer fills once it resolved the host. */
  readonly request: boolean
}

// The one storage of the process: AsyncLocalStorage is per-process by nature; it holds no data of its own.
const storage = new AsyncLocalStorage<ScopeCell>()
// Whether scopes are carried at all. An AsyncLocalStorage that has run once keeps Node's promise hooks on for every
// promise of the process (~8 % of the CPU of a cached API-key request), which buys nothing where no database reads
// the scope. One-way: set by the first PostgreSQL connection of the process, and never cleared.
let carried = false

/** Called by connectDatabase for PostgreSQL, before the handle exists: from now on every scope is carried. */
export function carryTenantScopes(): void {
  carried = true
}

/** The scope the current async context runs in: an organisation id, `*`, or '' (none: no tenant rows). */
export function currentScope(): string {
  return storage.getStore()?.scope ?? ''
}

/** Runs `fn` across organisations. Use only on paths that cross tenants by design, and say why at the call. */
export function withSystemScope<T>(fn: () => T): T {
  if (!carried) return fn()
  return storage.run({ scope: SYSTEM_SCOPE, request: false }, fn)
}

/** Runs `fn` in one organisation's scope. */
export function withOrgScope<T>(orgId: string, fn: () => T): T {
  if (orgId === '' || orgId === SYSTEM_SCOPE) throw new TypeError('an organisation scope needs an organisation id')
  if (!carried) return fn()
  return storage.run({ scope: orgId, request: false }, fn)
}

/**
 * A request's scope cell (http/auth.ts opens one per request): starts empty, and the tenancy layer fills it once
 * it resolved the request's host (`enterRequestOrgScope`). Mutable so that one Fastify hook can set it for the
 * hooks and the handler that follow it.
 */
export function runInRequestScope<T>(fn: () => T): T {
  if (!carried) return fn()
  return storage.run({ scope: '', request: true }, fn)
}

/** Puts the request the caller runs in into `orgId`'s scope; outside a request (tests, CLI) it does nothing. */
export function enterRequestOrgScope(orgId: string): void {
  const cell = storage.getStore()
  if (!cell?.request) return
  if (orgId === '' || orgId === SYSTEM_SCOPE) throw new TypeError('an organisation scope needs an organisation id')
  cell.scope = orgId
}
