import type { AiConfig, AiProviderConfig, AiTierConfig } from './config.ts'
import { AiModelNotAllowed, AiTierUnknown } from './errors.ts'

/** Where one request goes and how many tokens it may ask for. */
export interface AiTarget {
  /** The tier whose limits apply (the requested one, or `defaultTier`), even when a model was chosen explicitly. */
  readonly tier: AiTierConfig
  readonly provider: AiProviderConfig
  readonly model: string
  /** The request's `maxTokens` clamped to 1..tier.maxTokensCeiling; the ceiling when none was asked for. */
  readonly maxTokens: number
}

export interface AiChoice {
  readonly tier?: string | null
  readonly model?: string | null
  readonly maxTokens?: number | null
}

/**
 * Resolves spec §4.4's `tier`, `model` and `maxTokens`. An explicit model must be in `allowedModels` and goes to
 * the provider listed there. Throws AiTierUnknown or AiModelNotAllowed (400).
 */
export function chooseTarget(config: AiConfig, choice: AiChoice): AiTarget {
  const tierName = choice.tier ?? config.defaultTier
  const tier = config.tiers.find((t) => t.name === tierName)
  if (tier === undefined) throw new AiTierUnknown(tierName)
  let providerName = tier.provider
  let model = tier.model
  if (choice.model !== undefined && choice.model !== null) {
    const allowed = config.allowedModels.find((m) => m.model === choice.model)
    if (allowed === undefined) throw new AiModelNotAllowed(choice.model)
    providerName = allowed.provider
    model = allowed.model
  }
  const provider = config.providers.find((p) => p.name === providerName)
  // validateAiConfig guarantees every reference; reaching this is a programming error, not bad input.
  if (provider === undefined) throw new Error(`AI provider ${providerName} is referenced but not configured`)
  const asked = choice.maxTokens ?? tier.maxTokensCeiling
  return { tier, provider, model, maxTokens: Math.min(Math.max(1, asked), tier.maxTokensCeiling) }
}
