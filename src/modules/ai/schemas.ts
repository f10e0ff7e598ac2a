import { Type, type Static } from 'typebox'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description })

const INT32_MAX = 2_147_483_647

export const CompleteBody = Type.Object(
  {
    prompt: Nullable(Type.String({ maxLength: 100_000 }), 'Required and non-empty (null, empty or blank: 400 naming `/prompt`).'),
    systemPrompt: Type.Optional(Nullable(Type.String({ maxLength: 100_000 }), 'Instructions placed before the prompt.')),
    model: Type.Optional(
      Nullable(
        Type.String({ minLength: 1, maxLength: 200 }),
        "A model from the configured allow-list (400 `AiModelNotAllowed` otherwise). Null: the tier's model.",
      ),
    ),
    tier: Type.Optional(
      Nullable(
        Type.String({ minLength: 1, maxLength: 32 }),
        'A configured tier such as `fast`, `standard`, `deep` (400 `AiTierUnknown` otherwise). Null: the default tier.',
      ),
    ),
    maxTokens: Type.Optional(
      Nullable(
        Type.Integer({ minimum: 1, maximum: INT32_MAX }),
        "Completion tokens, 1 to the tier's ceiling (400 naming `/maxTokens` above it). Null: the ceiling.",
      ),
    ),
    stream: Type.Optional(Type.Boolean({ description: 'true: answer as Server-Sent Events (`delta`, then `done` or `error`).' })),
    siteId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 50,
        description: "A site code of the caller's organisation: a compact summary of it goes into the system prompt (404 if absent or foreign).",
      }),
    ),
  },
  { $id: 'AiCompleteBody', additionalProperties: false },
)
export type CompleteInput = Static<typeof CompleteBody>

export const UsageSchema = Type.Object(
  {
    promptTokens: Type.Integer(),
    completionTokens: Type.Integer(),
    totalTokens: Type.Integer(),
    isEstimated: Type.Boolean({ description: 'true when the provider reported no usage and the counts are estimated (about 4 characters a token).' }),
  },
  { additionalProperties: false },
)
export type Usage = Static<typeof UsageSchema>

export const RedactionsSchema = Type.Object(
  {
    ip: Type.Integer(),
    cipRoute: Type.Integer(),
    apiKey: Type.Integer(),
    pin: Type.Integer(),
    total: Type.Integer(),
  },
  {
    additionalProperties: false,
    description:
      'Placeholders put into the prompt and system prompt before they left for a provider that is not trusted; ' +
      'all zero for a trusted (on-premise) provider or with redaction off.',
  },
)
export type Redactions = Static<typeof RedactionsSchema>

export const GroundingSchema = Type.Union(
  [
    Type.Object(
      {
        siteId: Type.String(),
        included: Type.Array(Type.String(), {
          description:
            '`site` (code, name, status, time zone, location, description), `controllers` (name, asset number, ' +
            'platform, protocol, address, CIP path, edge, poll interval; up to 50), `activeAlarms` (priority, condition, instance, ' +
            'state, raised time, message; up to 25) and `<area>Count` for each area that keeps rows under a site (for example ' +
            '`controllersCount`).',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'What was added to the system prompt from `siteId`; null without one.' },
)
export type Grounding = Static<typeof GroundingSchema>

export const CompletionSchema = Type.Object(
  {
    text: Type.String(),
    model: Type.String({ description: 'The model that answered, as the provider reports it.' }),
    tier: Type.String({ description: 'The tier whose limits were applied.' }),
    finishReason: Type.String({ description: '`stop`, `length`, `content_filter`, … as sent by the provider; `unknown` if none.' }),
    usage: UsageSchema,
    redactions: RedactionsSchema,
    grounding: GroundingSchema,
  },
  { $id: 'AiCompletion', additionalProperties: false },
)
export type Completion = Static<typeof CompletionSchema>

const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC calendar day, `YYYY-MM-DD`.' })

export const UsageQuery = Type.Object(
  {
    from: Type.Optional({ ...Day, description: 'First UTC day (default: 29 days before `to`).' }),
    to: Type.Optional({ ...Day, description: 'Last UTC day, included (default: today).' }),
  },
  { additionalProperties: false },
)
export type UsageQueryInput = Static<typeof UsageQuery>

export const UsageReportSchema = Type.Object(
  {
    from: Day,
    to: Day,
    days: Type.Array(
      Type.Object(
        {
          day: Day,
          tier: Type.String(),
          requests: Type.Integer({ description: 'Admitted requests, failed ones included (refused ones are not counted).' }),
          failedRequests: Type.Integer(),
          promptTokens: Type.Integer(),
          completionTokens: Type.Integer(),
          totalTokens: Type.Integer(),
        },
        { additionalProperties: false },
      ),
      { description: 'Per day and tier, oldest first; days without requests are left out.' },
    ),
    tiers: Type.Array(
      Type.Object(
        {
          tier: Type.String(),
          requestsPerMinute: Type.Integer({ description: 'The limit.' }),
          requestsLastMinute: Type.Integer(),
          tokensPerDay: Type.Integer({ description: 'The limit (UTC day).' }),
          tokensToday: Type.Integer(),
        },
        { additionalProperties: false },
      ),
      { description: "Each configured tier's limits and the organisation's current load; empty when AI is not configured." },
    ),
  },
  { $id: 'AiUsageReport', additionalProperties: false },
)
export type UsageReport = Static<typeof UsageReportSchema>
