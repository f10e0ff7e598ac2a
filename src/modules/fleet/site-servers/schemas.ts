import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../../http/paging.ts'
import { SiteCode } from '../../sites/schemas.ts'

const Timestamp = (description: string) => Type.String({ format: 'date-time', description })
const NullableTimestamp = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })

export const SiteServerId = Type.String({ pattern: '^srv_[0-9A-Z]{26}$', description: 'The site server id (`srv_…`).' })

export const RegisterSiteServerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'A label for people, e.g. the plant and the box.' }),
    sites: Type.Array(SiteCode, {
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      description: "Codes of this organisation's sites the site server runs; none may be linked to another live site server.",
    }),
  },
  { additionalProperties: false },
)
export type RegisterSiteServerInput = Static<typeof RegisterSiteServerBody>

export const SiteServerStatus = Type.Union([Type.Literal('registered'), Type.Literal('enrolled'), Type.Literal('revoked')], {
  description: '`registered`: waiting for its first enrolment (or for a re-enrolment after a revoke); `enrolled`: its link credential works; `revoked`.',
})

export const LinkBacklogSchema = Type.Object(
  { items: Type.Integer(), bytes: Type.Integer(), oldestAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) },
  { additionalProperties: false },
)

export const SiteServerSchema = Type.Object(
  {
    id: SiteServerId,
    name: Type.String(),
    sites: Type.Array(Type.String()),
    status: SiteServerStatus,
    createdAt: Timestamp('When it was registered.'),
    enrolledAt: NullableTimestamp('Its latest enrolment.'),
    revokedAt: NullableTimestamp('When its link credential was revoked; null while it is not.'),
    codeExpiresAt: NullableTimestamp('When the pending enrolment code expires; null when none is pending. The code itself is never shown again.'),
    lastContactAt: NullableTimestamp("The site server's latest call over the link."),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'The last link failure recorded for it, if any.' }),
    peerVersions: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'What the site server announced at its last contact: `protocol` and `schema`.',
    }),
    backlog: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description:
        'What the site server reported at its last contact: `up`, what waits on it to go up (items, bytes, `oldestAt` as a date-time or null), ' +
        'the position it pulled to and its link state.',
    }),
    connection: Type.Union([Type.Literal('online'), Type.Literal('offline'), Type.Literal('never')], {
      description:
        '`online` when its last contact is under 60 s old (a connected site server calls at least every 25 s: a pull waits at most 25 s, ' +
        'and it reports every SITEGRID_LINK_HEARTBEAT_MS, 10 s by default); `offline` otherwise; `never` before its first contact.',
    }),
    down: Type.Union([LinkBacklogSchema, Type.Null()], {
      description: 'What the cloud holds for it after the position it last reported pulling to (items, bytes, the oldest); null before its first report.',
    }),
  },
  { $id: 'SiteServer', additionalProperties: false },
)
export type SiteServer = Static<typeof SiteServerSchema>

export const SiteServerWithCodeSchema = Type.Object(
  {
    id: SiteServerId,
    name: Type.String(),
    sites: Type.Array(Type.String()),
    status: SiteServerStatus,
    enrolmentCode: Type.String({
      description: 'The one-time enrolment code (`sle_…`), for `sitegrid link enrol` on the site server. Shown here once and never again.',
    }),
    codeExpiresAt: Timestamp('24 hours after it was issued.'),
  },
  { $id: 'SiteServerWithCode', additionalProperties: false },
)
export type SiteServerWithCode = Static<typeof SiteServerWithCodeSchema>

export const ListSiteServersQuery = Type.Object({ ...PageQuery({ defaultLimit: 50, maxLimit: 200 }) }, { additionalProperties: false })
export const SiteServerPage = Page(SiteServerSchema, 'Oldest registration first.')
export const SiteServerParams = Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false })

export const EnrolBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 200, description: 'The one-time enrolment code from the registration.' }),
    orgId: Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
      description: 'The organisation whose data the site server holds; null when it holds none (it is then seeded).',
    }),
    serverId: Type.Optional(Type.String({ maxLength: 100, description: 'Re-enrolment: the site server id it is enrolled as.' })),
    protocol: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'The fleet-link protocol version the site server speaks.' }),
    schema: Type.String({ minLength: 1, maxLength: 200, description: "The site server's schema version (its latest migration)." }),
    epoch: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{32}$',
        description:
          "The site server's outbox epoch (a re-enrolment sends the one it has): the cloud refuses a push of any other epoch (409 LinkDiverged) until a reseed announces a new one.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type EnrolInput = Static<typeof EnrolBody>

export const EnrolmentSchema = Type.Object(
  {
    serverId: SiteServerId,
    org: Type.Object({ id: Type.String(), slug: Type.String(), name: Type.String() }, { additionalProperties: false }),
    sites: Type.Array(Type.String()),
    credential: Type.String({ description: 'The link credential (`slk_…`): `Authorization: Bearer` on every link call. Returned once.' }),
  },
  { $id: 'Enrolment', additionalProperties: false },
)
export type Enrolment = Static<typeof EnrolmentSchema>

export const SeedQuery = Type.Object({ site: Type.String({ maxLength: 200, description: "One of the site server's sites." }) }, { additionalProperties: false })

export const ReseedBody = Type.Object(
  {
    epoch: Type.String({ pattern: '^[0-9a-f]{32}$', description: 'The new outbox epoch the site server made for the reseed (32 hex digits).' }),
    after: Type.Object(
      {
        // Integers a JavaScript number holds exactly: a larger one is a 400, not a PostgreSQL bigint overflow (a 500).
        tx: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
        seq: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      },
      {
        additionalProperties: false,
        description:
          "The newest readable position (tx, seq) of the site server's outbox now: the new epoch's mark starts there, so its next push's `after` is this.",
      },
    ),
  },
  { additionalProperties: false },
)
export type ReseedInput = Static<typeof ReseedBody>

export const ReseedAnswerSchema = Type.Object(
  {
    mark: Type.Object(
      { epoch: Type.String(), tx: Type.Integer(), seq: Type.Integer() },
      { additionalProperties: false, description: "The cloud's mark of the new epoch." },
    ),
  },
  { $id: 'ReseedAnswer', additionalProperties: false },
)
export type ReseedAnswer = Static<typeof ReseedAnswerSchema>
