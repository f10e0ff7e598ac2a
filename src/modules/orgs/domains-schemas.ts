import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'

export const OrgSlugParams = Type.Object(
  {
    slug: Type.String({
      maxLength: 63,
      description: "The organisation: the host's own (another answers the uniform 404) unless the caller is a platform admin.",
    }),
  },
  { additionalProperties: false },
)

export const DomainParams = Type.Object(
  {
    slug: OrgSlugParams.properties.slug,
    domain: Type.String({ maxLength: 253, description: 'The bound domain, as listed (lower case).' }),
  },
  { additionalProperties: false },
)

export const BindDomainBody = Type.Object(
  {
    domain: Type.Union([Type.String({ maxLength: 300 }), Type.Null()], {
      description:
        'A lower-case DNS host name (upper case is refused, not folded): at least two labels, ' +
        'at most 253 characters and 63 per label, not an IP address, no wildcard, not the base domain or under it. ' +
        '`null` is refused with 400 naming `/domain`.',
      examples: ['plant.example.com'],
    }),
  },
  { additionalProperties: false },
)

export const SetDomainEnabledBody = Type.Object(
  {
    isEnabled: Type.Boolean({ description: 'true: the domain serves the organisation exactly as its subdomain does; false: it is an unknown host.' }),
  },
  { additionalProperties: false },
)

export const DomainBindingSchema = Type.Object(
  {
    domain: Type.String(),
    isEnabled: Type.Boolean({ description: 'A new binding is disabled until enabled.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'DomainBinding', additionalProperties: false },
)
export type DomainBinding = Static<typeof DomainBindingSchema>

export const ListDomainsQuery = Type.Object(PageQuery({ defaultLimit: 100, maxLimit: 500 }), { additionalProperties: false })

export const DomainBindingPage = Page(DomainBindingSchema, "The organisation's domain bindings, in domain order.")
