import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'

export const SiteRoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')], {
  description:
    'Site role: `owner` > `admin` > `member`. Owners and admins manage site users, API keys and site configuration. Nobody gives a role above their own.',
})

export const PinSchema = Type.String({
  pattern: '^[0-9]{6,12}$',
  description: '6 to 12 digits. Stored only as a salted scrypt hash; never returned or logged.',
  examples: ['482913'],
})

const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  pattern: '^[^@\\s]+@[^@\\s]+$',
  description: 'Sign-in name; compared case-insensitively and unique in the organisation.',
})
const DisplayName = Type.String({ minLength: 1, maxLength: 200 })

export const SiteUserSchema = Type.Object(
  {
    id: Type.String({ description: '`su_` + 26 characters.' }),
    email: Type.String(),
    displayName: Type.String(),
    siteRole: Type.String({ description: '`owner`, `admin` or `member`.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    pinChangedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'SiteUser', additionalProperties: false },
)
export type SiteUser = Static<typeof SiteUserSchema>

export const SiteUserPageSchema = Page(SiteUserSchema, 'Site users ordered by e-mail.')

export const ListSiteUsersQuery = Type.Object({ ...PageQuery({ defaultLimit: 50, maxLimit: 200 }) }, { additionalProperties: false })
export type ListSiteUsersQueryInput = Static<typeof ListSiteUsersQuery>

export const CreateSiteUserBody = Type.Object(
  {
    email: Email,
    displayName: DisplayName,
    siteRole: SiteRoleSchema,
    pin: PinSchema,
  },
  { additionalProperties: false },
)
export type CreateSiteUserInput = Static<typeof CreateSiteUserBody>

export const UpdateSiteUserBody = Type.Object(
  {
    displayName: Type.Optional(DisplayName),
    siteRole: Type.Optional(SiteRoleSchema),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateSiteUserInput = Static<typeof UpdateSiteUserBody>

export const SetPinBody = Type.Object({ pin: PinSchema }, { additionalProperties: false })

export const SiteUserParams = Type.Object(
  {
    userId: Type.String({ maxLength: 64, description: 'The site user id (`su_…`).' }),
  },
  { additionalProperties: false },
)

export const SiteUserUnlockedSchema = Type.Object(
  {
    email: Type.String({ description: 'The e-mail whose sign-in lock ended.' }),
    wasLockedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the lock would have ended; null when the e-mail was not locked (its failure count is reset all the same).',
    }),
  },
  { $id: 'SiteUserUnlocked', additionalProperties: false },
)
