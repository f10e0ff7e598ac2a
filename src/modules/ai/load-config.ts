import { readFileSync } from 'node:fs'
import { ConfigInvalid } from '../../config/load.ts'
import type { Config } from '../../config/schema.ts'
import { AiConfigInvalid, validateAiConfig } from './config.ts'
import type { AiConfig } from './config.ts'

/**
 * Reads and validates `SITEGRID_AI_CONFIG_FILE` once, at start-up; undefined when it is not set (AI off).
 * Throws ConfigInvalid listing every problem by JSON pointer (never a key), so that `serve` stops before it
 * listens, with the configuration exit code.
 */
export function loadAiConfig(config: Config): AiConfig | undefined {
  const path = config.aiConfigFile
  if (path === undefined) return undefined
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'is not JSON' : `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`
    throw new ConfigInvalid([`SITEGRID_AI_CONFIG_FILE: ${path} ${reason}`])
  }
  // `apiKey: { env }` is resolved through the configuration's reader: process.env is read only in src/config.
  const env = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get: (_target, name) => (typeof name === 'string' ? config.readEnv(name) : undefined),
    },
  )
  try {
    return validateAiConfig(raw, { env })
  } catch (error) {
    if (!(error instanceof AiConfigInvalid)) throw error
    throw new ConfigInvalid(error.problems.map((p) => `SITEGRID_AI_CONFIG_FILE ${path}${p.pointer || ''}: ${p.message}`))
  }
}
