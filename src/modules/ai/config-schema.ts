import { Type, type Static } from 'typebox'
import { REDACTION_KINDS } from './redact.ts'
import type { RedactionKind } from './redact.ts'
import type { Secret } from './secret.ts'

/**
 * Configuration of the AI completion endpoint (`POST /api/ai/complete`, spec §4.4).
 *
 * Providers speak the OpenAI chat-completions protocol (OpenAI, llama.cpp server, Ollama, vLLM, …). A tier is a
 * named service level that picks a provider and model and carries the limits; a request names a tier (or gets
 * `defaultTier`), and may name a model only if `allowedModels` lists it. Prompts to a provider that is not
 * `trusted` are redacted first (see redact.ts).
 *
 * Example (the input of {@link validateAiConfig}; keys in the file or env, never inline):
 * ```json
 * {
 *   "providers": [
 *     { "name": "plant-box", "baseUrl": "http://10.20.0.15:8080/v1", "trusted": true, "allowPrivateNetwork": true,
 *       "timeoutMs": 120000, "maxRetries": 1 },
 *     { "name": "openai", "baseUrl": "https://api.openai.com/v1", "apiKey": { "env": "OPENAI_API_KEY" },
 *       "timeoutMs": 60000, "maxRetries": 2, "trusted": false }
 *   ],
 *   "tiers": [
 *     { "name": "fast", "provider": "plant-box", "model": "qwen2.5-7b-instruct", "maxTokensCeiling": 1024,
 *       "requestsPerMinute": 60, "tokensPerDay": 500000 },
 *     { "name": "deep", "provider": "openai", "model": "gpt-4.1", "maxTokensCeiling": 4096,
 *       "requestsPerMinute": 10, "tokensPerDay": 200000 }
 *   ],
 *   "defaultTier": "fast",
 *   "allowedModels": [{ "model": "gpt-4.1-mini", "provider": "openai" }],
 *   "redaction": { "enabled": true, "kinds": ["ip", "cipRoute", "apiKey", "pin"] }
 * }
 * ```
 * `apiKey` is `{ "env": "VAR_NAME" }` or `{ "file": "/absolute/path" }` (trimmed; a trailing newline is fine).
 * Defaults: `timeoutMs` 60000, `maxRetries` 2, `trusted` false, `allowPrivateNetwork` false, `allowedModels` [],
 * redaction on for every kind.
 */

export const AI_CONFIG_DEFAULTS = Object.freeze({ timeoutMs: 60_000, maxRetries: 2, trusted: false, allowPrivateNetwork: false })

// `hint` (not a JSON Schema keyword; Ajv runs with strict: false) is the text a failed `pattern` reads as.
const ProviderName = Type.String({ minLength: 1, pattern: '^[a-z0-9][a-z0-9_-]{0,49}$', hint: 'must be 1-50 lowercase letters, digits, "-" or "_"' })
const TierName = Type.String({ minLength: 1, pattern: '^[a-z][a-z0-9-]{0,31}$', hint: 'must be 1-32 lowercase letters, digits or "-", starting with a letter' })
const Model = Type.String({ minLength: 1, maxLength: 200 })
const NonEmpty = Type.String({ minLength: 1 })

