import { Type } from 'typebox'
import { NO_STORE } from '../../http/openapi.ts'

export const LoginQuery = Type.Object(
  {
    returnTo: Type.Optional(
      Type.String({
        maxLength: 2048,
        description:
          'Where to land after sign-in: an absolute path on this host (`/sites/A?tab=x`). ' +
          'Anything else (another host, `//host`, a scheme) is ignored and `/` is used.',
      }),
    ),
    loginHint: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'Passed to the provider as OIDC `login_hint` (e.g. the e-mail typed in the console).' }),
    ),
  },
  { additionalProperties: false },
)

// The provider adds parameters of its own (`iss`, `session_state`, `error_description`…): accept any string.
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: Type.String({ maxLength: 4096 }) },
)

export const SessionTokenSchema = Type.Object(
  {
    accessToken: Type.String({
      description: "The provider's access token for this session: send it as `Authorization: Bearer …` to the API. Never stored by the console beyond memory.",
    }),
    tokenType: Type.Literal('Bearer'),
    expiresAt: Type.String({
      format: 'date-time',
      description: 'Ask again shortly before this; the server refreshes the token at the provider when less than a minute is left.',
    }),
  },
  { $id: 'SessionToken', additionalProperties: false },
)

export const Redirect = (description: string) => ({
  type: 'null',
  description,
  headers: { Location: { type: 'string', description: 'Where the browser goes next.' }, ...NO_STORE },
})
