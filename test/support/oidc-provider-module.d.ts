// oidc-provider v9 ships no type declarations and there is no @types package for it.
// This declares only the surface test/support/oidc-provider.ts uses; widen it when a test needs more.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface KoaContextLike {
    readonly path: string
    readonly method: string
    readonly query: Record<string, string | string[] | undefined>
    readonly req: IncomingMessage
    readonly res: ServerResponse
    status: number
    body: unknown
    redirect(url: string): void
    set(field: string, value: string): void
  }
  export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<void>) => Promise<void>

  export interface ClientLike {
    readonly clientId: string
    readonly subjectType?: string
  }
  export interface PromptDetails {
    missingOIDCScope?: string[]
    missingOIDCClaims?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  export interface InteractionLike {
    readonly uid: string
    readonly prompt: { name: string; reasons: string[]; details: PromptDetails }
    readonly params: Record<string, unknown>
    readonly session?: { accountId?: string }
    readonly grantId?: string
  }
  export interface GrantLike {
    addOIDCScope(scope: string): void
    addOIDCClaims(claims: string[]): void
    addResourceScope(resource: string, scope: string): void
    save(): Promise<string>
  }
  export interface GrantClass {
    new (init: { accountId: string; clientId: string }): GrantLike
    find(id: string): Promise<GrantLike | undefined>
  }
  export interface ResourceServerInfo {
    scope: string
    audience?: string
    accessTokenTTL?: number
    accessTokenFormat?: 'opaque' | 'jwt'
    jwt?: { sign?: { alg?: string; kid?: string } }
  }
  export interface ResourceServerLike {
    readonly audience?: string
  }
  export interface AccessTokenLike {
    save(): Promise<string>
  }
  export interface AccessTokenClass {
    new (init: {
      accountId: string
      client: ClientLike
      grantId?: string
      gty?: string
      scope?: string
      expiresIn?: number
      resourceServer?: ResourceServerLike
    }): AccessTokenLike
  }
  export interface TokenLike {
    readonly accountId?: string
    readonly kind: string
  }
  export interface AccountLike {
    accountId: string
    claims(use: string, scope: string): Promise<Record<string, unknown>>
  }
  export interface OidcContextLike {
    readonly oidc: {
      readonly client: ClientLike
      readonly session: { readonly accountId?: string; grantIdFor(clientId: string): string | undefined }
      readonly result?: { consent?: { grantId?: string } }
      readonly provider: Provider
    }
  }

  export interface Configuration {
    adapter?: (model: string) => object
    clients?: Record<string, unknown>[]
    jwks?: { keys: Record<string, unknown>[] }
    cookies?: { keys?: string[] }
    claims?: Record<string, string[]>
    features?: Record<string, Record<string, unknown>>
    pkce?: { required?: (ctx: unknown, client: ClientLike) => boolean }
    subjectTypes?: string[]
    pairwiseIdentifier?: (ctx: unknown, accountId: string, client: ClientLike) => Promise<string> | string
    findAccount?: (ctx: unknown, id: string, token?: unknown) => Promise<AccountLike | undefined>
    extraTokenClaims?: (ctx: unknown, token: TokenLike) => Promise<Record<string, unknown> | undefined>
    issueRefreshToken?: (ctx: unknown, client: ClientLike & { grantTypeAllowed(type: string): boolean }) => Promise<boolean> | boolean
    loadExistingGrant?: (ctx: OidcContextLike) => Promise<GrantLike | undefined>
    ttl?: Record<string, number>
    enabledJWA?: Record<string, string[]>
    clientDefaults?: Record<string, unknown>
    renderError?: (ctx: KoaContextLike, out: Record<string, unknown>, error: Error) => void
  }

  export class Provider {
    constructor(issuer: string, configuration: Configuration)
    readonly issuer: string
    readonly Grant: GrantClass
    readonly AccessToken: AccessTokenClass
    readonly ResourceServer: new (
      identifier: string,
      info: ResourceServerInfo,
    ) => ResourceServerLike
    readonly Client: { find(id: string): Promise<ClientLike | undefined> }
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    use(middleware: KoaMiddleware): this
    on(event: string, listener: (...args: unknown[]) => void): this
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionLike>
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>
  }
}
