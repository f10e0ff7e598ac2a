import { Ajv } from 'ajv'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { checkBaseUrl, resolveApiKey } from './config-provider.ts'
import { inDocumentOrder, isRecord, schemaProblems, uniqueProblems } from './config-checks.ts'
import type { AiConfigProblem, Problems } from './config-checks.ts'
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
export const ApiKeySourceSchema = Type.Union([
  Type.Object({ env: Type.String({ minLength: 1, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', hint: 'is not a valid environment variable name' }) }, { additionalProperties: false }),
  Type.Object({ file: Type.String({ minLength: 1, pattern: '^/', hint: 'must be an absolute path' }) }, { additionalProperties: false }),
], { hint: 'must be { "env": "VAR_NAME" } or { "file": "/absolute/path" }' })
export type ApiKeySource = Readonly<Static<typeof ApiKeySourceSchema>>

export const AiProviderInputSchema = Type.Object({
  name: ProviderName,
  baseUrl: Type.String({ minLength: 1, description: 'Up to and including the API version, without `/chat/completions`: `https://api.openai.com/v1`.' }),
  apiKey: Type.Optional(ApiKeySourceSchema),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000, default: AI_CONFIG_DEFAULTS.timeoutMs })),
  maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, default: AI_CONFIG_DEFAULTS.maxRetries })),
  trusted: Type.Optional(Type.Boolean({ default: AI_CONFIG_DEFAULTS.trusted, description: 'On-premise (in the plant\'s own network): prompts are sent without redaction.' })),
  allowPrivateNetwork: Type.Optional(Type.Boolean({
    default: AI_CONFIG_DEFAULTS.allowPrivateNetwork,
    description: 'A base URL on loopback, a private, link-local, CGNAT or cloud-metadata address (or `localhost`) is refused unless this is true: ' +
      'a configuration must say so on purpose before the server sends requests (and keys) into its own network (SSRF). An on-premise box at 10.x needs it.',
  })),
}, {
  additionalProperties: false,
  // The flags read first: the base URL's rules depend on them.
  problemOrder: ['trusted', 'allowPrivateNetwork', 'name', 'baseUrl', 'apiKey', 'timeoutMs', 'maxRetries'],
})
export type AiProviderInput = Static<typeof AiProviderInputSchema>

export const AiTierSchema = Type.Object({
  name: TierName,
  provider: NonEmpty,
  model: Model,
  maxTokensCeiling: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'A request\'s `maxTokens` is clamped to this; it is also the default.' }),
  requestsPerMinute: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Per organisation (enforced by the route with the usage records).' }),
  tokensPerDay: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Per organisation, prompt plus completion tokens.' }),
}, { additionalProperties: false })
/** A named service level (`fast`, `standard`, `deep`, …): provider, model and limits. */
export type AiTierConfig = Readonly<Static<typeof AiTierSchema>>

export const AiAllowedModelSchema = Type.Object({ model: Model, provider: NonEmpty }, { additionalProperties: false })
export type AiAllowedModel = Readonly<Static<typeof AiAllowedModelSchema>>

export const AiRedactionSchema = Type.Object({
  enabled: Type.Optional(Type.Boolean({ default: true })),
  kinds: Type.Optional(Type.Array(Type.Enum([...REDACTION_KINDS]), { default: [...REDACTION_KINDS] })),
}, { additionalProperties: false })

export const AiConfigInputSchema = Type.Object({
  providers: Type.Array(AiProviderInputSchema, { minItems: 1 }),
  tiers: Type.Array(AiTierSchema, { minItems: 1 }),
  defaultTier: NonEmpty,
  allowedModels: Type.Optional(Type.Array(AiAllowedModelSchema, { default: [] })),
  redaction: Type.Optional(AiRedactionSchema),
}, { additionalProperties: false })
export type AiConfigInput = Static<typeof AiConfigInputSchema>

/** A provider as the service uses it: defaults applied, base URL without a trailing slash, key resolved. */
export type AiProviderConfig = Readonly<Required<Omit<AiProviderInput, 'apiKey' | 'allowPrivateNetwork'>> & {
  /** The resolved credential; prints as `[redacted]`. */
  apiKey: Secret | undefined
  /**
   * Calls may reach loopback, private, link-local or metadata addresses (also as DNS answers). Absent: false, and
   * the service's outbound guard refuses them at connect time (http/outbound-fetch.ts).
   */
  allowPrivateNetwork?: boolean
}>

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

/** Every problem found in an AI configuration, not just the first. Messages never contain a credential. */
export class AiConfigInvalid extends Error {
  override readonly name = 'AiConfigInvalid'
  readonly problems: readonly AiConfigProblem[]

  constructor(problems: readonly AiConfigProblem[]) {
    super(`Invalid AI configuration:\n${problems.map((p) => `  ${p.pointer || '/'}: ${p.message}`).join('\n')}`)
    this.problems = problems
  }
}

export type { AiConfigProblem } from './config-checks.ts'

