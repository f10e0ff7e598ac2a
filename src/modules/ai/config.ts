import { readApiKey, readBaseUrl } from './config-provider.ts'
import { checkKeys, checkUnique, readArray, readBoolean, readInteger, readRecord, readString } from './config-checks.ts'
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
export interface AiConfigInput {
  providers: AiProviderInput[]
  tiers: AiTierConfig[]
  defaultTier: string
  allowedModels?: AiAllowedModel[]
  redaction?: { enabled?: boolean; kinds?: RedactionKind[] }
}

export type ApiKeySource = { readonly env: string } | { readonly file: string }

export interface AiProviderInput {
  name: string
  /** Up to and including the API version, without `/chat/completions`: `https://api.openai.com/v1`. */
  baseUrl: string
  apiKey?: ApiKeySource
  timeoutMs?: number
  maxRetries?: number
  /** On-premise (in the plant's own network): prompts are sent without redaction. */
  trusted?: boolean
  /**
   * A base URL on loopback, a private, link-local, CGNAT or cloud-metadata address (or `localhost`) is refused
   * unless this is true: a configuration must say so on purpose before the server sends requests (and keys)
   * into its own network (SSRF). An on-premise box at 10.x needs it.
   */
  allowPrivateNetwork?: boolean
}

export interface AiProviderConfig {
  readonly name: string
  /** Normalised: no trailing slash. */
  readonly baseUrl: string
  /** The resolved credential; prints as `[redacted]`. */
  readonly apiKey: Secret | undefined
  /** Deadline for a whole call, retries included; for a stream, also the longest silence between chunks. */
  readonly timeoutMs: number
  /** Retries after the first attempt (0 = one attempt). */
  readonly maxRetries: number
  readonly trusted: boolean
  /**
   * Calls may reach loopback, private, link-local or metadata addresses (also as DNS answers). Absent: false, and
   * the service's outbound guard refuses them at connect time (http/outbound-fetch.ts).
   */
  readonly allowPrivateNetwork?: boolean
}

export interface AiTierConfig {
  /** `fast`, `standard`, `deep`, … */
  readonly name: string
  readonly provider: string
  readonly model: string
  /** A request's `maxTokens` is clamped to this; it is also the default. */
  readonly maxTokensCeiling: number
  /** Per organisation (enforced by the route with the usage records). */
  readonly requestsPerMinute: number
  /** Per organisation, prompt plus completion tokens (enforced by the route with the usage records). */
  readonly tokensPerDay: number
}

export interface AiAllowedModel {
  readonly model: string
  readonly provider: string
}

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

export const AI_CONFIG_DEFAULTS = Object.freeze({ timeoutMs: 60_000, maxRetries: 2, trusted: false, allowPrivateNetwork: false })

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

const PROVIDER_NAME = { pattern: /^[a-z0-9][a-z0-9_-]{0,49}$/, hint: 'must be 1-50 lowercase letters, digits, "-" or "_"' }
const TIER_NAME = { pattern: /^[a-z][a-z0-9-]{0,31}$/, hint: 'must be 1-32 lowercase letters, digits or "-", starting with a letter' }
const MODEL = { maxLength: 200 }

/**
 * Checks an AI configuration, resolves provider keys from env or files, applies defaults and returns it frozen.
 * Throws AiConfigInvalid listing every problem with its JSON pointer; no message ever contains a key.
 */
export function validateAiConfig(input: unknown, sources: AiConfigSources): AiConfig {
  const problems: Problems = []
  const root = readRecord(input, '', problems) ?? {}
  checkKeys(root, ['providers', 'tiers', 'defaultTier', 'allowedModels', 'redaction'], '', problems)

  const providers = readArray(root.providers, '/providers', problems, { minItems: 1 })
    .map((item, i) => readProvider(item, `/providers/${i}`, problems, sources))
  checkUnique(providers.map((p) => p.name), '/providers', 'name', problems)
  const providerNames = providers.map((p) => p.name)

  const tiers = readArray(root.tiers, '/tiers', problems, { minItems: 1 })
    .map((item, i) => readTier(item, `/tiers/${i}`, problems, providerNames))
  checkUnique(tiers.map((t) => t.name), '/tiers', 'name', problems)

  const defaultTier = readString(root, 'defaultTier', '', problems)
  if (defaultTier !== '' && tiers.length > 0 && !tiers.some((t) => t.name === defaultTier)) {
    problems.push({ pointer: '/defaultTier', message: `"${defaultTier}" is not a tier; expected one of ${tiers.map((t) => t.name).join(', ')}` })
  }

  const allowedModels = (root.allowedModels === undefined ? [] : readArray(root.allowedModels, '/allowedModels', problems, { minItems: 0 }))
    .map((item, i) => readAllowedModel(item, `/allowedModels/${i}`, problems, providerNames))
  checkUnique(allowedModels.map((m) => m.model), '/allowedModels', 'model', problems)

  const redaction = readRedaction(root.redaction, '/redaction', problems)
  if (problems.length > 0) throw new AiConfigInvalid(problems)
  return Object.freeze({
    providers: Object.freeze(providers.map((p) => Object.freeze(p))),
    tiers: Object.freeze(tiers.map((t) => Object.freeze(t))),
    defaultTier,
    allowedModels: Object.freeze(allowedModels.map((m) => Object.freeze(m))),
    redaction: Object.freeze({ enabled: redaction.enabled, kinds: Object.freeze([...redaction.kinds]) }),
  })
}

