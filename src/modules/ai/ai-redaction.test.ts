import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { CLOUD_KEY, setUpAi } from './route-test-setup.ts'

const SECRET_PROMPT = 'PLC 10.10.4.21 (route 2,10.10.4.21,1,0) faults after login with PIN 582019 and key csk_Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF'

for (const dialect of testDialects()) {
  describe(`${dialect}: AI completion: redaction, access and logging`, () => {
    it('a provider outside the trusted hosts gets IPs, CIP routes, keys and PINs redacted, with the counts in the response', async (t) => {
      const { cloud, ask } = await setUpAi(t, dialect)
      const res = await ask({ prompt: SECRET_PROMPT, systemPrompt: 'Gateway 192.168.7.1 serves the line.', tier: 'deep' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json().redactions, { ip: 2, cipRoute: 1, apiKey: 1, pin: 1, total: 5 })
      assert.deepEqual(cloud.requests[0]?.body?.messages, [
        { role: 'system', content: 'Gateway [IP] serves the line.' },
        { role: 'user', content: 'PLC [IP] (route [CIP_ROUTE]) faults after login with PIN [PIN] and key [API_KEY]' },
      ])
      assert.equal(cloud.requests[0]?.headers.authorization, `Bearer ${CLOUD_KEY}`, 'the credential from env goes in Authorization')
    })

    it('a trusted on-premise provider gets the prompt as written, and no Authorization header', async (t) => {
      const { box, ask } = await setUpAi(t, dialect)
      const res = await ask({ prompt: SECRET_PROMPT })
      assert.equal(res.json().redactions.total, 0)
      assert.deepEqual(box.requests[0]?.body?.messages, [{ role: 'user', content: SECRET_PROMPT }])
      assert.equal(box.requests[0]?.headers.authorization, undefined)
    })

    it('redaction switched off in the configuration sends the prompt as written, even off site', async (t) => {
      const { cloud, ask } = await setUpAi(t, dialect, (c) => {
        c.redaction = { enabled: false }
      })
      const res = await ask({ prompt: SECRET_PROMPT, tier: 'deep' })
      assert.equal(res.json().redactions.total, 0)
      assert.deepEqual(cloud.requests[0]?.body?.messages, [{ role: 'user', content: SECRET_PROMPT }])
    })
  })
}