export interface AiConfigSources {
  /** Where `{ env }` keys are looked up; pass `process.env` from the one place that reads it. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Reads a `{ file }` key; defaults to readFileSync(path, 'utf8'). */
  readonly readFile?: (path: string) => string
}

const check = new Ajv({ allErrors: true, strict: false, coerceTypes: false }).compile(AiConfigInputSchema)

/**
 * Checks an AI configuration against {@link AiConfigInputSchema}, then what a schema cannot say (unique names,
 * references to providers and tiers, base-URL rules, keys from env or files); applies the defaults and returns it frozen.
 * Throws AiConfigInvalid listing every problem with its JSON pointer, in document order; no message ever contains a key.
 */
export function validateAiConfig(input: unknown, sources: AiConfigSources): AiConfig {
  const problems = check(input) ? [] : schemaProblems(AiConfigInputSchema, input, check.errors ?? [])
  const root = isRecord(input) ? input : {}
  const providers = isRecord(input) && Array.isArray(root.providers) ? root.providers : []
  const providerNames = providers.map((p) => nameOf(p, 'name'))
  const resolved = providers.map((item, i) => (isRecord(item) ? checkProvider(item, `/providers/${i}`, problems, sources) : undefined))
  problems.push(...uniqueProblems(providerNames, '/providers', 'name'))

  const tiers = Array.isArray(root.tiers) ? root.tiers : []
  const tierNames = tiers.map((t) => nameOf(t, 'name'))
  tiers.forEach((tier, i) => problems.push(...referenceProblems(tier, `/tiers/${i}`, providerNames)))
  problems.push(...uniqueProblems(tierNames, '/tiers', 'name'))
  const defaultTier = typeof root.defaultTier === 'string' ? root.defaultTier : ''
  if (defaultTier !== '' && tiers.length > 0 && !tierNames.includes(defaultTier)) {
    problems.push({ pointer: '/defaultTier', message: `"${defaultTier}" is not a tier; expected one of ${tierNames.join(', ')}` })
  }

  const allowedModels = Array.isArray(root.allowedModels) ? root.allowedModels : []
  allowedModels.forEach((model, i) => problems.push(...referenceProblems(model, `/allowedModels/${i}`, providerNames)))
  problems.push(...uniqueProblems(allowedModels.map((m) => nameOf(m, 'model')), '/allowedModels', 'model'))
  if (problems.length > 0) throw new AiConfigInvalid(inDocumentOrder(AiConfigInputSchema, problems))

  const valid = Value.Default(AiConfigInputSchema, structuredClone(input)) as Required<AiConfigInput>
  const redaction = valid.redaction ?? {}
  return Object.freeze({
    providers: Object.freeze(valid.providers.map((p, i) => Object.freeze(inSchemaOrder(AiProviderInputSchema, { ...p, ...resolved[i]! }) as AiProviderConfig))),
    tiers: Object.freeze(valid.tiers.map((t) => Object.freeze(inSchemaOrder(AiTierSchema, t)))),
    defaultTier: valid.defaultTier,
    allowedModels: Object.freeze(valid.allowedModels.map((m) => Object.freeze(inSchemaOrder(AiAllowedModelSchema, m)))),
    redaction: Object.freeze({ enabled: redaction.enabled ?? true, kinds: Object.freeze([...new Set(redaction.kinds ?? REDACTION_KINDS)]) }),
  })
}

/** A copy with the schema's keys in the schema's order (an absent optional key is present, undefined). */
function inSchemaOrder<T extends object>(schema: { properties: object }, value: T): T {
  return Object.fromEntries(Object.keys(schema.properties).map((key) => [key, (value as Record<string, unknown>)[key]])) as T
}

function nameOf(item: unknown, key: string): string {
  return isRecord(item) && typeof item[key] === 'string' ? item[key] : ''
}

/** The base URL and key of a provider; their problems are added. Both are undefined-free only when valid. */
function checkProvider(record: Record<string, unknown>, at: string, problems: Problems, sources: AiConfigSources): { baseUrl: string; apiKey: Secret | undefined } {
  const flag = (key: 'trusted' | 'allowPrivateNetwork') => (typeof record[key] === 'boolean' ? record[key] : AI_CONFIG_DEFAULTS[key])
  const baseUrl = typeof record.baseUrl === 'string' && record.baseUrl !== ''
    ? checkBaseUrl(record.baseUrl, `${at}/baseUrl`, problems, { isTrusted: flag('trusted'), allowPrivateNetwork: flag('allowPrivateNetwork') })
    : ''
  const apiKey = Value.Check(ApiKeySourceSchema, record.apiKey) ? resolveApiKey(record.apiKey, `${at}/apiKey`, problems, sources) : undefined
  return { baseUrl, apiKey }
}

/** A tier's or an allowed model's `provider` must name a configured provider. */
function referenceProblems(item: unknown, at: string, providerNames: readonly string[]): Problems {
  const name = nameOf(item, 'provider')
  if (name === '' || providerNames.length === 0 || providerNames.includes(name)) return []
  return [{ pointer: `${at}/provider`, message: `"${name}" is not a configured provider; expected one of ${providerNames.join(', ')}` }]
}
