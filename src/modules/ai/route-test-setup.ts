// Shared set-up of the AI route tests: a whole app over a real database, with two loopback OpenAI-compatible
// servers (an on-premise box, trusted, and a cloud provider that wants a key) named in an AI config file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { startFakeOpenAi } from '../../../test/support/fake-openai.ts'
import type { FakeOpenAi } from '../../../test/support/fake-openai.ts'
import { harness, sleep } from '../../../test/harness.ts'
import type { Harness, TestDialect } from '../../../test/harness.ts'
import type { Org } from '../../identity.ts'

export const CLOUD_KEY = 'sk-cloud-9d8c7b6a5f4e3d2c1b0aZZ'

export interface AiSetUp {
  h: Harness
  box: FakeOpenAi
  cloud: FakeOpenAi
  org: Org
  /** A member key of `org`. */
  key: string
  /** An owner key of `org`. */
  ownerKey: string
  ask(payload: unknown, credential?: { org: Org; apiKey: string }): ReturnType<Harness['inject']>
  usageRows(org?: Org): Promise<Array<Record<string, unknown>>>
  /** The usage rows once none is pending: a stream's row is finished just after its last byte is sent. */
  settledRows(org?: Org): Promise<Array<Record<string, unknown>>>
}

export type ConfigEdit = (config: Record<string, any>) => void // eslint-disable-line @typescript-eslint/no-explicit-any

export function baseAiConfig(box: FakeOpenAi, cloud: FakeOpenAi): Record<string, unknown> {
  return {
    providers: [
      { name: 'box', baseUrl: box.baseUrl, trusted: true, allowPrivateNetwork: true, timeoutMs: 5_000, maxRetries: 1 },
      { name: 'cloud', baseUrl: cloud.baseUrl, apiKey: { env: 'CLOUD_AI_KEY' }, allowPrivateNetwork: true, timeoutMs: 5_000, maxRetries: 0 },
      { name: 'slowbox', baseUrl: box.baseUrl, trusted: true, allowPrivateNetwork: true, timeoutMs: 300, maxRetries: 0 },
    ],
    tiers: [
      { name: 'fast', provider: 'box', model: 'qwen-local', maxTokensCeiling: 512, requestsPerMinute: 100, tokensPerDay: 1_000_000 },
      { name: 'deep', provider: 'cloud', model: 'gpt-cloud', maxTokensCeiling: 1024, requestsPerMinute: 100, tokensPerDay: 1_000_000 },
      { name: 'hasty', provider: 'slowbox', model: 'qwen-local', maxTokensCeiling: 64, requestsPerMinute: 100, tokensPerDay: 1_000_000 },
    ],
    defaultTier: 'fast',
    allowedModels: [{ model: 'gpt-mini', provider: 'cloud' }],
  }
}

export async function setUpAi(t: TestContext, dialect: TestDialect, edit: ConfigEdit = () => undefined, env: Record<string, string> = {}): Promise<AiSetUp> {
  const box = await startFakeOpenAi()
  const cloud = await startFakeOpenAi({ apiKey: CLOUD_KEY })
  t.after(async () => {
    await box.close()
    await cloud.close()
  })
  const dir = mkdtempSync(join(tmpdir(), 'sitegrid-ai-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const config = baseAiConfig(box, cloud)
  edit(config)
  const file = join(dir, 'ai.json')
  writeFileSync(file, JSON.stringify(config))
  const h = await harness(t, dialect, { SITEGRID_AI_CONFIG_FILE: file, CLOUD_AI_KEY: CLOUD_KEY, ...env })
  const { org, key: ownerKey } = await h.orgWithKey('owner')
  const { plaintext: key } = await h.mintKey(org, 'member')
  const usageRows = async (of = org) =>
    h.handle.db.selectFrom('ai_usage').selectAll().where('org_id', '=', of.id).orderBy('at').orderBy('id').execute() as unknown as Promise<
      Array<Record<string, unknown>>
    >
  const settledRows = async (of = org) => {
    for (let waited = 0; ; waited += 20) {
      const rows = await usageRows(of)
      if (!rows.some((r) => r.status === 'pending') || waited >= 5_000) return rows
      await sleep(20)
    }
  }
  return {
    h,
    box,
    cloud,
    org,
    key,
    ownerKey,
    usageRows,
    settledRows,
    ask: (payload, credential = { org, apiKey: key }) =>
      h.inject(credential, { method: 'POST', url: '/api/ai/complete', payload: payload as Record<string, unknown> }),
  }
}

export interface SseEvent {
  event: string
  data: Record<string, unknown>
}

/** Splits a text/event-stream body into its events (each `data` is one JSON line). */
export function parseSse(body: string): SseEvent[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n')
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message'
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n')
      return { event, data: JSON.parse(data) as Record<string, unknown> }
    })
}
