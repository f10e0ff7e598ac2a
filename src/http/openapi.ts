import { STATUS_CODES } from 'node:http'
import { isDeepStrictEqual } from 'node:util'
import swagger from '@fastify/swagger'
import type { FastifyInstance, RouteOptions } from 'fastify'
import type { Config } from '../config/schema.ts'
import type { Policy } from './auth.ts'
import { isStorableStatus } from './idempotency.ts'
import { MAX_JSON_DEPTH } from './input-guard.ts'

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The request body of a route that reads its body itself (a multipart form, a stream), for the OpenAPI document
     * only: Fastify does not validate it (the route checks its parts and answers 400 naming them).
     */
    requestBody?: { description?: string; content: Record<string, { schema: unknown }> }
  }
}

const PAGING =
  `Lists that can grow use one paging convention across the API: \`limit\` (default and maximum given per route) ` +
  `and an opaque \`cursor\`; the answer carries \`nextCursor\` (null on the last page). Order is stable, ` +
  `so pages neither skip nor repeat items while others write.`

const AUTH =
  `Every endpoint needs \`X-Api-Key: csk_…\` (a tenant API key) or \`Authorization: Bearer …\` (an OIDC access token, ` +
  `or a site-PIN token on a site server), except those marked with no security. ` +
  `When both headers are present the API key is used. Every failed credential answers the same 401. ` +
  `The organisation is the one of the Host header (\`{slug}.{base domain}\`, case and a trailing dot aside; ` +
  `an absolute-form request target's host instead, RFC 9112 §3.2.2); ` +
  `a credential of another organisation answers the same 401. A request with two Host headers answers 400 \`ValidationFailed\` ` +
  `naming \`/host\` (\`in\`: \`headers\`).`

const INPUT =
  `Rules of every operation, checked before its own: a path parameter, query parameter or JSON string (value or property ` +
  `name) holding the NUL character (U+0000) or a lone surrogate (U+D800–U+DFFF without its pair) ` +
  `answers 400 \`ValidationFailed\` naming it (\`in\`, \`pointer\`), as does a JSON body nesting deeper than ` +
  `${MAX_JSON_DEPTH} levels of objects and arrays (the body itself is level 1; ` +
  `this bounds free-form fields such as \`config\` and \`metadata\`). A body whose content type the operation does not ` +
  `read (\`text/plain\`, a form, none at all) answers 415 \`UnsupportedMediaType\` listing those it does in ` +
  `\`acceptedTypes\`. Nothing is changed by a refused request.`

const ERRORS =
  `Errors are RFC 9457 \`application/problem+json\` with a stable \`code\`; \`type\` links a page explaining it. ` +
  `Validation failures list each field in \`errors\` (\`in\`, \`pointer\`, \`message\`); ` +
  `the pointer names the field itself, a missing one too (\`/name\`, "is required"). ` +
  `A caller whose role is too low gets 403 \`Forbidden\`; an absent or foreign resource the same 404 \`NotFound\`; a ` +
  `path asked with a method it does not take 405 \`MethodNotAllowed\` with \`Allow\` listing those it does. ` +
  `A request the HTTP parser refuses before any route reads it gets a problem too, on any path, and its connection ` +
  `closed: 400 \`MalformedRequest\` (a request line, header line or body framing not as RFC 9112 writes it), 408 ` +
  `\`RequestTimeout\` (slower than \`SITEGRID_HEADERS_TIMEOUT_MS\` or \`SITEGRID_REQUEST_TIMEOUT_MS\`), 431 \`HeadersTooLarge\` (over 16 KiB).`

/**
 * The sentence that documents a route's `config.policy` (http/auth.ts), one wording per policy. A route's own
 * description says only what is particular to it (an extra restriction, the `{slug}` rule, what is audited).
 */
export const POLICY_SENTENCES: Readonly<Record<Policy, string>> = {
  public: 'Policy: public.',
  member: 'Policy: any member, admin or owner (cloud: organisation role; site server: site role).',
  admin: 'Policy: admins and owners (cloud: organisation role; site server: site role); members get 403.',
  owner: 'Policy: owners (cloud: organisation role; site server: site role); admins and members get 403.',
  orgAdmin: 'Policy: OrgAdmin (organisation owner or admin, or a platform admin; never a site-PIN principal); members get 403.',
  platformAdmin: 'Policy: platform admins only.',
  link: "Policy: link (a site server's link credential, `Bearer slk_…`); every other credential gets 403.",
}

/** `Cache-Control: no-store`, as the routes whose answers hold a secret or a session set it. */
export const NO_STORE = { 'Cache-Control': { type: 'string', enum: ['no-store'], description: 'The answer holds a secret or a session: no cache keeps it.' } }

/** A download's `Content-Disposition`. */
export const attachment = (filename: string) => ({ 'Content-Disposition': { type: 'string', description: `\`attachment; filename="${filename}"\`` } })

