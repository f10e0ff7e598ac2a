import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../http/paging.ts'
import { ALARM_PRIORITIES, type AlarmPriority, type AlarmState } from './lifecycle.ts'

/** Largest batch a gateway may post at once (`POST …/alarms/events`). */
export const MAX_EVENTS_PER_BATCH = 1000
/** Longest a shelve may last (ISA-18.2: shelving is time-limited; longer suppression is out of service). */
export const MAX_SHELVE_MS = 7 * 86_400_000
/** Largest period the alarm-load report covers. */
export const MAX_LOAD_PERIOD_MS = 31 * 86_400_000
/** An event may be stamped at most this far ahead of the server's clock (gateway clock drift). */
export const MAX_FUTURE_SKEW_MS = 5 * 60_000

const STATE_DESCRIPTION =
  'ISA-18.2 state: `active_unacknowledged`, `active_acknowledged`, `returned_unacknowledged` (RTN unack), `normal`, ' +
  '`shelved` (until `shelvedUntil`), `out_of_service`.'
export const AlarmStateSchema = Type.Union(
  [
    Type.Literal('active_unacknowledged'),
    Type.Literal('active_acknowledged'),
    Type.Literal('returned_unacknowledged'),
    Type.Literal('normal'),
    Type.Literal('shelved'),
    Type.Literal('out_of_service'),
  ],
  { description: STATE_DESCRIPTION },
)
export const AlarmPrioritySchema = Type.Union([Type.Literal('critical'), Type.Literal('high'), Type.Literal('medium'), Type.Literal('low')], {
  description: '`critical`, `high`, `medium` or `low`.',
})

const Ident = (description: string) => Type.String({ minLength: 1, maxLength: 100, description })
const Comment = Type.String({ minLength: 1, maxLength: 500, description: "Why (1 to 500 characters); kept in the alarm's history." })

export const AlarmEventSchema = Type.Object(
  {
    eventId: Ident("The gateway's id for this event, unique per site: a resend with the same id is reported as `duplicate` and changes nothing."),
    instanceId: Ident('The equipment instance the alarm belongs to; must exist in the site.'),
    condition: Ident('The alarm tag or condition name (e.g. `HI_TEMP`, `TT-101.HH`).'),
    priority: AlarmPrioritySchema,
    state: Type.Union([Type.Literal('active'), Type.Literal('normal')], {
      description: '`active`: the condition became active; `normal`: it returned to normal.',
    }),
    occurredAt: Type.String({ format: 'date-time', description: 'When the condition changed, at the source.' }),
    message: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    value: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'The process value at the event.' })),
    limit: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'The alarm limit (setpoint) that was crossed.' })),
  },
  { additionalProperties: false },
)
export type AlarmEventInput = Static<typeof AlarmEventSchema>

export const PostAlarmEventsBody = Type.Object(
  {
    events: Type.Array(AlarmEventSchema, {
      minItems: 1,
      maxItems: MAX_EVENTS_PER_BATCH,
      description: `1 to ${MAX_EVENTS_PER_BATCH} events, applied in order of \`occurredAt\`.`,
    }),
  },
  { $id: 'PostAlarmEventsBody', additionalProperties: false },
)

