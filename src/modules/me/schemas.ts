import { Type, type Static } from 'typebox'

export const MeSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('apiKey'), Type.Literal('user'), Type.Literal('sitePin')], {
      description: '`apiKey` (X-Api-Key), `user` (OIDC bearer token, cloud mode) or `sitePin` (site-PIN bearer token, site mode).',
    }),
    id: Type.String({ description: 'The keyId, the account id (OIDC `oid`) or the site user id.' }),
    role: Type.String({ description: 'The role policies check: organisation role (cloud) or site role (site mode): `owner`, `admin` or `member`.' }),
    isPlatformAdmin: Type.Boolean({ description: 'A control-plane operator: passes every policy in every organisation.' }),
    name: Type.String({
      description: "Display name: the key's name, the member's name from the identity provider (else its e-mail), the site user's display name.",
    }),
    email: Type.Union([Type.String(), Type.Null()], { description: "The signed-in person's e-mail; null for an API key." }),
    orgSlug: Type.String({ description: 'The organisation the host serves (and the credential belongs to).' }),
    mode: Type.Union([Type.Literal('cloud'), Type.Literal('site')], { description: "The server's mode." }),
    siteId: Type.Union([Type.String(), Type.Null()], {
      description: "An API key restricted to one site: that site's code, the only one whose routes it reaches. Null otherwise.",
    }),
    networks: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description:
        'An API key restricted to client networks: its CIDR blocks (it gives no access of its own to others, see the operations marked so). Null otherwise.',
    }),
  },
  { $id: 'Me', additionalProperties: false },
)
export type Me = Static<typeof MeSchema>
