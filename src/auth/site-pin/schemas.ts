import { type Static, Type } from 'typebox'

export const SiteLoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254, description: "The site user's e-mail (case-insensitive)." }),
    pin: Type.String({ minLength: 1, maxLength: 64, description: 'The numeric PIN (6 to 12 digits).', examples: ['482913'] }),
  },
  { additionalProperties: false },
)

export const ChangePinBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    pin: Type.String({ minLength: 1, maxLength: 64, description: 'The current PIN.' }),
    newPin: Type.String({ pattern: '^[0-9]{6,12}$', description: 'The new PIN: 6 to 12 digits.' }),
  },
  { additionalProperties: false },
)

export const RefreshBody = Type.Object(
  {
    refreshToken: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'The `refreshToken` of the last sign-in or refresh answer; each is accepted once.',
    }),
  },
  { additionalProperties: false },
)

export const SiteSessionSchema = Type.Object(
  {
    accessToken: Type.String({ description: 'ES256 JWT, issuer `sitegrid-site-local`, audience `sitegrid-site`; send as `Authorization: Bearer …`.' }),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'Seconds the access token lives (900).' }),
    expiresAt: Type.String({ format: 'date-time' }),
    refreshToken: Type.String({ description: '`srt_` + 43 base62 characters. Use it once with POST /auth/site/refresh; the answer carries the next one.' }),
    refreshExpiresAt: Type.String({ format: 'date-time', description: '12 hours after issue, and never more than 7 days after the PIN sign-in.' }),
    user: Type.Object({ id: Type.String(), siteRole: Type.String() }, { additionalProperties: false }),
  },
  { $id: 'SiteSession', additionalProperties: false },
)

export const JwksSchema = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.String(),
          crv: Type.String(),
          x: Type.String(),
          y: Type.String(),
          kid: Type.String(),
          alg: Type.String(),
          use: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'SiteJwks', additionalProperties: false },
)
export type SiteSession = Static<typeof SiteSessionSchema>
