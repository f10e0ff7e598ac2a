import { Type, type Static } from 'typebox'

const Timestamp = (description: string) => Type.String({ format: 'date-time', description })

export const KeyRole = Type.String({
  minLength: 1,
  maxLength: 50,
  description:
    'One of `owner`, `admin`, `member`. The control-plane roles `platform_admin`, ' +
    "`platform_operator` and `service` are reserved (400 `ReservedRole`); a role above the caller's own is refused (403).",
  examples: ['member'],
})

export const MintApiKeyBody = Type.Object(
  {
    role: KeyRole,
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Human-readable label, shown in lists and reminder e-mails.' }),
    expiresAt: Timestamp('Required. From 1 hour to 730 days after now (400 `ExpiryPolicyViolation` otherwise). RFC 3339 with an offset or Z.'),
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
