import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import { ConfigInvalid } from '../../config/load.ts'
import type { Config } from '../../config/schema.ts'
import { loadAiConfig } from './load-config.ts'

const KEY = 'sk-live-loadconfig-0123456789'

function write(t: TestContext, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-ai-config-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'ai.json')
  writeFileSync(file, content)
  return file
}

const configFor = (file: string | undefined, env: Record<string, string> = {}) =>
  ({ aiConfigFile: file, readEnv: (name: string) => env[name] }) as unknown as Config

const VALID = {
  providers: [{ name: 'cloud', baseUrl: 'https://api.example.com/v1', apiKey: { env: 'AI_KEY' } }],
  tiers: [{ name: 'fast', provider: 'cloud', model: 'm', maxTokensCeiling: 100, requestsPerMinute: 10, tokensPerDay: 1000 }],
  defaultTier: 'fast',
}

describe('ai configuration file (SITEGRID_AI_CONFIG_FILE)', () => {
  it('unset: AI is off (undefined), nothing is read', () => {
    assert.equal(loadAiConfig(configFor(undefined)), undefined)
  })

  it('a valid file is loaded with the key taken from the environment through the configuration reader', (t) => {
    const ai = loadAiConfig(configFor(write(t, JSON.stringify(VALID)), { AI_KEY: KEY }))
    assert.equal(ai?.providers[0]?.apiKey?.reveal(), KEY)
  })

  it('an unreadable, non-JSON or invalid file stops start-up with ConfigInvalid naming each problem, never the key', (t) => {
    const cases: Array<[string, RegExp]> = [
      ['{ not json', /SITEGRID_AI_CONFIG_FILE: .* is not JSON/],
      [
        JSON.stringify({ ...VALID, providers: [{ ...VALID.providers[0], baseUrl: 'http://169.254.169.254/v1', trusted: true }] }),
        /\/providers\/0\/baseUrl: .*allowPrivateNetwork/,
      ],
      [JSON.stringify({ ...VALID, defaultTier: 'deep' }), /\/defaultTier: "deep" is not a tier/],
    ]
    for (const [content, pattern] of cases) {
      assert.throws(
        () => loadAiConfig(configFor(write(t, content), { AI_KEY: KEY })),
        (error: unknown) => {
          assert.ok(error instanceof ConfigInvalid)
          assert.match(error.message, pattern)
          assert.ok(!error.message.includes(KEY))
          return true
        },
      )
    }
    assert.throws(() => loadAiConfig(configFor('/nonexistent/ai.json')), /cannot be read \(ENOENT\)/)
    assert.throws(() => loadAiConfig(configFor(write(t, JSON.stringify(VALID)))), /environment variable AI_KEY is not set/)
  })
})