/**
 * A response schema with the headers its route sets, for the OpenAPI document; Fastify's serializer reads no `headers`
 * keyword, so the answer is written as before.
 */
export function withHeaders<T extends object>(schema: T, headers: Record<string, object>): T {
  return { ...schema, headers }
}

/** The operations' groups, in the order a reader meets them. */
const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'Sites', description: 'Industrial sites, addressed by their `code` (spec 2.2, 4.2).' },
  { name: 'Controllers', description: "A site's PLCs and their connection settings (spec 2.3)." },
  { name: 'Instances', description: 'Equipment instances bound to a controller (spec 2.4).' },
  { name: 'Electrical network', description: "A site's electrical nodes and edges, its topology and protection (spec 2.5, 2.6)." },
  { name: 'Alarms', description: "A site's alarms, their events, states and load." },
  { name: 'Historian', description: 'Historian imports (spec 4.3) and the stored series.' },
  { name: 'Edge gateways', description: 'What an edge gateway polls, fetched with its site-restricted key (issue 30).' },
  { name: 'AI', description: 'The AI completion endpoint (spec 4.4) and its usage.' },
  { name: 'API keys', description: 'Tenant API keys: mint, list, revoke (spec 4.1).' },
  { name: 'Identity', description: 'Who the credential is.' },
  { name: 'Organisation administration', description: 'Members, domain bindings, the audit trail and configuration reload (spec 4.5).' },
  { name: 'Tenant transfer', description: 'Export of an organisation as a package and its import on another server (spec 4.5).' },
  { name: 'Fleet link', description: 'The link between a cloud cell and the site servers it manages.' },
  { name: 'Sign-in', description: 'Browser sign-in with the OpenID provider (cloud, spec 5.6).' },
  { name: 'Site sign-in', description: 'Site-PIN sign-in on a site server (spec 5.7).' },
  { name: 'Site users', description: "A site server's local users and their PINs." },
  { name: 'Operations', description: 'Liveness and readiness probes.' },
]

const siteHost = (host: string) => (host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host)

/** Where the API is served (spec 1): each organisation at its own subdomain; a site server at its own address. */
function serversOf(config: Config) {
  const cloud = {
    url: `${config.publicOriginScheme}://{slug}.{domain}`,
    description: 'A cloud cell: each organisation at its own subdomain, which selects it (spec 1).',
    variables: {
      slug: { default: 'acme', description: "The organisation's routing slug (claim `org_slug`)." },
      domain: { default: config.baseDomain, description: "The cell's base domain (`SITEGRID_BASE_DOMAIN`)." },
    },
  }
  const site = {
    url: 'http://{host}:{port}',
    description: 'A site server, on the site, reached at its own address (`HOST`, `PORT`); it serves one organisation.',
    // A wildcard listen address is no address to call (the machine's own name then); an IPv6 one goes in brackets.
    variables: { host: { default: siteHost(config.host) }, port: { default: String(config.port) } },
  }
  return config.mode === 'cloud' ? [cloud, site] : [site, cloud]
}

const COMPONENT_REF = '#/components/schemas/'

/**
 * A copy of a schema in which every named schema (one with a `$id`, STYLE §4) is a reference to the component of that
 * name, which is added to `components` (a copy itself, its own named schemas referenced in turn).
 */
function referenceNamed(value: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => referenceNamed(v, components))
  if (value === null || typeof value !== 'object') return value
  const { $id, ...rest } = value as Record<string, unknown>
  const copy = tupleAsPrefixItems(Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, referenceNamed(v, components)])))
  if (typeof $id !== 'string') return copy
  const known = components[$id]
  if (known === undefined) components[$id] = copy
  else if (!isDeepStrictEqual(known, copy)) throw new TypeError(`Two different schemas are named ${$id}`)
  return { $ref: `${COMPONENT_REF}${$id}` }
}

/** A tuple as JSON Schema 2020-12 (OpenAPI 3.1) writes it; TypeBox writes draft 7's `items: [...]` and `additionalItems`. */
function tupleAsPrefixItems(schema: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(schema.items)) return schema
  const { items, additionalItems, ...rest } = schema
  return additionalItems === undefined ? { ...rest, prefixItems: items } : { ...rest, prefixItems: items, items: additionalItems }
}

const RETRY_AFTER = { type: 'integer', minimum: 0 }

