import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'

const ORG_ROLES = [Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')] as const
const OrgRole = Type.Union([...ORG_ROLES])

export const MemberSchema = Type.Object(
  {
    accountId: Type.String({ description: "The membership key: the account's OIDC `oid` (not the pairwise `sub`)." }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('active')], {
      description: '`pending`: signed in, awaits approval (403 on every API call until then).',
    }),
    role: Type.Union([OrgRole, Type.Null()], { description: 'The organisation role; null while pending.' }),
    email: Type.Union([Type.String(), Type.Null()], { description: "From the provider's claims at the latest sign-in." }),
    name: Type.Union([Type.String(), Type.Null()], { description: "From the provider's claims at the latest sign-in." }),
    requestedAt: Type.String({ format: 'date-time', description: 'First sign-in (or first bearer call) at this organisation.' }),
    decidedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the request was approved; null while pending.' }),
  },
  { $id: 'Member', additionalProperties: false },
)
export type Member = Static<typeof MemberSchema>

export const MemberListSchema = Page(MemberSchema, 'Pending and active members, ordered by accountId.')
export type MemberList = { items: Member[]; nextCursor: string | null }

export const ListMembersQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 100, maxLimit: 500 }),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('active')], { description: 'Only pending requests, or only active members.' })),
  },
  { additionalProperties: false },
)
export type ListMembersQueryInput = Static<typeof ListMembersQuery>

export const OrgSlugParams = Type.Object(
  {
    slug: Type.String({
      minLength: 1,
      maxLength: 63,
      description: "The organisation's slug: the host's own (else 404) unless the caller is a platform admin.",
    }),
  },
  { additionalProperties: false },
)

export const MemberParams = Type.Object(
  {
    slug: OrgSlugParams.properties.slug,
    accountId: Type.String({ minLength: 1, maxLength: 255, description: "The member's `oid`." }),
  },
  { additionalProperties: false },
)

export const ApproveMemberBody = Type.Union([
  Type.Object(
    {
      role: Type.Optional(
        Type.Union([...ORG_ROLES], { description: "Default `member`. Not above the caller's own role (403); platform admins may grant any." }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
])
