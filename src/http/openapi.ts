import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config/schema.ts'
import type { Policy } from './auth.ts'
import { MAX_JSON_DEPTH } from './input-guard.ts'

const PAGING =
  `Lists that can grow use one paging convention across the API: \`limit\` (default and maximum given per route) ` +
  `and an opaque \`cursor\`; the answer carries \`nextCursor\` (null on the last page). Order is stable, ` +
  `so pages neither skip nor repeat items while others write.`

const AUTH =
  `Every endpoint needs \`X-Api-Key: csk_…\` (a tenant API key) or \`Authorization: Bearer …\` (an OIDC access token, ` +
  `or a site-PIN token on a site server), except those marked with no security. ` +
  `When both headers are present the API key is used. Every failed credential answers the same 401. ` +
  `The organisation is the one of the Host header (\`{slug}.{base domain}\`); ` +
  `a credential of another organisation answers the same 401.`

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
  `A caller whose role is too low gets 403 \`Forbidden\`; an absent or foreign resource the same 404 \`NotFound\`.`

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

/** Registers the OpenAPI 3.1 generator; must run before any route is added. */
export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  // Before installIdempotency's hook, so that its note on `Idempotency-Key` comes after the policy.
  app.addHook('onRoute', (route) => {
    const policy = route.config?.policy
    const schema = route.schema as { hide?: boolean; description?: string } | undefined
    if (policy === undefined || schema === undefined || schema.hide === true) return
    const sentence = POLICY_SENTENCES[policy]
    // A copy: a GET's schema object is shared with its HEAD route, and a route file may reuse one for several routes.
    route.schema = { ...schema, description: schema.description === undefined ? sentence : `${schema.description} ${sentence}` }
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'sitegrid',
        version: '0.1.0',
        description:
          `Multi-tenant management of industrial sites: controllers, equipment instances, electrical networks, ` +
          `alarms and historian data, with tenant API keys and organisation administration. ` +
          `This server runs in ${config.mode} mode.\n\n` +
          `## Authentication\n${AUTH}\n\n## Errors\n${ERRORS}\n\n## Input\n${INPUT}\n\n## Paging\n${PAGING}`,
      },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'Tenant API key, `csk_` + 32 base62 characters.' },
          Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'OIDC access token (cloud) or site-PIN token (site server).' },
        },
      },
      security: [{ ApiKey: [] }, { Bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
}