export const EventResultSchema = Type.Object(
  {
    eventId: Type.String(),
    status: Type.Union([Type.Literal('accepted'), Type.Literal('duplicate'), Type.Literal('refused')]),
    alarmId: Type.Union([Type.String(), Type.Null()], { description: 'The alarm the event applied to, when there was one.' }),
    code: Type.Optional(Type.String({ description: 'Why a refused event was refused: `UnknownInstance` or `OccurredInFuture`.' })),
    detail: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)

export const PostAlarmEventsResult = Type.Object(
  {
    accepted: Type.Integer(),
    duplicates: Type.Integer(),
    refused: Type.Integer(),
    results: Type.Array(EventResultSchema, { description: 'One entry per posted event, in the order posted.' }),
  },
  { $id: 'PostAlarmEventsResult', additionalProperties: false },
)
export type EventResult = Static<typeof EventResultSchema>

export const AlarmSchema = Type.Object(
  {
    alarmId: Type.String({ description: '`alm_` + 26 characters.' }),
    siteId: Type.String(),
    instanceId: Type.String(),
    condition: Type.String(),
    priority: Type.String(),
    state: Type.String({ description: STATE_DESCRIPTION }),
    isActive: Type.Boolean({ description: 'Whether the process condition is active now (also while shelved or out of service).' }),
    isAcknowledged: Type.Boolean(),
    shelvedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    message: Type.Union([Type.String(), Type.Null()]),
    value: Type.Union([Type.Number(), Type.Null()]),
    limit: Type.Union([Type.Number(), Type.Null()]),
    activationCount: Type.Integer({ description: 'Activations folded into this alarm since it was raised.' }),
    raisedAt: Type.String({ format: 'date-time' }),
    lastEventAt: Type.String({ format: 'date-time' }),
    changedAt: Type.String({ format: 'date-time', description: 'Last change; lists are ordered by it, newest first.' }),
  },
  { $id: 'Alarm', additionalProperties: false },
)
export type Alarm = Static<typeof AlarmSchema>

export const AlarmTransitionSchema = Type.Object(
  {
    seq: Type.Integer(),
    at: Type.String({ format: 'date-time' }),
    action: Type.String({
      description: '`activated`, `returned`, `acknowledged`, `shelved`, `unshelved`, `shelve_expired`, `removed_from_service`, `returned_to_service`.',
    }),
    fromState: Type.String(),
    toState: Type.String(),
    actorKind: Type.String({
      description: '`apiKey`, `user`, `sitePin`, `link` (a site server), `cli` (the command line), or `system` (shelve expiry, a silent controller).',
    }),
    actorId: Type.String(),
    comment: Type.Union([Type.String(), Type.Null()]),
    eventId: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
)
export type AlarmTransition = Static<typeof AlarmTransitionSchema>

/** The transitions an alarm's read lists at most: its latest (`…/history` pages them all). */
export const MAX_LISTED_HISTORY = 1000

export const AlarmWithHistorySchema = Type.Object(
  {
    ...AlarmSchema.properties,
    history: Type.Array(AlarmTransitionSchema, {
      description: `Every transition, oldest first: the latest ${MAX_LISTED_HISTORY} when there are more (\`historyTruncated\`).`,
    }),
    historyTruncated: Type.Optional(
      Type.Literal(true, {
        description: `Only when \`history\` leaves out earlier transitions (more than ${MAX_LISTED_HISTORY}): \`…/history\` pages them all.`,
      }),
    ),
    pendingCommands: Type.Optional(
      Type.Integer({ description: "Cloud, a linked site's alarm: actions forwarded to the site server that it has not applied or refused yet." }),
    ),
  },
  { $id: 'AlarmWithHistory', additionalProperties: false },
)

export const AlarmPage = Page(AlarmSchema, 'Alarms, newest change first.')
export const AlarmHistoryQuery = Type.Object({ ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }) }, { additionalProperties: false })
export const AlarmHistoryPage = Page(AlarmTransitionSchema, 'Transitions, oldest first.')

export const ListAlarmsQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }),
    instanceId: Type.Optional(Type.String({ maxLength: 100 })),
    state: Type.Optional(Type.Array(AlarmStateSchema, { description: 'Repeat to match any of several states.' })),
    priority: Type.Optional(Type.Array(AlarmPrioritySchema, { description: 'Repeat to match any of several priorities.' })),
  },
  { additionalProperties: false },
)
export type ListAlarmsInput = Static<typeof ListAlarmsQuery>

export const SiteAlarmsParams = Type.Object({ siteId: Type.String({ maxLength: 200 }) }, { additionalProperties: false })
export const AlarmParams = Type.Object({ siteId: Type.String({ maxLength: 200 }), alarmId: Type.String({ maxLength: 100 }) }, { additionalProperties: false })

