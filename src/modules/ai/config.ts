import { Ajv } from 'ajv'
import { Value } from 'typebox/value'
import { checkBaseUrl, resolveApiKey } from './config-provider.ts'
import { inDocumentOrder, isRecord, schemaProblems, uniqueProblems } from './config-checks.ts'
import type { AiConfigProblem, Problems } from './config-checks.ts'
import {
  AI_CONFIG_DEFAULTS,
  AiAllowedModelSchema,
  AiConfigInputSchema,
  AiProviderInputSchema,
  AiTierSchema,
  ApiKeySourceSchema,
  type AiConfig,
  type AiConfigInput,
  type AiProviderConfig,
} from './config-schema.ts'
import { REDACTION_KINDS } from './redact.ts'
import type { Secret } from './secret.ts'

export * from './config-schema.ts'

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
  problems.push(
    ...uniqueProblems(
      allowedModels.map((m) => nameOf(m, 'model')),
      '/allowedModels',
      'model',
    ),
  )
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
function checkProvider(
  record: Record<string, unknown>,
  at: string,
  problems: Problems,
  sources: AiConfigSources,
): { baseUrl: string; apiKey: Secret | undefined } {
  const flag = (key: 'trusted' | 'allowPrivateNetwork') => (typeof record[key] === 'boolean' ? record[key] : AI_CONFIG_DEFAULTS[key])
  const baseUrl =
    typeof record.baseUrl === 'string' && record.baseUrl !== ''
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