/** The response headers the server sets on an answer of this status (http/auth.ts, http/problem.ts, http/idempotency.ts, …). */
function headersOf(status: string, route: RouteOptions): Record<string, unknown> {
  const code = Number(status)
  const idempotent = route.config?.idempotent !== undefined
  const headers: Record<string, unknown> = {}
  if (code === 401) headers['WWW-Authenticate'] = { type: 'string', description: '`Bearer, ApiKey`: the credentials this API takes.' }
  if (code === 423 || code === 429) headers['Retry-After'] = { ...RETRY_AFTER, description: 'Seconds to wait before trying again.' }
  if (code === 503) {
    headers['Retry-After'] = {
      ...RETRY_AFTER,
      description: 'Seconds to wait before trying again, when the server knows (a busy alarm writer, the AI provider).',
    }
  }
  if (idempotent && code === 409) {
    headers['Retry-After'] = { ...RETRY_AFTER, description: 'With 409 `IdempotencyKeyInProgress`: seconds to wait before retrying with the same key.' }
  }
  if (idempotent && isStorableStatus(code)) {
    headers['Idempotent-Replayed'] = { type: 'string', enum: ['true'], description: 'The stored answer to an earlier request with the same `Idempotency-Key`.' }
  }
  return headers
}

/**
 * One response of the document: a named schema as a reference to its component, a description when the route gives
 * none (the status text), and the headers the server sets on it.
 */
function documentedResponse(status: string, entry: Record<string, unknown>, route: RouteOptions, components: Record<string, unknown>) {
  const headers = { ...(entry.headers as Record<string, unknown> | undefined), ...headersOf(status, route) }
  const described = Object.keys(headers).length > 0 ? { ...entry, headers } : entry
  if (typeof entry.$id === 'string') {
    const { headers: _, ...schema } = described
    return {
      description: STATUS_CODES[Number(status)] ?? status,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: { 'application/json': { schema: referenceNamed(schema, components) } },
    }
  }
  const copy = referenceNamed(described, components) as Record<string, unknown>
  const hasDescription = typeof copy.description === 'string' || typeof copy['x-response-description'] === 'string'
  return hasDescription ? copy : { ...copy, 'x-response-description': STATUS_CODES[Number(status)] ?? status }
}

/** The route schema as the document shows it (the route's own validates requests and writes answers unchanged). */
function documentedSchema(route: RouteOptions, components: Record<string, unknown>): Record<string, unknown> {
  const { requestBody, body, response, ...schema } = route.schema as Record<string, unknown> & { requestBody?: unknown; response?: Record<string, unknown> }
  const documented: Record<string, unknown> = { ...schema }
  const requestSchema = requestBody ?? body
  if (requestSchema !== undefined) documented.body = referenceNamed(requestSchema, components)
  if (response !== undefined) {
    documented.response = Object.fromEntries(
      Object.entries(response).map(([status, entry]) => [status, documentedResponse(status, entry as Record<string, unknown>, route, components)]),
    )
  }
  return documented
}

/** Said of the routes marked `grantsAccess` (http/auth.ts). */
const GRANTS_ACCESS_SENTENCE =
  'It gives access of its own to another account or machine, so an API key restricted to client networks is refused (403 `Forbidden`): its holder would leave the networks with a credential they do not bind.'

/** Registers the OpenAPI 3.1 generator; must run before any route is added. */
export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  // The named schemas (components.schemas): each route's as it is added, then those they name.
  const components: Record<string, unknown> = {}
  // Before installIdempotency's hook, so that its note on `Idempotency-Key` comes after the policy.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean; description?: string } | undefined
    if (schema === undefined || schema.hide === true) return
    // Before the document is first generated (it copies the components then): the route's named schemas.
    documentedSchema(route, components)
    const policy = route.config?.policy
    if (policy === undefined) return
    const sentence = route.config?.grantsAccess ? `${POLICY_SENTENCES[policy]} ${GRANTS_ACCESS_SENTENCE}` : POLICY_SENTENCES[policy]
    // A copy: a GET's schema object is shared with its HEAD route, and a route file may reuse one for several routes.
    route.schema = { ...schema, description: schema.description === undefined ? sentence : `${schema.description} ${sentence}` }
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'sitegrid',
        version: '0.1.0',
        license: { name: 'Proprietary', identifier: 'LicenseRef-sitegrid' },
        description:
          `Multi-tenant management of industrial sites: controllers, equipment instances, electrical networks, ` +
          `alarms and historian data, with tenant API keys and organisation administration. ` +
          `This server runs in ${config.mode} mode.\n\n` +
          `## Authentication\n${AUTH}\n\n## Errors\n${ERRORS}\n\n## Input\n${INPUT}\n\n## Paging\n${PAGING}`,
      },
      servers: serversOf(config),
      tags: [...TAGS],
      components: {
        schemas: components as Record<string, never>,
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'Tenant API key, `csk_` + 32 base62 characters.' },
          Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'OIDC access token (cloud) or site-PIN token (site server).' },
        },
      },
      security: [{ ApiKey: [] }, { Bearer: [] }],
    },
    transform: ({ route, url }) => ({ schema: documentedSchema(route, components) as never, url }),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
}