export const AcknowledgeBody = Type.Union([Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false }), Type.Null()], {
  description: 'Optional: `{ comment }`, or no body at all.',
})
export const BulkAcknowledgeBody = Type.Object(
  {
    alarmIds: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
    comment: Type.Optional(Comment),
  },
  { $id: 'BulkAcknowledgeBody', additionalProperties: false },
)
export const BulkAcknowledgeResult = Type.Object(
  {
    acknowledged: Type.Integer(),
    results: Type.Array(
      Type.Object(
        {
          alarmId: Type.String(),
          status: Type.Union([Type.Literal('acknowledged'), Type.Literal('refused')]),
          code: Type.Optional(Type.String({ description: '`NotFound` or `AlarmStateConflict`.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'BulkAcknowledgeResult', additionalProperties: false },
)
export const CommentBody = Type.Object({ comment: Comment }, { $id: 'CommentBody', additionalProperties: false })
export const ShelveBody = Type.Object(
  {
    comment: Comment,
    until: Type.String({ format: 'date-time', description: `When the shelve ends by itself: after now and at most ${MAX_SHELVE_MS / 86_400_000} days ahead.` }),
  },
  { $id: 'ShelveBody', additionalProperties: false },
)

export const AlarmLoadQuery = Type.Object(
  {
    from: Type.String({ format: 'date-time', description: 'Start of the period (inclusive).' }),
    to: Type.String({ format: 'date-time', description: `End of the period (exclusive); at most ${MAX_LOAD_PERIOD_MS / 86_400_000} days after \`from\`.` }),
    operatorPositions: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 1, description: "Operator positions (consoles) sharing the site's alarms; rates are per position." }),
    ),
  },
  { additionalProperties: false },
)
export type AlarmLoadQueryInput = Static<typeof AlarmLoadQuery>

const TagCount = Type.Object({ instanceId: Type.String(), condition: Type.String(), activations: Type.Integer() }, { additionalProperties: false })

export const AlarmLoadSchema = Type.Object(
  {
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    operatorPositions: Type.Integer(),
    activations: Type.Integer({ description: 'Annunciated activations in the period (not those while shelved or out of service).' }),
    suppressedActivations: Type.Integer({ description: 'Activations while the alarm was shelved or out of service.' }),
    intervals: Type.Integer({ description: '10-minute intervals in the period (the last one may be partial).' }),
    activationsPer10Min: Type.Array(Type.Integer({ minimum: 0 }), {
      description: 'Annunciated activations in each 10-minute interval (all positions), oldest first, aligned to `from`: `intervals` entries.',
    }),
    averagePer10MinPerPosition: Type.Number({ description: 'EEMUA 191 / ISA-18.2 target: about 1 (≤ 2 manageable).' }),
    averagePerHourPerPosition: Type.Number(),
    peakPer10MinPerPosition: Type.Number(),
    floodThresholdPer10Min: Type.Integer({ description: 'ISA-18.2: more than 10 alarms in 10 minutes per position is a flood.' }),
    percentTimeInFlood: Type.Number(),
    floods: Type.Array(
      Type.Object(
        {
          start: Type.String({ format: 'date-time' }),
          end: Type.String({ format: 'date-time' }),
          activations: Type.Integer(),
          peakPer10Min: Type.Integer(),
        },
        { additionalProperties: false },
      ),
      { description: 'Runs of consecutive flooded 10-minute intervals (aligned to `from`).' },
    ),
    byPriority: Type.Object(Object.fromEntries(ALARM_PRIORITIES.map((p) => [p, Type.Integer()])), { additionalProperties: false }),
    mostFrequent: Type.Array(Type.Object({ ...TagCount.properties, percentOfTotal: Type.Number() }, { additionalProperties: false }), {
      description: 'Top 10 by activations.',
    }),
    chatterWindowSeconds: Type.Integer(),
    chatterThreshold: Type.Integer(),
    chattering: Type.Array(Type.Object({ ...TagCount.properties, maxInWindow: Type.Integer() }, { additionalProperties: false }), {
      description: 'Alarms activated at least `chatterThreshold` times within `chatterWindowSeconds`.',
    }),
  },
  { $id: 'AlarmLoad', additionalProperties: false },
)
export type AlarmLoad = Static<typeof AlarmLoadSchema>

/** The actions on one alarm, by their route name: what a command forwarded to a site server carries. */
export const ALARM_ACTIONS = ['acknowledge', 'shelve', 'unshelve', 'out-of-service', 'return-to-service'] as const
export type AlarmActionName = (typeof ALARM_ACTIONS)[number]

export const AlarmCommandSchema = Type.Object(
  {
    commandId: Type.String({ description: '`cmd_` + 26 characters.' }),
    siteId: Type.String(),
    alarmId: Type.String(),
    action: Type.Union(
      [Type.Literal('acknowledge'), Type.Literal('shelve'), Type.Literal('unshelve'), Type.Literal('out-of-service'), Type.Literal('return-to-service')],
      { description: 'The action, by its route name.' },
    ),
    body: Type.Record(Type.String(), Type.Unknown(), { description: "The action's request body, as sent." }),
    actor: Type.Object(
      { kind: Type.String(), subject: Type.String() },
      { additionalProperties: false, description: 'Who took the action in the cloud; the site server records it as the actor.' },
    ),
    status: Type.Union([Type.Literal('pending'), Type.Literal('applied'), Type.Literal('refused')], {
      description: '`pending` until the site server has applied or refused it.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    settledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the site server applied or refused it.' }),
    result: Type.Union(
      [
        Type.Null(),
        Type.Object(
          {
            alarm: Type.Optional(AlarmSchema),
            code: Type.Optional(Type.String({ description: 'A refusal: its problem code (`AlarmStateConflict`, `NotFound`, `ValidationFailed`).' })),
            detail: Type.Optional(Type.String({ description: 'A refusal: why, as the site server said it.' })),
          },
          { additionalProperties: false },
        ),
      ],
      { description: "`applied`: the alarm's state after the action (`alarm`); `refused`: the problem's `code` and `detail`; `pending`: null." },
    ),
  },
  { $id: 'AlarmCommand', additionalProperties: false },
)
export type AlarmCommand = Static<typeof AlarmCommandSchema>

export const ForwardedBulkAcknowledgeResult = Type.Object(
  {
    pending: Type.Integer({ description: 'Commands stored for the site server, one per alarm found.' }),
    results: Type.Array(
      Type.Object(
        {
          alarmId: Type.String(),
          status: Type.Union([Type.Literal('pending'), Type.Literal('refused')]),
          commandId: Type.Optional(Type.String()),
          code: Type.Optional(Type.String({ description: '`NotFound`.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'ForwardedBulkAcknowledgeResult', additionalProperties: false },
)

// The literal unions above must list exactly the lifecycle's values.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const SCHEMA_MATCHES_LIFECYCLE: [Same<Static<typeof AlarmStateSchema>, AlarmState>, Same<Static<typeof AlarmPrioritySchema>, AlarmPriority>] = [
  true,
  true,
]
