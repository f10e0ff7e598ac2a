import { Type, type Static } from 'typebox'
import { SITE_CODE_PATTERN } from '../sites/schemas.ts'

const Timestamp = (description: string) => Type.String({ format: 'date-time', description })

export const KeyRole = Type.String({
  minLength: 1,
  maxLength: 50,
  description:
    'One of `owner`, `admin`, `member`. The control-plane roles `platform_admin`, ' +
    "`platform_operator` and `service` are reserved (400 `ReservedRole`); a role above the caller's own is refused (403), " +
    'except for a platform admin.',
  examples: ['member'],
})

export const MAX_KEY_NETWORKS = 16

const KeySite = Type.String({
  pattern: SITE_CODE_PATTERN,
  description:
    "Restricts the key to this site (its code, as in `/api/sites/{siteId}/…`), for an edge gateway: another site's routes answer 404 as " +
    'for an unknown site, and routes of no site (keys, members, the site list, imports by body) 403; `GET /api/me` stays open. ' +
    'The site must exist (400 naming `/siteId` otherwise). Absent: every site of the organisation. Fixed for the life of the key.',
  examples: ['HV-CHPP-1'],
})

const KeyNetworks = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), {
  minItems: 1,
  maxItems: MAX_KEY_NETWORKS,
  description:
    `Restricts the key to clients in these networks: up to ${MAX_KEY_NETWORKS} CIDR blocks, IPv4 or IPv6 (a bare address is /32 or /128). ` +
    "From any other address the key fails like an unknown key (the uniform 401). The client address is the socket's, or behind a trusted " +
    'proxy (`SITEGRID_TRUST_PROXY`) the forwarded one. Absent: any address. A key that is itself restricted to networks mints only keys ' +
    'restricted to blocks inside its own (403 naming `/networks` or the wider block otherwise).',
  examples: [['10.20.0.0/16', '2001:db8:5::/48']],
})

const Restriction = {
  siteId: Type.Union([Type.String(), Type.Null()], { description: 'The one site the key reaches; null: every site.' }),
  networks: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The client networks the key is accepted from (canonical CIDR); null: any.' }),
}

export const MintApiKeyBody = Type.Object(
  {
    role: KeyRole,
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Human-readable label, shown in lists and reminder e-mails.' }),
    expiresAt: Timestamp('Required. From 1 hour to 730 days after now (400 `ExpiryPolicyViolation` otherwise). RFC 3339 with an offset or Z.'),
    siteId: Type.Optional(KeySite),
    networks: Type.Optional(KeyNetworks),
  },
  { $id: 'MintApiKeyBody', additionalProperties: false },
)
export type MintApiKeyInput = Static<typeof MintApiKeyBody>

export const MintedApiKeySchema = Type.Object(
  {
    keyId: Type.String({ format: 'uuid' }),
    keyPrefix: Type.String({ description: '`csk_` plus the first 4 base62 characters: the only fragment kept for display.' }),
    plaintext: Type.String({ description: 'The key itself. Returned here exactly once and never again: store it now.' }),
    role: Type.String(),
    name: Type.String(),
    expiresAt: Type.String({ format: 'date-time' }),
    createdAt: Type.String({ format: 'date-time' }),
    ...Restriction,
  },
  { $id: 'MintedApiKey', additionalProperties: false },
)
export type MintedApiKey = Static<typeof MintedApiKeySchema>

export const ApiKeySchema = Type.Object(
  {
    keyId: Type.String({ format: 'uuid' }),
    keyPrefix: Type.String(),
    role: Type.String(),
    name: Type.String(),
    createdByUserId: Type.String({ description: "The minting principal: an API key's keyId, an OIDC `sub`, a site user id, or `cli`." }),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Null until first use; updated best-effort within a few seconds of use.',
    }),
    ...Restriction,
  },
  { $id: 'ApiKey', additionalProperties: false },
)
export type ApiKey = Static<typeof ApiKeySchema>

export const ApiKeyListSchema = Type.Array(ApiKeySchema, { description: "Non-revoked keys of the caller's organisation, newest created first." })

export const ApiKeyParams = Type.Object(
  {
    keyId: Type.String({ description: "The key's UUID (not its prefix)." }),
  },
  { additionalProperties: false },
)

export const RevokeApiKeyBody = Type.Union([
  Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500, description: 'Kept for audit.' })) }, { additionalProperties: false }),
  Type.Null(),
])
