import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { inspect } from 'node:util'
import { AiConfigInvalid, validateAiConfig } from './config.ts'
import type { AiConfigProblem } from './config.ts'

const SECRET = 'sk-live-0123456789abcdefSECRET'
const ENV = { OPENAI_API_KEY: SECRET }

interface Editable {
  providers: Record<string, unknown>[]
  tiers: Record<string, unknown>[]
  [key: string]: unknown
}

function example(): Editable {
  return {
    providers: [
      { name: 'plant-box', baseUrl: 'http://10.20.0.15:8080/v1/', trusted: true, allowPrivateNetwork: true, timeoutMs: 120_000, maxRetries: 1 },
      { name: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: { env: 'OPENAI_API_KEY' }, timeoutMs: 60_000, maxRetries: 2, trusted: false },
    ],
    tiers: [
      { name: 'fast', provider: 'plant-box', model: 'qwen2.5-7b-instruct', maxTokensCeiling: 1024, requestsPerMinute: 60, tokensPerDay: 500_000 },
      { name: 'deep', provider: 'openai', model: 'gpt-4.1', maxTokensCeiling: 4096, requestsPerMinute: 10, tokensPerDay: 200_000 },
    ],
    defaultTier: 'fast',
    allowedModels: [{ model: 'gpt-4.1-mini', provider: 'openai' }],
  }
}

function problemsOf(input: unknown, env: Record<string, string> = ENV): AiConfigProblem[] {
  try {
    validateAiConfig(input, { env })
  } catch (error) {
    assert.ok(error instanceof AiConfigInvalid)
    return [...error.problems]
  }
  assert.fail('the configuration was accepted')
}

function withChange(change: (config: Editable) => void): Editable {
  const config = example()
  change(config)
  return config
}

