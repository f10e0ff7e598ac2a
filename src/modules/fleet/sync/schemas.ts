import { Type, type Static } from 'typebox'
import { LAST_ISO_MS } from '../../../http/input-guard.ts'
import { Page, PageQuery } from '../../../http/paging.ts'

/**
 * The fleet link's wire (issue 26; ARCHITECTURE.md § Fleet link): what `POST /api/link/push` takes and answers, what
 * `GET /api/link/pull` answers, and the conflict records. The routes use these objects as their schemas. A change is
 * one row of the sender's outbox; the schema bounds its shape, and sync/validate.ts checks it against this server's
 * tables before anything is written.
 */

const NAME = '^[a-z_][a-z0-9_]{0,62}$'

/**
 * A position or a transaction id on the wire: an integer a JavaScript number holds exactly. Bounded, so that a larger
 * one (`18446744073709551616`, or `1e400`, which a query string coerces to Infinity) is a 400 naming it, not a
 * PostgreSQL bigint overflow (a 500) nor a cursor rounded to another position.
 */
const SAFE_MAX = Number.MAX_SAFE_INTEGER

/**
 * A time on the wire, epoch ms, up to 9999-12-31T23:59:59.999Z: every answer that shows it writes an RFC 3339
 * date-time (a four-digit year; a time past a Date's range answered a 500 wherever it was read).
 */
export const LinkTime = (description: string) => Type.Integer({ minimum: 0, maximum: LAST_ISO_MS, description })

/** A column value: the link carries what a tenant package carries (text, numbers, null). */
const ScalarSchema = Type.Union([Type.String({ maxLength: 1_048_576 }), Type.Number(), Type.Null()])

/** A primary-key value: short text or a number. */
const KeyValueSchema = Type.Union([Type.String({ maxLength: 200 }), Type.Number()])

export const CursorSchema = Type.Object(
  {
    tx: Type.Integer({ minimum: 0, maximum: SAFE_MAX, description: "The writing transaction's id on PostgreSQL; always 0 on SQLite." }),
    seq: Type.Integer({ minimum: 0, maximum: SAFE_MAX, description: "The change's position in the sender's outbox." }),
  },
  { $id: 'LinkCursor', additionalProperties: false, description: 'A position in an outbox; (0, 0) is the start.' },
)
export type Cursor = Static<typeof CursorSchema>

export const ChangeSchema = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, maximum: SAFE_MAX, description: "The change's position in the sender's outbox." }),
    tx: Type.Integer({
      minimum: 0,
      maximum: SAFE_MAX,
      description: "The writing transaction's id on PostgreSQL, 0 on SQLite. A batch is in outbox order: (tx, seq) strictly increasing.",
    }),
    table: Type.String({ pattern: NAME, description: 'A linked table (`controllers`, `alarm_events`, …).' }),
    site: Type.String({ maxLength: 50, description: "The site code of the row; '' for organisation-wide rows (audit_events)." }),
    key: Type.Array(KeyValueSchema, { minItems: 1, maxItems: 8, description: "The row's primary-key values after org_id, in key order." }),
    op: Type.Union([Type.Literal('upsert'), Type.Literal('delete')]),
    row: Type.Record(Type.String({ pattern: NAME }), ScalarSchema, {
      maxProperties: 64,
      description: 'Every column of the row (org_id included): the after-image, or the before-image of a delete.',
    }),
    base: Type.Union([Type.Integer({ minimum: 0, maximum: SAFE_MAX }), Type.Null()], {
      description: "Site edits of cloud-authoritative tables: the cloud's seq of the version the edit was based on; null for a row the site created.",
    }),
    origin: Type.String({ maxLength: 100, description: "'' for a change made on the sender; else the peer it came from." }),
    at: LinkTime("When the change was made, epoch ms (the sender's database clock)."),
    superseded: Type.Optional(
      Type.Boolean({
        description:
          "The row's newest change came before this one in outbox order (a PostgreSQL sender's transactions crossed): the receiver holds a newer image and applies nothing of it, but its mark moves past it. Absent: false.",
      }),
    ),
  },
  { $id: 'LinkChange', additionalProperties: false },
)
export type Change = Static<typeof ChangeSchema>

