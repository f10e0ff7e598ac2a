import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/paging.ts'

export const AuditEventSchema = Type.Object(
  {
    id: Type.String({ description: 'Time-ordered id (`aud_…`).' }),
    at: Type.String({ format: 'date-time', description: 'When the change committed.' }),
    actorKind: Type.String({ description: 'Who: `apiKey`, `user`, `sitePin` or `cli`.' }),
    actorId: Type.String({ description: "The actor's subject: a keyId, an OIDC `sub`, a site user id, or `cli`." }),
    action: Type.String({
      description: 'What, e.g. `api_key.minted`, `api_key.revoked`, `domain.bound`, `domain.enabled`, `config.reloaded`, `config.reload_refused`.',
    }),
    target: Type.String({ description: 'What it was done to: a keyId, a domain, `config`, …' }),
    detail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'Action-specific facts (a reason, the settings changed); never a secret.',
    }),
  },
  { $id: 'AuditEvent', additionalProperties: false },
)
/** An audit row as the API shows it (the organisation's trail and the platform's). */
export type AuditEvent = Static<typeof AuditEventSchema>

export const ListAuditQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 50, maxLimit: 200 }),
    action: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '^[a-z_.]+$',
        description: 'Only actions starting with this prefix (case-sensitive), e.g. `domain.` or `api_key`.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ListAuditQueryInput = Static<typeof ListAuditQuery>