function readProvider(item: unknown, at: string, problems: Problems, sources: AiConfigSources): AiProviderConfig {
  const record = readRecord(item, at, problems) ?? {}
  checkKeys(record, ['name', 'baseUrl', 'apiKey', 'timeoutMs', 'maxRetries', 'trusted', 'allowPrivateNetwork'], at, problems)
  const trusted = readBoolean(record, 'trusted', at, problems, AI_CONFIG_DEFAULTS.trusted)
  const allowPrivateNetwork = readBoolean(record, 'allowPrivateNetwork', at, problems, AI_CONFIG_DEFAULTS.allowPrivateNetwork)
  return {
    name: readString(record, 'name', at, problems, PROVIDER_NAME),
    baseUrl: readBaseUrl(record, at, problems, { isTrusted: trusted, allowPrivateNetwork }),
    apiKey: record.apiKey === undefined ? undefined : readApiKey(record.apiKey, `${at}/apiKey`, problems, sources),
    timeoutMs: readInteger(record, 'timeoutMs', at, problems, { min: 1, max: 600_000, fallback: AI_CONFIG_DEFAULTS.timeoutMs }),
    maxRetries: readInteger(record, 'maxRetries', at, problems, { min: 0, max: 10, fallback: AI_CONFIG_DEFAULTS.maxRetries }),
    trusted,
    allowPrivateNetwork,
  }
}

function readTier(item: unknown, at: string, problems: Problems, providerNames: readonly string[]): AiTierConfig {
  const record = readRecord(item, at, problems) ?? {}
  checkKeys(record, ['name', 'provider', 'model', 'maxTokensCeiling', 'requestsPerMinute', 'tokensPerDay'], at, problems)
  return {
    name: readString(record, 'name', at, problems, TIER_NAME),
    provider: readProviderRef(record, at, problems, providerNames),
    model: readString(record, 'model', at, problems, MODEL),
    maxTokensCeiling: readInteger(record, 'maxTokensCeiling', at, problems, { min: 1, max: 1_000_000 }),
    requestsPerMinute: readInteger(record, 'requestsPerMinute', at, problems, { min: 1, max: 1_000_000 }),
    tokensPerDay: readInteger(record, 'tokensPerDay', at, problems, { min: 1, max: Number.MAX_SAFE_INTEGER }),
  }
}

function readAllowedModel(item: unknown, at: string, problems: Problems, providerNames: readonly string[]): AiAllowedModel {
  const record = readRecord(item, at, problems) ?? {}
  checkKeys(record, ['model', 'provider'], at, problems)
  return { model: readString(record, 'model', at, problems, MODEL), provider: readProviderRef(record, at, problems, providerNames) }
}

function readProviderRef(record: Record<string, unknown>, at: string, problems: Problems, providerNames: readonly string[]): string {
  const name = readString(record, 'provider', at, problems)
  if (name !== '' && providerNames.length > 0 && !providerNames.includes(name)) {
    problems.push({ pointer: `${at}/provider`, message: `"${name}" is not a configured provider; expected one of ${providerNames.join(', ')}` })
  }
  return name
}

function readRedaction(value: unknown, at: string, problems: Problems): AiRedactionConfig {
  if (value === undefined) return { enabled: true, kinds: REDACTION_KINDS }
  const record = readRecord(value, at, problems) ?? {}
  checkKeys(record, ['enabled', 'kinds'], at, problems)
  const enabled = readBoolean(record, 'enabled', at, problems, true)
  if (record.kinds === undefined) return { enabled, kinds: REDACTION_KINDS }
  const kinds = readArray(record.kinds, `${at}/kinds`, problems, { minItems: 0 }).filter((kind, i): kind is RedactionKind => {
    if ((REDACTION_KINDS as readonly unknown[]).includes(kind)) return true
    problems.push({ pointer: `${at}/kinds/${i}`, message: `unknown kind ${JSON.stringify(kind)}; expected one of ${REDACTION_KINDS.join(', ')}` })
    return false
  })
  return { enabled, kinds: [...new Set(kinds)] }
}