export const PushBodySchema = Type.Object(
  {
    epoch: Type.String({ minLength: 1, maxLength: 100, description: "The site server's outbox epoch (new at each enrolment that reseeds)." }),
    after: CursorSchema,
    changes: Type.Array(ChangeSchema, { maxItems: 1000 }),
  },
  { $id: 'LinkPushBody', additionalProperties: false },
)
export type PushBody = Static<typeof PushBodySchema>

export const PushAnswerSchema = Type.Object(
  {
    mark: Type.Object(
      { epoch: Type.String(), tx: Type.Integer(), seq: Type.Integer() },
      { additionalProperties: false, description: "The site's outbox position (tx, seq) the cloud has applied up to: the next push's `after`." },
    ),
    applied: Type.Integer({ description: 'Changes applied by this push.' }),
    skipped: Type.Integer({ description: 'Changes at or below the mark: already applied by an earlier push.' }),
    conflicts: Type.Integer({ description: 'Changes that lost under the conflict rule (kept as conflict records, not applied).' }),
  },
  { $id: 'LinkPushAnswer', additionalProperties: false },
)
export type PushAnswer = Static<typeof PushAnswerSchema>

export const PullQuerySchema = Type.Object(
  {
    tx: Type.Integer({ minimum: 0, maximum: SAFE_MAX, default: 0, description: "The cursor's tx: the pull answers changes after (tx, seq)." }),
    seq: Type.Integer({ minimum: 0, maximum: SAFE_MAX, default: 0 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 500, description: 'Most changes in the answer.' })),
    waitMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 25_000,
        default: 0,
        description: 'Long poll: when nothing is waiting, answer at the first change or after this long.',
      }),
    ),
  },
  { additionalProperties: false },
)
export type PullQuery = Static<typeof PullQuerySchema>

export const PullAnswerSchema = Type.Object(
  {
    changes: Type.Array(ChangeSchema),
    next: CursorSchema,
    more: Type.Boolean({ description: 'More changes are readable now: pull again at once.' }),
  },
  { $id: 'LinkPullAnswer', additionalProperties: false },
)
export type PullAnswer = Static<typeof PullAnswerSchema>

export const ConflictSchema = Type.Object(
  {
    id: Type.String(),
    serverId: Type.String({ description: 'The site server whose change lost.' }),
    table: Type.String(),
    site: Type.String(),
    key: Type.Array(KeyValueSchema),
    losingOp: Type.Union([Type.Literal('upsert'), Type.Literal('delete')]),
    losingRow: Type.Record(Type.String(), ScalarSchema, { description: "The site's version that lost (the before-image for a delete)." }),
    losingAt: Type.String({ format: 'date-time', description: 'When the site made its change.' }),
    winningOp: Type.Union([Type.Literal('upsert'), Type.Literal('delete'), Type.Null()], {
      description: "The cloud's version when the conflict was recorded: its row, a delete, or null when another row held a unique value.",
    }),
    winningRow: Type.Union([Type.Record(Type.String(), ScalarSchema), Type.Null()]),
    recordedAt: Type.String({ format: 'date-time' }),
    resolvedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    resolvedBy: Type.Union([Type.String(), Type.Null()]),
    resolution: Type.Union([Type.Literal('reapplied'), Type.Literal('dismissed'), Type.Null()]),
  },
  { $id: 'LinkConflict', additionalProperties: false },
)
export type Conflict = Static<typeof ConflictSchema>

export const ListConflictsQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 50, maxLimit: 200 }),
    unresolved: Type.Optional(Type.Boolean({ description: 'Only conflicts nobody re-applied or dismissed yet.' })),
  },
  { additionalProperties: false },
)
export type ListConflictsOptions = Static<typeof ListConflictsQuery>

export const ConflictListSchema = Page(ConflictSchema, 'Conflicts, newest recorded first.')
export type ConflictList = Static<typeof ConflictListSchema>

export const ConflictParams = Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: false })
