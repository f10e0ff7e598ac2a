import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'
import { describeCodes } from '../../http/code-tables.ts'
import { SITE_STATUS, SITE_STATUS_CODES } from './codes.ts'

export const SITE_CODE_PATTERN = '^[A-Za-z0-9_-]{1,50}$'

export const SiteCode = Type.String({
  pattern: SITE_CODE_PATTERN,
  description: "The site's code: 1 to 50 letters, digits, `-` and `_`, unique in the organisation. Every `{code}`, `{siteId}` and `site_id` takes it.",
  examples: ['HV-CHPP-1'],
})

export const SiteStatus = Type.Integer({
  enum: SITE_STATUS_CODES,
  description: `Site status: ${describeCodes(SITE_STATUS)}.`,
  'x-enum-varnames': SITE_STATUS.map((s) => s.name),
})

const Name = Type.String({ minLength: 1, maxLength: 200 })
const Description = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 'Free text, up to 2000 characters; null clears it.' })
const Location = Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
  description: 'Where the site is (address, coordinates, region), up to 200 characters; null clears it.',
})
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone (e.g. `Australia/Sydney`); local historian times and alarm shifts use it. Default `UTC`.',
  examples: ['Australia/Sydney'],
})

export const CreateSiteBody = Type.Object(
  {
    code: SiteCode,
    name: Name,
    description: Type.Optional(Description),
    location: Type.Optional(Location),
    timeZone: Type.Optional(TimeZone),
    status: Type.Optional(SiteStatus),
  },
  { $id: 'CreateSiteBody', additionalProperties: false },
)
export type CreateSiteInput = Static<typeof CreateSiteBody>

export const UpdateSiteBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    location: Type.Optional(Location),
    timeZone: Type.Optional(TimeZone),
    status: Type.Optional(SiteStatus),
  },
  {
    $id: 'UpdateSiteBody',
    additionalProperties: false,
    description: 'Spec 2.2: every field optional; an absent field is left as it is, a null clears a nullable one.',
  },
)
export type UpdateSiteInput = Static<typeof UpdateSiteBody>

export const SiteSchema = Type.Object(
  {
    code: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    location: Type.Union([Type.String(), Type.Null()]),
    timeZone: Type.String(),
    status: Type.Integer(),
    statusName: Type.String({ description: 'The name of `status`.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Site', additionalProperties: false },
)
export type Site = Static<typeof SiteSchema>

export const SitePage = Page(SiteSchema, 'Sites ordered by code.')

export const ListSitesQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 50, maxLimit: 500 }),
    status: Type.Optional(SiteStatus),
  },
  { additionalProperties: false },
)
export type ListSitesQueryInput = Static<typeof ListSitesQuery>

export const SiteParams = Type.Object({ code: Type.String({ maxLength: 200 }) }, { additionalProperties: false })

export const DeleteSiteQuery = Type.Object(
  {
    confirm: Type.Optional(
      Type.String({ maxLength: 200, description: "Must equal the site's code; otherwise nothing is deleted and the 409 says what would be." }),
    ),
  },
  { additionalProperties: false },
)
