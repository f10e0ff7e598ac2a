// The contract between the console's shell (router, API client, sign-in) and its pages.
// Pages are plain TypeScript: a page mounts into an element and may return a cleanup function
// (stop polling, drop listeners) that the router calls before the next page mounts.

import type { Me } from './api-types.ts'

/** One field at fault: the shape of the API's `errors[]` items, without the location the console does not show. */
export type FieldError = { pointer: string; message: string }

/** An RFC 9457 problem answered by the API, thrown by every Api method on a non-2xx answer. */
export class ApiProblem extends Error {
  readonly status: number
  readonly code: string
  readonly detail: string | undefined
  /** The fields at fault, as the API names them (`errors[]` of a 400: `pointer` and `message`). */
  readonly errors: ReadonlyArray<FieldError>
  /** A locked sign-in's end (423 `PinLocked`, 429 `SignInThrottled`): an ISO timestamp. */
  readonly lockedUntil: string | undefined
  /** What a delete would remove, by kind (409 `ConfirmationRequired` of a site's delete without `confirm`). */
  readonly wouldDelete: Readonly<Record<string, number>> | undefined
  /** Every parameter a study lacks (422 `StudyDataMissing`): the node, the parameter and why it is needed. */
  readonly missing: ReadonlyArray<{ nodeId: string; parameter: string; reason: string }>

  constructor(
    status: number,
    body: {
      code?: string
      title?: string
      detail?: string
      errors?: FieldError[]
      lockedUntil?: string
      wouldDelete?: Record<string, number>
      missing?: Array<{ nodeId: string; parameter: string; reason: string }>
    },
  ) {
    super(body.detail ?? body.title ?? `HTTP ${status}`)
    this.name = 'ApiProblem'
    this.status = status
    this.code = body.code ?? 'Unknown'
    this.detail = body.detail
    this.errors = body.errors ?? []
    this.lockedUntil = body.lockedUntil
    this.wouldDelete = body.wouldDelete
    this.missing = body.missing ?? []
  }
}

/** Same-origin calls to the public API with the signed-in user's bearer token (never anything else). */
export interface Api {
  get<T>(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<T>
  /** `body` goes as JSON; with `type` (e.g. `text/csv`) it is a string sent as it is. */
  send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, options?: { type: string }): Promise<T>
  /** multipart/form-data upload; `onProgress` gets 0..1 as the request body is sent. */
  upload<T>(path: string, form: FormData, onProgress?: (fraction: number) => void): Promise<T>
}

export interface Principal {
  /** 'user' (OIDC browser session) or 'sitePin' (site-PIN sign-in), as GET /api/me names them. */
  kind: Exclude<Me['kind'], 'apiKey'>
  /** Role in the host's organisation: owner, admin, member, or a site role. */
  role: string
  name: string
  /** A platform admin (cloud control plane): passes every policy in every organisation. */
  isPlatformAdmin?: boolean
}

export interface PageContext {
  api: Api
  /** Parameters of the matched route, e.g. { code: 'PLANT-1' } for /sites/:code. */
  params: Readonly<Record<string, string>>
  /** Query string of the current location. */
  query: URLSearchParams
  principal: Principal
  org: { slug: string }
  mode: 'cloud' | 'site'
  navigate(path: string): void
  /** Shows a short status message (role="status") in the shell. */
  notify(message: string, kind?: 'info' | 'error'): void
}

export type Cleanup = () => void
export type Page = (root: HTMLElement, ctx: PageContext) => Promise<Cleanup | void> | Cleanup | void