/** `{ "env": "VAR_NAME" }` or `{ "file": "/absolute/path" }`; the file's content is trimmed (a trailing newline is fine). */
export const ApiKeySourceSchema = Type.Union(
  [
    Type.Object(
      {
        env: Type.String({ minLength: 1, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', hint: 'is not a valid environment variable name' }),
      },
      { additionalProperties: false },
    ),
    Type.Object({ file: Type.String({ minLength: 1, pattern: '^/', hint: 'must be an absolute path' }) }, { additionalProperties: false }),
  ],
  { hint: 'must be { "env": "VAR_NAME" } or { "file": "/absolute/path" }' },
)
export type ApiKeySource = Readonly<Static<typeof ApiKeySourceSchema>>

export const AiProviderInputSchema = Type.Object(
  {
    name: ProviderName,
    baseUrl: Type.String({ minLength: 1, description: 'Up to and including the API version, without `/chat/completions`: `https://api.openai.com/v1`.' }),
    apiKey: Type.Optional(ApiKeySourceSchema),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000, default: AI_CONFIG_DEFAULTS.timeoutMs })),
    maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: AI_CONFIG_DEFAULTS.maxRetries })),
    trusted: Type.Optional(
      Type.Boolean({
        default: AI_CONFIG_DEFAULTS.trusted,
        description: "On-premise (in the plant's own network): prompts are sent without redaction.",
      }),
    ),
    allowPrivateNetwork: Type.Optional(
      Type.Boolean({
        default: AI_CONFIG_DEFAULTS.allowPrivateNetwork,
        description:
          'A base URL on loopback, a private, link-local, CGNAT or cloud-metadata address (or `localhost`) is refused unless this is true: ' +
          'a configuration must say so on purpose before the server sends requests (and keys) into its own network (SSRF). An on-premise box at 10.x needs it.',
      }),
    ),
  },
  {
    additionalProperties: false,
    // The flags read first: the base URL's rules depend on them.
    problemOrder: ['trusted', 'allowPrivateNetwork', 'name', 'baseUrl', 'apiKey', 'timeoutMs', 'maxRetries'],
  },
)
export type AiProviderInput = Static<typeof AiProviderInputSchema>

export const AiTierSchema = Type.Object(
  {
    name: TierName,
    provider: NonEmpty,
    model: Model,
    maxTokensCeiling: Type.Integer({ minimum: 1, maximum: 1_000_000, description: "A request's `maxTokens` is clamped to this; it is also the default." }),
    requestsPerMinute: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Per organisation (enforced by the route with the usage records).' }),
    tokensPerDay: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Per organisation, prompt plus completion tokens.' }),
  },
  { additionalProperties: false },
)
/** A named service level (`fast`, `standard`, `deep`, …): provider, model and limits. */
export type AiTierConfig = Readonly<Static<typeof AiTierSchema>>

export const AiAllowedModelSchema = Type.Object({ model: Model, provider: NonEmpty }, { additionalProperties: false })
export type AiAllowedModel = Readonly<Static<typeof AiAllowedModelSchema>>

export const AiRedactionSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ default: true })),
    kinds: Type.Optional(Type.Array(Type.Enum([...REDACTION_KINDS]), { default: [...REDACTION_KINDS] })),
  },
  { additionalProperties: false },
)

export const AiConfigInputSchema = Type.Object(
  {
    providers: Type.Array(AiProviderInputSchema, { minItems: 1 }),
    tiers: Type.Array(AiTierSchema, { minItems: 1 }),
    defaultTier: NonEmpty,
    allowedModels: Type.Optional(Type.Array(AiAllowedModelSchema, { default: [] })),
    redaction: Type.Optional(AiRedactionSchema),
  },
  { additionalProperties: false },
)
export type AiConfigInput = Static<typeof AiConfigInputSchema>

/** A provider as the service uses it: defaults applied, base URL without a trailing slash, key resolved. */
export type AiProviderConfig = Readonly<
  Required<Omit<AiProviderInput, 'apiKey' | 'allowPrivateNetwork'>> & {
    /** The resolved credential; prints as `[redacted]`. */
    apiKey: Secret | undefined
    /**
     * Calls may reach loopback, private, link-local or metadata addresses (also as DNS answers). Absent: false, and
     * the service's outbound guard refuses them at connect time (http/outbound-fetch.ts).
     */
    allowPrivateNetwork?: boolean
  }
>

export interface AiRedactionConfig {
  readonly enabled: boolean
  readonly kinds: readonly RedactionKind[]
}

export interface AiConfig {
  readonly providers: readonly AiProviderConfig[]
  readonly tiers: readonly AiTierConfig[]
  readonly defaultTier: string
  readonly allowedModels: readonly AiAllowedModel[]
  readonly redaction: AiRedactionConfig
}