describe('ai configuration', () => {
  it('the documented example is accepted, with defaults applied and the result frozen', () => {
    const config = validateAiConfig(example(), { env: ENV })
    assert.equal(config.providers[0]?.baseUrl, 'http://10.20.0.15:8080/v1', 'trailing slash removed')
    assert.equal(config.providers[0]?.apiKey, undefined)
    assert.equal(config.providers[1]?.apiKey?.reveal(), SECRET)
    assert.deepEqual(config.redaction, { enabled: true, kinds: ['apiKey', 'cipRoute', 'ip', 'pin'] })
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.providers[1]) && Object.isFrozen(config.tiers))
  })

  it('omitted provider settings take the defaults: 60 s timeout, 2 retries, not trusted', () => {
    const config = validateAiConfig(
      withChange((c) => {
        c.providers[1] = { name: 'openai', baseUrl: 'https://api.openai.com/v1' }
      }),
      { env: {} },
    )
    assert.deepEqual(
      { ...config.providers[1] },
      { name: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: undefined, timeoutMs: 60_000, maxRetries: 2, trusted: false, allowPrivateNetwork: false },
    )
  })

  it('a resolved key prints as [redacted] in JSON, String and inspect', () => {
    const config = validateAiConfig(example(), { env: ENV })
    for (const view of [JSON.stringify(config), String(config.providers[1]?.apiKey), inspect(config, { depth: 10 })]) {
      assert.ok(!view.includes(SECRET))
    }
  })

  it('a key is read from a file, trimmed of its newline', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ai-config-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'openai.key')
    writeFileSync(file, `${SECRET}\n`)
    const config = validateAiConfig(
      withChange((c) => {
        c.providers[1]!.apiKey = { file }
      }),
      { env: {} },
    )
    assert.equal(config.providers[1]?.apiKey?.reveal(), SECRET)
  })

  it('every problem is reported at once, each with its pointer', () => {
    const problems = problemsOf(
      withChange((c) => {
        c.providers[0]!.timeoutMS = 5
        c.providers[1]!.maxRetries = -1
        c.tiers[0]!.provider = 'nowhere'
        c.tiers[1]!.maxTokensCeiling = 0
        c.defaultTier = 'ultra'
      }),
    )
    assert.deepEqual(
      problems.map((p) => p.pointer),
      ['/providers/0/timeoutMS', '/providers/1/maxRetries', '/tiers/0/provider', '/tiers/1/maxTokensCeiling', '/defaultTier'],
    )
    assert.match(problems[0]?.message ?? '', /unknown key/)
    // An unknown key's name is one token of its pointer (RFC 6901), in a union's branch too.
    const escaped = problemsOf(
      withChange((c) => {
        Object.assign(c.providers[0]!, { 'a/b': 1 })
        Object.assign(c.providers[1]!, { apiKey: { env: 'OPENAI_API_KEY', 'c~d': 1 } })
      }),
    )
    assert.deepEqual(
      escaped.map((p) => p.pointer),
      ['/providers/0/a~1b', '/providers/1/apiKey/c~0d'],
    )
    assert.match(problems[1]?.message ?? '', /integer from 0 to 10, got -1/)
    assert.match(problems[2]?.message ?? '', /"nowhere" is not a configured provider; expected one of plant-box, openai/)
    assert.match(problems[4]?.message ?? '', /"ultra" is not a tier; expected one of fast, deep/)
  })

  it('a missing env variable or unreadable file is named, never its content', () => {
    assert.deepEqual(problemsOf(example(), {}), [{ pointer: '/providers/1/apiKey', message: 'environment variable OPENAI_API_KEY is not set or empty' }])
    const [problem] = problemsOf(
      withChange((c) => {
        c.providers[1]!.apiKey = { file: '/nonexistent/openai.key' }
      }),
    )
    assert.deepEqual(problem, { pointer: '/providers/1/apiKey/file', message: 'cannot read /nonexistent/openai.key (ENOENT)' })
  })

  it('a key with a space or newline inside is refused without showing it', () => {
    const problems = problemsOf(example(), { OPENAI_API_KEY: 'sk-abc def' })
    assert.equal(problems[0]?.message, 'the key in environment variable OPENAI_API_KEY contains spaces, control or non-ASCII characters')
    assert.ok(!JSON.stringify(problems).includes('sk-abc'))
  })

  it('apiKey must name exactly one of env or file', () => {
    const [problem] = problemsOf(
      withChange((c) => {
        c.providers[1]!.apiKey = { env: 'A', file: '/k' }
      }),
    )
    assert.equal(problem?.pointer, '/providers/1/apiKey')
    assert.match(problem?.message ?? '', /must be \{ "env": "VAR_NAME" \} or \{ "file": "\/absolute\/path" \}/)
  })

  it('an untrusted provider over plain http (not loopback) is refused; a trusted one on the plant LAN is fine', () => {
    const [problem] = problemsOf(
      withChange((c) => {
        c.providers[1]!.baseUrl = 'http://api.example.com/v1'
      }),
    )
    assert.deepEqual(problem, { pointer: '/providers/1/baseUrl', message: 'must use https for a provider that is not trusted (only loopback may use http)' })
    assert.doesNotThrow(() =>
      validateAiConfig(
        withChange((c) => {
          c.providers[1]!.baseUrl = 'http://127.0.0.1:9000/v1'
          c.providers[1]!.allowPrivateNetwork = true
        }),
        { env: ENV },
      ),
    )
  })

  it('SSRF: loopback, private, link-local, CGNAT and metadata base URLs are refused unless allowPrivateNetwork is true', () => {
    const internal = [
      'http://127.0.0.1:8080/v1',
      'http://localhost:11434/v1',
      'http://10.20.0.15/v1',
      'http://172.16.4.2/v1',
      'http://192.168.1.9/v1',
      'http://169.254.169.254/latest',
      'http://100.64.0.1/v1',
      'http://0.0.0.0/v1',
      'http://[::1]/v1',
      'http://[fd00:ec2::254]/v1',
      'http://[fe80::1]/v1',
      'http://[::ffff:10.0.0.1]/v1',
      'http://2130706433/v1',
      'http://0x7f.0.0.1/v1',
      'http://metadata.google.internal/v1',
    ]
    for (const baseUrl of internal) {
      const problems = problemsOf(
        withChange((c) => {
          c.providers[0] = { name: 'plant-box', baseUrl, trusted: true }
        }),
      )
      assert.equal(problems[0]?.pointer, '/providers/0/baseUrl', baseUrl)
      assert.match(problems[0]?.message ?? '', /allowPrivateNetwork/, baseUrl)
      assert.doesNotThrow(
        () =>
          validateAiConfig(
            withChange((c) => {
              c.providers[0] = { name: 'plant-box', baseUrl, trusted: true, allowPrivateNetwork: true }
            }),
            { env: ENV },
          ),
        baseUrl,
      )
    }
    for (const baseUrl of ['https://api.openai.com/v1', 'https://8.8.8.8/v1', 'https://172.32.0.1/v1', 'https://[2001:db8::1]/v1']) {
      assert.doesNotThrow(
        () =>
          validateAiConfig(
            withChange((c) => {
              c.providers[1]!.baseUrl = baseUrl
            }),
            { env: ENV },
          ),
        baseUrl,
      )
    }
  })

  it('a base URL with credentials or ending in /chat/completions is refused with the reason', () => {
    const messages = ['https://user:pw@api.example.com/v1', 'https://api.openai.com/v1/chat/completions', 'ftp://x/v1', 'not a url'].map(
      (baseUrl) =>
        problemsOf(
          withChange((c) => {
            c.providers[1]!.baseUrl = baseUrl
          }),
        )[0]?.message,
    )
    assert.deepEqual(messages, [
      'must not contain a user name or password; use apiKey',
      'must stop before /chat/completions (e.g. https://api.openai.com/v1)',
      'must use http or https, got ftp:',
      'must be an absolute URL such as https://api.openai.com/v1',
    ])
  })

  it('duplicate names, bad tier names and unknown redaction kinds are reported', () => {
    const problems = problemsOf(
      withChange((c) => {
        c.providers.push({ ...c.providers[0] })
        c.tiers[1]!.name = 'Deep Thought'
        c.redaction = { kinds: ['ip', 'mac'] }
      }),
    )
    assert.deepEqual(
      problems.map((p) => p.pointer),
      ['/providers/2/name', '/tiers/1/name', '/redaction/kinds/1'],
    )
    assert.match(problems[0]?.message ?? '', /"plant-box" is used more than once/)
    assert.match(problems[2]?.message ?? '', /unknown kind "mac"; expected one of apiKey, cipRoute, ip, pin/)
  })

  it('an allowed model must name a configured provider', () => {
    const [problem] = problemsOf(
      withChange((c) => {
        c.allowedModels = [{ model: 'x', provider: 'anthropic' }]
      }),
    )
    assert.equal(problem?.pointer, '/allowedModels/0/provider')
  })

  it('the whole problem list reads in the error message', () => {
    assert.throws(
      () => validateAiConfig({}, { env: {} }),
      (error: unknown) => {
        assert.ok(error instanceof AiConfigInvalid)
        assert.match(error.message, /\/providers: is required \(an array\)/)
        assert.match(error.message, /\/defaultTier: is required/)
        return true
      },
    )
  })
})
